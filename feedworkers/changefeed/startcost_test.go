package changefeed_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"shop/feedworkers/changefeed"
	"shop/store"
)

// feedCounter counts the change-feed reads of a watched container and the
// Request Units they cost.
type feedCounter struct {
	store.Container
	mu    sync.Mutex
	reads int
	ru    float64
}

func (c *feedCounter) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	p, err := c.Container.ReadChangeFeed(ctx, r, continuation, maxItems)
	c.mu.Lock()
	c.reads++
	c.ru += p.RequestCharge
	c.mu.Unlock()
	return p, err
}

func (c *feedCounter) totals() (int, float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads, c.ru
}

// BenchmarkStartFromNow measures what a new processor with StartFromNow
// reads from a container of n items until every lease has reached the
// end of its feed range: the reads that place its leases, then one read
// per lease loop (PollEvery is an hour, so no loop polls twice).
//
//	go test -run '^$' -bench StartFromNow -benchtime 3x ./feedworkers/changefeed/
func BenchmarkStartFromNow(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			st := newStore(b)
			for i := range n {
				writeThing(b, st, fmt.Sprintf("t-%05d", i))
			}
			b.ResetTimer()
			var reads int
			var ru float64
			for i := range b.N {
				watched := &feedCounter{Container: st.Container(store.ProductsContainer)}
				cfg := changefeed.Config{
					Name: fmt.Sprintf("now-%d", i), Watched: store.ProductsContainer, Instance: "a",
					PollEvery: time.Hour, StartFromNow: true,
				}
				p, err := changefeed.NewProcessor(watched, st.Container(store.LeasesContainer),
					func(context.Context, changefeed.Batch) error { return nil }, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				eventually(b, 30*time.Second, "every lease at the end of its feed", func() (bool, string) {
					leases, err := p.Status(context.Background())
					if err != nil {
						return false, err.Error()
					}
					for _, l := range leases {
						if l.Owner == "" || l.LagEstimate != 0 {
							return false, fmt.Sprintf("%+v", leases)
						}
					}
					return len(leases) > 0, fmt.Sprintf("%+v", leases)
				})
				if err := p.Stop(context.Background()); err != nil {
					b.Fatal(err)
				}
				r, u := watched.totals()
				reads += r
				ru += u
			}
			b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
			b.ReportMetric(ru/float64(b.N), "RU/op")
		})
	}
}
