package changefeed_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
)

// feedCounter counts the change-feed reads of a watched container, the
// items they returned and the Request Units they cost.
type feedCounter struct {
	store.Container
	mu    sync.Mutex
	reads int
	items int
	ru    float64
}

func (c *feedCounter) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	p, err := c.Container.ReadChangeFeed(ctx, r, continuation, maxItems)
	c.mu.Lock()
	c.reads++
	c.items += len(p.Items)
	c.ru += p.RequestCharge
	c.mu.Unlock()
	return p, err
}

// feedCost is what a run read from the change feed.
type feedCost struct {
	reads, items int
	ru           float64
}

func (c *feedCounter) totals() feedCost {
	c.mu.Lock()
	defer c.mu.Unlock()
	return feedCost{c.reads, c.items, c.ru}
}

// TestStartFromNowReadsNoHistory: new leases with StartFromNow are placed
// at the present without reading the feed's history: until every lease
// has reached the end, no read returns an item, and the reads cost one
// empty page per lease (its loop's first read).
func TestStartFromNowReadsNoHistory(t *testing.T) {
	st := newStore(t)
	writeThings(t, st, "old", 100)
	cost, leases := startFromNow(t, st, "now")
	if cost.items != 0 || cost.ru > float64(leases) {
		t.Errorf("%d new leases read %d items for %v RU in %d reads, want no item and at most %d RU: the history was read",
			leases, cost.items, cost.ru, cost.reads, leases)
	}
}

// startFromNow runs a new processor with StartFromNow until each of its
// leases has reached the end of its feed range (PollEvery is an hour, so
// no lease loop polls twice) and returns what it read from the change
// feed, and its lease count.
func startFromNow(tb testing.TB, st store.Store, name string) (feedCost, int) {
	tb.Helper()
	watched := &feedCounter{Container: st.Container(store.ProductsContainer)}
	cfg := changefeed.Config{
		Name: name, Watched: store.ProductsContainer, Instance: "a",
		PollEvery: time.Hour, StartFromNow: true,
	}
	p, err := changefeed.NewProcessor(watched, st.Container(store.LeasesContainer),
		func(context.Context, changefeed.Batch) error { return nil }, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	n := 0
	eventually(tb, 30*time.Second, "every lease at the end of its feed", func() (bool, string) {
		leases, err := p.Status(context.Background())
		if err != nil {
			return false, err.Error()
		}
		for _, l := range leases {
			if l.Owner == "" || l.LagEstimate != 0 {
				return false, fmt.Sprintf("%+v", leases)
			}
		}
		n = len(leases)
		return n > 0, fmt.Sprintf("%+v", leases)
	})
	if err := p.Stop(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return watched.totals(), n
}

// BenchmarkStartFromNow measures what a new processor with StartFromNow
// reads from a container of n items until every lease has reached the
// end of its feed range: the reads that place its leases (a FeedFromNow
// read counts as one, though it returns nothing), then one read per lease
// loop.
//
//	go test -run '^$' -bench StartFromNow -benchtime 3x ./feedworkers/changefeed/
func BenchmarkStartFromNow(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			st := newStore(b)
			writeThings(b, st, "t", n)
			b.ResetTimer()
			var sum feedCost
			for i := range b.N {
				c, _ := startFromNow(b, st, fmt.Sprintf("now-%d", i))
				sum.reads += c.reads
				sum.items += c.items
				sum.ru += c.ru
			}
			b.ReportMetric(float64(sum.reads)/float64(b.N), "reads/op")
			b.ReportMetric(float64(sum.items)/float64(b.N), "items/op")
			b.ReportMetric(sum.ru/float64(b.N), "RU/op")
		})
	}
}
