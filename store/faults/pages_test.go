package faults_test

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestCrossPartitionReadersReadPastShortPages: the shop's two
// cross-partition readers, the price fan-out over carts and the sweeper
// over orders in progress, keep reading while a continuation follows, so
// pages of 3 (a Cosmos container of several physical partitions may
// return fewer items than asked) lose nothing.
func TestCrossPartitionReadersReadPastShortPages(t *testing.T) {
	const n = 25
	ctx := t.Context()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(ctx, st, io.Discard); err != nil {
		t.Fatal(err)
	}
	repos := repo.New(st, 0)
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	p, err := repos.Products.Create(ctx, domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Beans", CategoryID: "coffee",
		CategoryName: "Coffee", PriceCents: 1000, Currency: "USD", PriceVersion: 1, Version: 1, LastUpdated: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Inventory.CreateStock(ctx, domain.NewStock("p1", "", 1000, now)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		user := fmt.Sprintf("u%03d", i)
		if _, err := repos.Carts.Update(ctx, user, "", func(c *domain.Cart) error { return c.SetQuantity(p, "", 1, now) }); err != nil {
			t.Fatal(err)
		}
		// A checkout that opened its order, took a unit and died.
		c, err := repos.Carts.Get(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		o, err := domain.NewOrder("o-"+user, c, domain.Customer{Name: user}, domain.Address{Name: user, Line1: "1 St", City: "T", PostalCode: "1", Country: "BE"}, "k-"+user, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repos.Orders.Open(ctx, o, domain.Idempotency{Key: "k-" + user, RequestHash: "h", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := repos.Inventory.Reserve(ctx, domain.NewReservation("p1", "", o.ID, user, 1, now), 0); err != nil {
			t.Fatal(err)
		}
	}
	short := faults.Wrap(st, faults.Config{ShortPages: 3})
	later := now.Add(time.Hour)
	h := feedworkers.NewHandlers(short, writes.New(repo.New(short, 0), nil, func() time.Time { return later }), feedworkers.HandlersConfig{Now: func() time.Time { return later }})

	cents := int64(1200)
	p, err = repos.Products.Update(ctx, "p1", "", func(p *domain.Product) error {
		p.Apply(domain.ProductChange{PriceCents: &cents}, later)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.ProductToCarts(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.CartsUpdated != n || res.Queries < n/3 {
		t.Errorf("fan-out: %d carts updated in %d queries, want %d in at least %d", res.CartsUpdated, res.Queries, n, n/3)
	}

	// An hour on, every one of those orders is past its expiry.
	if err := h.SweepOnce(ctx, time.Minute, time.Minute); err != nil {
		t.Fatal(err)
	}
	held, cont, err := repos.Inventory.Held(ctx, store.MaxQueryPageSize, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 0 || cont != "" {
		t.Errorf("after the sweeper's pass %d reservations are still held, want 0", len(held))
	}
	stock, err := repos.Inventory.Stock(ctx, "p1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stock.Available, int64(1000); got != want {
		t.Errorf("available after the sweeper's pass = %d, want %d (every unit returned)", got, want)
	}
}
