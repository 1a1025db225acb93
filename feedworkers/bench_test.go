package feedworkers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// BenchmarkPriceFanout measures one price change fanned out by the
// running workers to 10,000 open carts on the embedded store: from the
// admin's product write to the last cart written. It reports the carts
// updated per second and the Request Units the products feed spent,
// with every commit synced to disk (as `shop serve` runs) and without.
//
//	go test -run '^$' -bench PriceFanout -benchtime 3x ./feedworkers/
func BenchmarkPriceFanout(b *testing.B) {
	b.Run("fsync", func(b *testing.B) { benchmarkPriceFanout(b, embedded.Options{}) })
	b.Run("nosync", func(b *testing.B) { benchmarkPriceFanout(b, embedded.Options{NoSync: true}) })
}

func benchmarkPriceFanout(b *testing.B, opts embedded.Options) {
	const carts = 10_000
	st := openStoreWith(b, opts)
	repos := repo.New(st, 0)
	p := createProduct(b, repos, "p1", "coffee", 1000)
	for i := range carts {
		addToCart(b, repos, userID(i), p, 1)
	}

	var mu sync.Mutex
	var ru float64
	var batches int
	cfg := workersConfig("bench")
	cfg.OnBatch = func(_ context.Context, processor, _ string, _ int, batchRU float64, err error) {
		if processor == feedworkers.ProductsProcessor {
			mu.Lock()
			ru += batchRU
			if err == nil {
				batches++
			}
			mu.Unlock()
		}
	}
	done := func() int {
		mu.Lock()
		defer mu.Unlock()
		return batches
	}
	w, err := feedworkers.Start(context.Background(), st, writes.New(repo.New(store.Metered(st), 0), nil, nil), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop(context.Background())
	wait := func(cond func() bool) {
		for !cond() {
			time.Sleep(time.Millisecond)
		}
	}
	// The setup's writes are on the feed too (the product's creation may
	// come in more than one batch): let every lease catch up before timing,
	// so no setup batch is counted as a price change's.
	wait(func() bool { return productsCaughtUp(b, w) })
	base, baseBatches := w.Handlers().FanoutStats(), done()
	mu.Lock()
	ru = 0
	mu.Unlock()

	b.ResetTimer()
	var elapsed time.Duration
	for i := range b.N {
		start := time.Now()
		setPrice(b, repos, "p1", int64(1001+i))
		wait(func() bool { return w.Handlers().FanoutStats().CartsUpdated >= base.CartsUpdated+(i+1)*carts })
		elapsed += time.Since(start)
		// The change has converged; its batch's Request Units are
		// reported just after, when the handler returns.
		b.StopTimer()
		wait(func() bool { return done() >= baseBatches+i+1 })
		b.StartTimer()
	}
	b.StopTimer()
	stats := w.Handlers().FanoutStats()
	mu.Lock()
	spent := ru
	mu.Unlock()
	b.ReportMetric(float64(b.N*carts)/elapsed.Seconds(), "carts/s")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/converge")
	b.ReportMetric(spent/float64(b.N), "RU/change")
	b.ReportMetric((stats.QueryRU-base.QueryRU)/float64(b.N), "queryRU/change")
}

// productsCaughtUp reports whether every lease of the products processor
// has read its feed range to the end.
func productsCaughtUp(tb testing.TB, w *feedworkers.Workers) bool {
	st, err := w.FeedStatus(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range st {
		if p.Processor != feedworkers.ProductsProcessor {
			continue
		}
		for _, l := range p.Leases {
			if l.LagEstimate != 0 {
				return false
			}
		}
		return len(p.Leases) > 0
	}
	return false
}
