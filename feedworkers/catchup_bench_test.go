package feedworkers_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// BenchmarkCatchUp measures the workers reading the whole change feed of
// a freshly loaded sample (products, as many reviews, as many users with
// an open cart) from the beginning, as a new deployment over an existing
// database does: from Start to every lease of every processor at the end
// of its feed. The copies Sample wrote are already true, so this is the
// cost of finding that out. Every commit is synced, as `shop serve` runs.
// With start=now the leases are created with StartFromNow instead: the
// time is then that of finding the end of each feed range.
//
//	go test -run '^$' -bench CatchUp -benchtime 1x -timeout 30m ./feedworkers/
func BenchmarkCatchUp(b *testing.B) {
	for _, n := range []int{2_000, 10_000} {
		for _, fromNow := range []bool{false, true} {
			start := "beginning"
			if fromNow {
				start = "now"
			}
			b.Run(fmt.Sprintf("products=%d/start=%s", n, start), func(b *testing.B) {
				var elapsed time.Duration
				var ru float64
				for range b.N {
					d, spent := catchUp(b, n, fromNow)
					elapsed += d
					ru += spent
				}
				b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/catchup")
				b.ReportMetric(ru/float64(b.N), "RU/catchup")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

func catchUp(b *testing.B, n int, fromNow bool) (time.Duration, float64) {
	b.StopTimer()
	st := openStoreWith(b, embedded.Options{})
	ctx := context.Background()
	if _, err := sample.Load(ctx, st, sample.Options{Products: n, Reviews: n, Users: n}); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var ru float64
	cfg := workersConfig("catchup")
	cfg.Processor.StartFromNow = fromNow
	cfg.OnBatch = func(_ context.Context, _, _ string, _ int, batchRU float64, _ error) {
		mu.Lock()
		ru += batchRU
		mu.Unlock()
	}
	b.StartTimer()
	start := time.Now()
	w, err := feedworkers.Start(ctx, st, writes.New(repo.New(store.Metered(st), 0), nil, nil), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop(ctx)
	for !caughtUp(b, w) {
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	return elapsed, ru
}

// caughtUp reports whether every lease has read its feed to the end and
// checkpointed the last batch (its lag drops to 0 only then).
func caughtUp(tb testing.TB, w *feedworkers.Workers) bool {
	st, err := w.FeedStatus(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range st {
		for _, l := range p.Leases {
			if l.LagEstimate != 0 {
				return false
			}
		}
	}
	return true
}

// BenchmarkReviewOnlyChange measures what the products handler spends on
// a product write that changed only its review stats (the write
// ReviewsToProducts makes for every new review), in a category of a
// 2,000-product sample with 2,000 open carts: store operations and
// Request Units per change. No cart line and no category count can change.
//
//	go test -run '^$' -bench ReviewOnlyChange -benchtime 20x ./feedworkers/
func BenchmarkReviewOnlyChange(b *testing.B) {
	const n = 2_000
	st := newStore(b)
	ctx := context.Background()
	if _, err := sample.Load(ctx, st, sample.Options{Products: n, Reviews: n, Users: n}); err != nil {
		b.Fatal(err)
	}
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	const id = "p-0001"
	change := func() (ops int, ru float64) {
		p, err := repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
			p.ReviewStats.Count++
			p.Version++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		mctx, m := store.WithMeter(ctx)
		if err := h.Products(mctx, changefeed.Batch{Items: [][]byte{raw(b, st, store.ProductsContainer, p.ID, p.ID)}}); err != nil {
			b.Fatal(err)
		}
		ops, ru, _ = m.Totals()
		return ops, ru
	}
	// The first change after creation may fan out once; measure the
	// steady state.
	change()
	var ops int
	var ru float64
	b.ResetTimer()
	for range b.N {
		o, r := change()
		ops += o
		ru += r
	}
	b.StopTimer()
	b.ReportMetric(float64(ops)/float64(b.N), "ops/change")
	b.ReportMetric(ru/float64(b.N), "RU/change")
}
