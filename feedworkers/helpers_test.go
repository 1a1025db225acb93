package feedworkers_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// newStore opens a migrated embedded store in a temp dir, metered so the
// handlers' Request Units are counted: the handlers and the processor are
// tested against a real adapter, not a mock.
func newStore(tb testing.TB) store.Store {
	tb.Helper()
	return store.Metered(openStore(tb))
}

// openStore is newStore without the meter, for Start (which adds it).
func openStore(tb testing.TB) store.Store {
	tb.Helper()
	return openStoreWith(tb, embedded.Options{NoSync: true})
}

func openStoreWith(tb testing.TB, opts embedded.Options) store.Store {
	tb.Helper()
	s, err := embedded.Open(filepath.Join(tb.TempDir(), "shop.db"), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	if err := migrations.Apply(context.Background(), s, io.Discard); err != nil {
		tb.Fatal(err)
	}
	return s
}

var now = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

func createProduct(tb testing.TB, repos *repo.Set, id, category string, priceCents int64) domain.Product {
	tb.Helper()
	p, err := repos.Products.Create(context.Background(), domain.Product{
		Meta:         domain.Meta{ID: id},
		Name:         "Name of " + id,
		CategoryID:   category,
		CategoryName: "Name of " + category,
		PriceCents:   priceCents,
		Currency:     "USD",
		PriceVersion: 1,
		Version:      1,
		LastUpdated:  now,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// changeProduct applies an admin change the way the API does.
func changeProduct(tb testing.TB, repos *repo.Set, id string, ch domain.ProductChange) domain.Product {
	tb.Helper()
	p, err := repos.Products.Update(context.Background(), id, "", func(p *domain.Product) error {
		p.Apply(ch, time.Now())
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func setPrice(tb testing.TB, repos *repo.Set, id string, cents int64) domain.Product {
	tb.Helper()
	return changeProduct(tb, repos, id, domain.ProductChange{PriceCents: &cents})
}

func addToCart(tb testing.TB, repos *repo.Set, userID string, p domain.Product, qty int) domain.Cart {
	tb.Helper()
	c, err := repos.Carts.Update(context.Background(), userID, "", func(c *domain.Cart) error {
		return c.SetQuantity(p, "", qty, now)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// raw reads a document as stored: what the change feed would deliver.
func raw(tb testing.TB, st store.Store, container, pk, id string) []byte {
	tb.Helper()
	r, err := st.Container(container).Read(context.Background(), pk, id)
	if err != nil {
		tb.Fatalf("read %s/%s/%s: %v", container, pk, id, err)
	}
	return r.Item
}

// snapshot is every document of the given containers, as stored (with
// _etag and _ts): two equal snapshots mean nothing was written between.
func snapshot(tb testing.TB, st store.Store, containers ...string) []string {
	tb.Helper()
	var out []string
	for _, name := range containers {
		cont := ""
		for {
			page, err := st.Container(name).Query(context.Background(), store.Query{Limit: store.MaxQueryPageSize, Continuation: cont})
			if err != nil {
				tb.Fatalf("snapshot %s: %v", name, err)
			}
			for _, it := range page.Items {
				out = append(out, name+" "+string(it))
			}
			if page.Continuation == "" {
				break
			}
			cont = page.Continuation
		}
	}
	slices.Sort(out)
	return out
}

// eventually polls cond until it holds or the deadline passes: the tests
// wait for asynchronous work this way, never with a fixed sleep. The poll
// interval grows, so an expensive condition does not slow what it awaits.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %s did not happen; last state: %s", timeout, what, state)
		}
		time.Sleep(wait)
		wait = min(2*wait, 250*time.Millisecond)
	}
}

func userID(i int) string { return fmt.Sprintf("user-%05d", i) }
