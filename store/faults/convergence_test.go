package faults_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestFeedWorkersConvergeThroughFaults runs the feed workers on a store
// failing 20% of every kind of call (leases included), changes a price
// held in many carts, heals the store and waits for every cart line to
// reach the new price: the processor retries, never checkpoints a batch
// that failed, and loses no change (Cosmos change feed: at least once).
func TestFeedWorkersConvergeThroughFaults(t *testing.T) {
	const carts = 60
	ctx := t.Context()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(ctx, st, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The test writes through the healthy store: the faults are the
	// workers' alone.
	repos := repo.New(st, 0)
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	p, err := repos.Products.Create(ctx, domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Beans", CategoryID: "coffee",
		CategoryName: "Coffee", PriceCents: 1000, Currency: "USD", PriceVersion: 1, Version: 1, LastUpdated: now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range carts {
		if _, err := repos.Carts.Update(ctx, fmt.Sprintf("u%03d", i), "", func(c *domain.Cart) error {
			return c.SetQuantity(p, "", 1+i%3, now)
		}); err != nil {
			t.Fatal(err)
		}
	}

	// The workers start on a healthy store (Start gives up on its first
	// failed call: a process that cannot start is restarted), then the
	// store breaks under them.
	f := faults.Wrap(st, faults.Config{Seed: 20, Rules: []faults.Rule{{Throttle: 0.1, Unavailable: 0.1}},
		RetryAfter: time.Millisecond, Disabled: true})
	wk, err := feedworkers.Start(ctx, f, writes.New(repo.New(store.Metered(f), 0), nil, nil), feedworkers.Config{Processor: changefeed.Config{Instance: "w1", LeaseExpiry: 2 * time.Second,
		RenewEvery: 100 * time.Millisecond, PollEvery: 5 * time.Millisecond, Backoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wk.Stop(context.Background()) })
	var injected faults.Counts
	for round := 1; round <= 3; round++ {
		// Each round breaks the store, changes the price, lets the workers
		// meet a good number of faults, heals the store and waits for every
		// cart to reach the new price. Later rounds prove no lease was left
		// stuck by a failure in an earlier one.
		f.Break()
		before := f.Counts()
		cents := 1000 + int64(round)*100
		if _, err := repos.Products.Update(ctx, "p1", "", func(p *domain.Product) error {
			p.Apply(domain.ProductChange{PriceCents: &cents}, time.Now())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for f.Counts().Injected()-before.Injected() < 50 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		f.Heal()
		eventuallyAt(t, repos, carts, cents)
		injected = f.Counts()
	}
	status, err := wk.FeedStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range status {
		for _, l := range ps.Leases {
			if l.DeadLetters != 0 {
				t.Errorf("%s lease %s parked %d documents: a transient fault is not a poison document", ps.Processor, l.Lease, l.DeadLetters)
			}
		}
	}
	t.Logf("%d carts converged 3 times; %d store calls under faults, %d failed (%d throttled, %d unavailable)",
		carts, injected.Calls, injected.Injected(), injected.Throttled, injected.Unavailable)
}

// eventuallyAt waits until all n carts holding p1 carry its current
// price version at cents.
func eventuallyAt(t *testing.T, repos *repo.Set, n int, cents int64) {
	t.Helper()
	ctx := t.Context()
	want, err := repos.Products.Get(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		at, cont := 0, ""
		for {
			cs, next, err := repos.Carts.WithProduct(ctx, "p1", store.MaxQueryPageSize, cont)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if l, _ := c.Line("p1", ""); l.PriceVersion == want.PriceVersion && l.UnitPriceCents == cents {
					at++
				}
			}
			if next == "" {
				break
			}
			cont = next
		}
		if at == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d carts at price version %d, 15 s after healing", at, n, want.PriceVersion)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
