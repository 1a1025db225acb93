package repo_test

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// newStore opens a migrated embedded store in a temp dir: the repositories
// are tested against a real adapter, not a mock. NoSync: these tests are
// about the repositories' semantics; durability is the adapter's own test.
func newStore(t *testing.T) store.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := migrations.Apply(t.Context(), s, io.Discard); err != nil {
		t.Fatal(err)
	}
	return s
}

var now = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

func newProduct(id string, priceCents int64) domain.Product {
	return domain.Product{
		Meta:         domain.Meta{ID: id},
		Name:         "Name of " + id,
		CategoryID:   "coffee",
		CategoryName: "Coffee & Tea",
		PriceCents:   priceCents,
		Currency:     "USD",
		PriceVersion: 1,
		Version:      1,
		LastUpdated:  now,
	}
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := domain.ErrorCode(err); got != code {
		t.Fatalf("%s: code = %q, want %q (err %v)", what, got, code, err)
	}
}

// run calls fn n times concurrently and returns the errors.
func run(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errs
}

func TestCartsUpdateCreatesThenUpdates(t *testing.T) {
	ctx := t.Context()
	carts := repo.NewCarts(newStore(t))

	empty, err := carts.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(domain.NewCart("u1"), empty); diff != "" {
		t.Errorf("cart of a new user (-want +got):\n%s", diff)
	}

	first, err := carts.Update(ctx, "u1", "", func(c *domain.Cart) error {
		return c.SetQuantity(newProduct("p1", 500), "", 2, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.ETag == "" {
		t.Error("created cart has no _etag")
	}
	second, err := carts.Update(ctx, "u1", first.ETag, func(c *domain.Cart) error {
		return c.SetQuantity(newProduct("p2", 300), "", 1, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	if second.ETag == first.ETag {
		t.Error("_etag did not change on update")
	}
	if diff := cmp.Diff([]string{"p1", "p2"}, second.ProductIDs); diff != "" {
		t.Errorf("productIds (-want +got):\n%s", diff)
	}
	if got, want := second.SubtotalCents, int64(1300); got != want {
		t.Errorf("subtotal = %d, want %d", got, want)
	}
	got, err := carts.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(second, got); diff != "" {
		t.Errorf("Get after Update (-updated +read):\n%s", diff)
	}
}

func TestCartsUpdateConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	carts := repo.NewCarts(newStore(t))
	const n = domain.MaxCartLines
	errs := run(n, func(i int) error {
		_, err := carts.Update(ctx, "u1", "", func(c *domain.Cart) error {
			return c.SetQuantity(newProduct(fmt.Sprintf("p%02d", i), 100), "", 1, now)
		})
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	c, err := carts.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Items), n; got != want {
		t.Fatalf("lines = %d, want %d: an optimistic-concurrency retry lost a write", got, want)
	}
	seen := map[string]bool{}
	for _, id := range c.ProductIDs {
		seen[id] = true
	}
	if got, want := len(seen), n; got != want {
		t.Errorf("distinct productIds = %d, want %d", got, want)
	}
	if got, want := c.ItemCount, n; got != want {
		t.Errorf("itemCount = %d, want %d", got, want)
	}
}

func TestCartsUpdateStaleIfMatch(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	carts := repo.NewCarts(store.Metered(s))
	add := func(id string) func(*domain.Cart) error {
		return func(c *domain.Cart) error { return c.SetQuantity(newProduct(id, 100), "", 1, now) }
	}
	v1, err := carts.Update(ctx, "u1", "", add("p1"))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := carts.Update(ctx, "u1", "", add("p2"))
	if err != nil {
		t.Fatal(err)
	}

	mctx, meter := store.WithMeter(ctx)
	called := false
	_, err = carts.Update(mctx, "u1", v1.ETag, func(c *domain.Cart) error {
		called = true
		return c.SetQuantity(newProduct("p3", 100), "", 1, now)
	})
	wantCode(t, "Update with a stale If-Match", err, domain.EPRECONDITION)
	if called {
		t.Error("the change ran against a cart the client had not seen")
	}
	if ops, _, _ := meter.Totals(); ops != 1 {
		t.Errorf("store operations = %d, want 1 (the read; no write, no retry)", ops)
	}
	if got := meter.Retries(); got != 0 {
		t.Errorf("retries = %d, want 0", got)
	}
	got, err := carts.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v2, got); diff != "" {
		t.Errorf("cart changed by a refused update (-want +got):\n%s", diff)
	}

	_, err = carts.Update(ctx, "nobody", v1.ETag, add("p1"))
	wantCode(t, "Update with If-Match of a missing cart", err, domain.EPRECONDITION)
}

func TestCartsUpdateRefusedChangeWritesNothing(t *testing.T) {
	ctx := t.Context()
	carts := repo.NewCarts(newStore(t))
	_, err := carts.Update(ctx, "u1", "", func(c *domain.Cart) error {
		return c.SetQuantity(newProduct("p1", 100), "", 100, now)
	})
	wantCode(t, "quantity 100", err, domain.EINVALID)
	c, err := carts.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if c.ETag != "" {
		t.Errorf("a refused change created the cart (etag %q)", c.ETag)
	}
}

func TestCartsWithProduct(t *testing.T) {
	ctx := t.Context()
	carts := repo.NewCarts(newStore(t))
	for i := range 5 {
		_, err := carts.Update(ctx, fmt.Sprintf("u%d", i), "", func(c *domain.Cart) error {
			id := "other"
			if i%2 == 0 {
				id = "wanted"
			}
			return c.SetQuantity(newProduct(id, 100), "", 1, now)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var users []string
	cont := ""
	for {
		page, next, err := carts.WithProduct(ctx, "wanted", 2, cont)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			users = append(users, c.UserID)
		}
		if next == "" {
			break
		}
		cont = next
	}
	slices.Sort(users)
	if diff := cmp.Diff([]string{"u0", "u2", "u4"}, users); diff != "" {
		t.Errorf("carts holding the product (-want +got):\n%s", diff)
	}
}

func TestProductsGet(t *testing.T) {
	ctx := t.Context()
	products := repo.NewProducts(newStore(t))
	created, err := products.Create(ctx, newProduct("p1", 1999))
	if err != nil {
		t.Fatal(err)
	}
	if created.Type != domain.TypeProduct || created.TopReviews == nil {
		t.Errorf("created product: type %q, topReviews %#v; want %q and []", created.Type, created.TopReviews, domain.TypeProduct)
	}
	_, err = products.Create(ctx, newProduct("p1", 1))
	wantCode(t, "Create of a taken id", err, domain.ECONFLICT)

	got, err := products.Get(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("Get (-created +read):\n%s", diff)
	}

	if _, err := products.UpdateAny(ctx, "p1", func(p *domain.Product) error {
		p.SoftDelete(3600, now)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = products.Get(ctx, "p1")
	wantCode(t, "Get of a soft-deleted product", err, domain.ENOTFOUND)
	_, err = products.Update(ctx, "p1", "", func(*domain.Product) error { return nil })
	wantCode(t, "Update of a soft-deleted product", err, domain.ENOTFOUND)
	deleted, err := products.GetAny(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if !deleted.Deleted || deleted.TTL == nil || *deleted.TTL != 3600 {
		t.Errorf("GetAny: deleted %v ttl %v, want true and 3600", deleted.Deleted, deleted.TTL)
	}
	_, err = products.Get(ctx, "never")
	wantCode(t, "Get of a missing product", err, domain.ENOTFOUND)
}

func TestProductsUpdateStaleIfMatch(t *testing.T) {
	ctx := t.Context()
	products := repo.NewProducts(newStore(t))
	v1, err := products.Create(ctx, newProduct("p1", 1000))
	if err != nil {
		t.Fatal(err)
	}
	price := int64(900)
	v2, err := products.Update(ctx, "p1", v1.ETag, func(p *domain.Product) error {
		p.Apply(domain.ProductChange{PriceCents: &price}, now)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v2.PriceVersion != 2 || v2.Version != 2 {
		t.Errorf("after a price change: priceVersion %d version %d, want 2 and 2", v2.PriceVersion, v2.Version)
	}
	_, err = products.Update(ctx, "p1", v1.ETag, func(*domain.Product) error { return nil })
	wantCode(t, "Update with a stale If-Match", err, domain.EPRECONDITION)
}

func TestProductsCategories(t *testing.T) {
	ctx := t.Context()
	products := repo.NewProducts(newStore(t))
	none, err := products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if none.Items == nil || len(none.Items) != 0 || none.ETag != "" {
		t.Errorf("categories of an empty store = %#v, want an empty, unsaved index", none)
	}
	want := []domain.Category{{ID: "coffee", Name: "Coffee & Tea", ProductCount: 3}}
	if _, err := products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		c.Items = append(c.Items, want...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Items); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
}
