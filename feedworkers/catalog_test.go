package feedworkers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// catalog is a small shop: two categories, two coffee products, two carts
// holding them, two reviews of p1, and the view built by the handler.
type catalog struct {
	st    store.Store
	repos *repo.Set
	h     *feedworkers.Handlers
}

func newCatalog(t *testing.T) catalog {
	t.Helper()
	ctx := t.Context()
	st := newStore(t)
	c := catalog{st: st, repos: repo.New(st, 0), h: feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})}
	if _, err := c.repos.Products.UpdateCategories(ctx, "", func(cs *domain.Categories) error {
		cs.Items = []domain.Category{{ID: "coffee", Name: "Name of coffee"}, {ID: "tea", Name: "Name of tea"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p1 := createProduct(t, c.repos, "p1", "coffee", 1000)
	p2 := createProduct(t, c.repos, "p2", "coffee", 500)
	addToCart(t, c.repos, "u1", p1, 2)
	addToCart(t, c.repos, "u2", p1, 1)
	addToCart(t, c.repos, "u2", p2, 1)
	for i, rating := range []int{5, 3} {
		if _, err := c.repos.Reviews.Create(ctx, domain.Review{
			ProductID: "p1", UserID: fmt.Sprintf("r%d", i), UserName: "R", Rating: rating, Title: "t", CreatedAt: now.Add(time.Duration(i) * time.Minute),
		}); err != nil {
			t.Fatal(err)
		}
	}
	c.apply(t, c.h.Products, c.raw(t, "products", "p1"), c.raw(t, "products", "p2"))
	return c
}

func (c catalog) raw(t *testing.T, container, id string) []byte {
	t.Helper()
	return raw(t, c.st, container, id, id)
}

func (c catalog) apply(t *testing.T, handler changefeed.Handler, items ...[]byte) {
	t.Helper()
	if err := handler(t.Context(), changefeed.Batch{Items: items}); err != nil {
		t.Fatalf("handler: %v", err)
	}
}

func (c catalog) line(t *testing.T, userID, productID string) (domain.Cart, domain.CartLine) {
	t.Helper()
	cart, err := c.repos.Carts.Get(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := cart.Line(productID, "")
	if !ok {
		t.Fatalf("cart %s has no line %s", userID, productID)
	}
	return cart, l
}

func (c catalog) counts(t *testing.T) map[string]int {
	t.Helper()
	cats, err := c.repos.Products.Categories(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, it := range cats.Items {
		out[it.ID] = it.ProductCount
	}
	return out
}

func (c catalog) summaryIn(t *testing.T, category, id string) (domain.ProductSummary, bool) {
	t.Helper()
	s, err := c.repos.ProductSummaries.Get(t.Context(), category, id)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return s, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return s, true
}

var catalogContainers = []string{"products", "carts", "productsByCategory", "reviews"}

func TestProductsHandlerAppliedTwiceLeavesTheSameState(t *testing.T) {
	newName, tea, teaName := "Dark roast", "tea", "Name of tea"
	tests := []struct {
		name   string
		change func(t *testing.T, c catalog)
		check  func(t *testing.T, c catalog)
	}{
		{
			name:   "price change reaches the open carts and the view",
			change: func(t *testing.T, c catalog) { setPrice(t, c.repos, "p1", 1500) },
			check: func(t *testing.T, c catalog) {
				cart, l := c.line(t, "u1", "p1")
				if got, want := l.UnitPriceCents, int64(1500); got != want {
					t.Errorf("u1 line price = %d, want %d", got, want)
				}
				if got, want := l.PriceVersion, int64(2); got != want {
					t.Errorf("u1 line priceVersion = %d, want %d", got, want)
				}
				if got, want := cart.SubtotalCents, int64(3000); got != want {
					t.Errorf("u1 subtotal = %d, want %d", got, want)
				}
				if cart, _ := c.line(t, "u2", "p1"); cart.SubtotalCents != 1500+500 {
					t.Errorf("u2 subtotal = %d, want %d", cart.SubtotalCents, 1500+500)
				}
				if s, ok := c.summaryIn(t, "coffee", "p1"); !ok || s.PriceCents != 1500 {
					t.Errorf("summary = %+v (found %v), want price 1500", s, ok)
				}
			},
		},
		{
			name:   "rename reaches the lines and the view",
			change: func(t *testing.T, c catalog) { changeProduct(t, c.repos, "p1", domain.ProductChange{Name: &newName}) },
			check: func(t *testing.T, c catalog) {
				if _, l := c.line(t, "u2", "p1"); l.Name != newName || l.UnitPriceCents != 1000 {
					t.Errorf("line = %+v, want name %q at the old price", l, newName)
				}
				if s, _ := c.summaryIn(t, "coffee", "p1"); s.Name != newName {
					t.Errorf("summary name = %q, want %q", s.Name, newName)
				}
			},
		},
		{
			name: "category change moves the summary and the counts",
			change: func(t *testing.T, c catalog) {
				changeProduct(t, c.repos, "p1", domain.ProductChange{CategoryID: &tea, CategoryName: &teaName})
			},
			check: func(t *testing.T, c catalog) {
				if _, ok := c.summaryIn(t, "coffee", "p1"); ok {
					t.Error("summary still in the old category's partition")
				}
				if _, ok := c.summaryIn(t, "tea", "p1"); !ok {
					t.Error("summary missing from the new category's partition")
				}
				if diff := cmp.Diff(map[string]int{"coffee": 1, "tea": 1}, c.counts(t)); diff != "" {
					t.Errorf("productCount (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "delete marks lines unavailable, removes the summary and the reviews",
			change: func(t *testing.T, c catalog) {
				if _, err := c.repos.Products.Update(t.Context(), "p1", "", func(p *domain.Product) error {
					p.SoftDelete(3600, now)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, c catalog) {
				cart, l := c.line(t, "u1", "p1")
				if l.Available {
					t.Error("line of a deleted product is still available")
				}
				if got, want := cart.SubtotalCents, int64(0); got != want {
					t.Errorf("u1 subtotal = %d, want %d (unavailable lines do not count)", got, want)
				}
				if _, ok := c.summaryIn(t, "coffee", "p1"); ok {
					t.Error("summary of a deleted product still in the view")
				}
				if diff := cmp.Diff(map[string]int{"coffee": 1, "tea": 0}, c.counts(t)); diff != "" {
					t.Errorf("productCount (-want +got):\n%s", diff)
				}
				if rs, err := c.repos.Reviews.All(t.Context(), "p1"); err != nil || len(rs) != 0 {
					t.Errorf("reviews of the deleted product = %d (err %v), want 0", len(rs), err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCatalog(t)
			tt.change(t, c)
			item := c.raw(t, "products", "p1")
			c.apply(t, c.h.Products, item)
			first := snapshot(t, c.st, catalogContainers...)
			tt.check(t, c)
			// A fresh Handlers: idempotence must not rest on memory.
			again := feedworkers.NewHandlers(c.st, writes.New(repo.New(c.st, 0), nil, nil), feedworkers.HandlersConfig{})
			c.apply(t, again.Products, item, item)
			if diff := cmp.Diff(first, snapshot(t, c.st, catalogContainers...)); diff != "" {
				t.Errorf("second application changed the state (-first +second):\n%s", diff)
			}
		})
	}
}

func TestCartLinesTakeOnlyNewerVersions(t *testing.T) {
	c := newCatalog(t)
	v1 := c.raw(t, "products", "p1")
	setPrice(t, c.repos, "p1", 1200)
	v2 := c.raw(t, "products", "p1")
	setPrice(t, c.repos, "p1", 1300)
	v3 := c.raw(t, "products", "p1")

	decode := func(b []byte) domain.Product {
		p, err := repo.Decode[domain.Product](b)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The fan-out handler alone, fed v3 and then the stale v2 and v1.
	for _, item := range [][]byte{v3, v2, v1} {
		if _, err := c.h.ProductToCarts(t.Context(), decode(item)); err != nil {
			t.Fatal(err)
		}
	}
	// And the feed handler with duplicates out of order.
	c.apply(t, c.h.Products, v2, v3, v1, v2)
	for _, u := range []string{"u1", "u2"} {
		if _, l := c.line(t, u, "p1"); l.PriceVersion != 3 || l.UnitPriceCents != 1300 {
			t.Errorf("%s line = priceVersion %d, price %d; want 3, 1300", u, l.PriceVersion, l.UnitPriceCents)
		}
	}
}

func TestReviewsHandlerRecomputesStatsOnce(t *testing.T) {
	c := newCatalog(t)
	items := [][]byte{raw(t, c.st, "reviews", "p1", domain.ReviewID("r0")), raw(t, c.st, "reviews", "p1", domain.ReviewID("r1"))}
	c.apply(t, c.h.Reviews, items...)
	p, err := c.repos.Products.Get(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	want := domain.ReviewStats{Count: 2, Average: 4, Histogram: [5]int{0, 0, 1, 0, 1}}
	if diff := cmp.Diff(want, p.ReviewStats); diff != "" {
		t.Errorf("reviewStats (-want +got):\n%s", diff)
	}
	if got, want := len(p.TopReviews), 2; got != want || p.TopReviews[0].UserID != "r1" {
		t.Errorf("topReviews = %+v, want 2, newest (r1) first", p.TopReviews)
	}
	// The product write flows on to the view through the products feed.
	c.apply(t, c.h.Products, c.raw(t, "products", "p1"))
	if s, _ := c.summaryIn(t, "coffee", "p1"); s.AverageRating != 4 || s.ReviewCount != 2 {
		t.Errorf("summary rating = %v over %d, want 4 over 2", s.AverageRating, s.ReviewCount)
	}

	first := snapshot(t, c.st, catalogContainers...)
	c.apply(t, c.h.Reviews, append(items, items...)...)
	if diff := cmp.Diff(first, snapshot(t, c.st, catalogContainers...)); diff != "" {
		t.Errorf("replayed reviews wrote again (-first +second):\n%s", diff)
	}
}

func TestCategoryRenameReachesProducts(t *testing.T) {
	c := newCatalog(t)
	if _, err := c.repos.Products.UpdateCategories(t.Context(), "", func(cs *domain.Categories) error {
		cs.Items[0].Name = "Coffee"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	item := c.raw(t, "products", domain.CategoriesID)
	c.apply(t, c.h.Products, item)
	for _, id := range []string{"p1", "p2"} {
		p, err := c.repos.Products.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.CategoryName, "Coffee"; got != want {
			t.Errorf("%s categoryName = %q, want %q", id, got, want)
		}
	}
	first := snapshot(t, c.st, catalogContainers...)
	again := feedworkers.NewHandlers(c.st, writes.New(repo.New(c.st, 0), nil, nil), feedworkers.HandlersConfig{})
	c.apply(t, again.Products, item, item)
	if diff := cmp.Diff(first, snapshot(t, c.st, catalogContainers...)); diff != "" {
		t.Errorf("replayed rename wrote again (-first +second):\n%s", diff)
	}
}

// TestRenameMissedByTheViewReachesTheProductThroughItsOwnChange: p3 was
// created with the name the index held before a rename, and the rename
// was handled before p3's summary reached the view, so the rename's
// handler did not find it. p3's own change, coming through the products
// feed, then gives it the new name, and its next version carries the
// name to the view. Nothing else is written for that, and a replay
// writes nothing.
func TestRenameMissedByTheViewReachesTheProductThroughItsOwnChange(t *testing.T) {
	c := newCatalog(t)
	createProduct(t, c.repos, "p3", "coffee", 800) // "Name of coffee"
	if _, err := c.repos.Products.UpdateCategories(t.Context(), "", func(cs *domain.Categories) error {
		cs.Items[0].Name = "Coffee"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.apply(t, c.h.Products, c.raw(t, "products", domain.CategoriesID))
	if p, _ := c.repos.Products.Get(t.Context(), "p3"); p.CategoryName != "Name of coffee" {
		t.Fatalf("p3 categoryName = %q before its change came through, want the old name: the view held no p3", p.CategoryName)
	}

	created := c.raw(t, "products", "p3")
	c.apply(t, c.h.Products, created)
	p, err := c.repos.Products.Get(t.Context(), "p3")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.CategoryName, "Coffee"; got != want {
		t.Errorf("p3 categoryName after its create came through = %q, want %q", got, want)
	}
	c.apply(t, c.h.Products, c.raw(t, "products", "p3"))
	if s, _ := c.summaryIn(t, "coffee", "p3"); s.CategoryName != "Coffee" {
		t.Errorf("p3 summary categoryName = %q, want %q", s.CategoryName, "Coffee")
	}

	first := snapshot(t, c.st, catalogContainers...)
	c.apply(t, c.h.Products, created, c.raw(t, "products", "p3"))
	if diff := cmp.Diff(first, snapshot(t, c.st, catalogContainers...)); diff != "" {
		t.Errorf("replayed batches wrote again (-first +second):\n%s", diff)
	}
}

func TestFanoutCountsItsCrossPartitionQueries(t *testing.T) {
	c := newCatalog(t)
	p := setPrice(t, c.repos, "p1", 900)
	ctx, m := store.WithMeter(context.Background())
	res, err := c.h.ProductToCarts(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Queries, 1; got != want {
		t.Errorf("queries = %d, want %d", got, want)
	}
	if got, want := res.CartsUpdated, 2; got != want {
		t.Errorf("carts updated = %d, want %d", got, want)
	}
	if res.QueryRU <= 0 {
		t.Errorf("query RU = %v, want > 0", res.QueryRU)
	}
	if ops, ru, _ := m.Totals(); ops != 3 || ru <= res.QueryRU {
		t.Errorf("meter = %d ops, %v RU; want 3 ops (1 query + 2 writes) costing more than the query's %v", ops, ru, res.QueryRU)
	}
}
