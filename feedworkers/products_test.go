package feedworkers_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
)

// allContainers are the containers a product step could write.
var allContainers = []string{
	store.ProductsContainer, store.ReviewsContainer, store.CartsContainer, store.OrdersContainer,
	store.ProductsByCategoryContainer, store.ProductsByTermContainer, store.OrdersByStatusContainer,
	store.LeasesContainer, store.InventoryContainer,
}

// productChanges are the admin's changes of p1 the step tests make; each
// returns the new version, written to products and not yet handled.
var productChanges = map[string]func(t *testing.T, c catalog) domain.Product{
	"new price": func(t *testing.T, c catalog) domain.Product { return setPrice(t, c.repos, "p1", 1100) },
	"renamed": func(t *testing.T, c catalog) domain.Product {
		name := "Dark roast"
		return changeProduct(t, c.repos, "p1", domain.ProductChange{Name: &name})
	},
	"moved to tea": func(t *testing.T, c catalog) domain.Product {
		cat, name := "tea", "Name of tea"
		return changeProduct(t, c.repos, "p1", domain.ProductChange{CategoryID: &cat, CategoryName: &name})
	},
	"deleted": func(t *testing.T, c catalog) domain.Product {
		p, err := c.repos.Products.UpdateAny(t.Context(), "p1", func(p *domain.Product) error {
			p.SoftDelete(60, now)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	},
}

// The products feed runs these steps on each changed product, in this
// order; each has its own test below (a step added needs one).
func TestProductStepsAreTheTestedOnes(t *testing.T) {
	want := []string{"category view", "search index", "carts", "reviews"}
	if got := feedworkers.ProductStepNames(); !slices.Equal(got, want) {
		t.Errorf("product steps = %q, want %q", got, want)
	}
}

func TestCategoryViewStep(t *testing.T) {
	own := []string{store.ProductsByCategoryContainer}
	testProductStep(t, "category view", []stepCase{
		{"new price", own, func(t *testing.T, c catalog, p domain.Product) {
			s, ok := c.summaryIn(t, "coffee", "p1")
			if got, want := [3]any{ok, s.PriceCents, s.SourceVersion}, [3]any{true, int64(1100), p.Version}; got != want {
				t.Errorf("summary in coffee (there, price, sourceVersion) = %v, want %v", got, want)
			}
		}},
		{"moved to tea", own, func(t *testing.T, c catalog, p domain.Product) {
			_, inCoffee := c.summaryIn(t, "coffee", "p1")
			s, inTea := c.summaryIn(t, "tea", "p1")
			if got, want := [3]any{inCoffee, inTea, s.SourceVersion}, [3]any{false, true, p.Version}; got != want {
				t.Errorf("summary (in coffee, in tea, sourceVersion) = %v, want %v", got, want)
			}
		}},
		{"deleted", own, func(t *testing.T, c catalog, _ domain.Product) {
			if _, ok := c.summaryIn(t, "coffee", "p1"); ok {
				t.Error("the deleted product's summary is still in coffee")
			}
		}},
	})
}

func TestSearchIndexStep(t *testing.T) {
	own := []string{store.ProductsByTermContainer}
	testProductStep(t, "search index", []stepCase{
		{"renamed", own, func(t *testing.T, c catalog, _ domain.Product) {
			if got, want := search(t, c.repos.Search, []string{"roast"}, 10), []string{"p1"}; !slices.Equal(got, want) {
				t.Errorf("search roast = %v, want %v", got, want)
			}
			if got := search(t, c.repos.Search, []string{"p1"}, 10); slices.Contains(got, "p1") {
				t.Errorf("search p1 (a word of the old name only) = %v, want no p1", got)
			}
		}},
		{"deleted", own, func(t *testing.T, c catalog, _ domain.Product) {
			if got := search(t, c.repos.Search, []string{"coffee"}, 10); slices.Contains(got, "p1") {
				t.Errorf("search coffee = %v, want no p1", got)
			}
		}},
	})
}

func TestCartsStep(t *testing.T) {
	// The cart lines, and the fan-out record (repo.FanoutRecord).
	own := []string{store.CartsContainer, store.LeasesContainer}
	testProductStep(t, "carts", []stepCase{
		{"new price", own, func(t *testing.T, c catalog, p domain.Product) {
			for _, u := range []string{"u1", "u2"} {
				if _, l := c.line(t, u, "p1"); l.UnitPriceCents != 1100 || l.PriceVersion != p.PriceVersion {
					t.Errorf("%s line = %d cents at priceVersion %d, want 1100 at %d", u, l.UnitPriceCents, l.PriceVersion, p.PriceVersion)
				}
			}
		}},
		{"deleted", own, func(t *testing.T, c catalog, _ domain.Product) {
			for _, u := range []string{"u1", "u2"} {
				if _, l := c.line(t, u, "p1"); l.Available {
					t.Errorf("%s line of the deleted product is available", u)
				}
			}
		}},
	})
}

func TestReviewsStep(t *testing.T) {
	testProductStep(t, "reviews", []stepCase{
		{"deleted", []string{store.ReviewsContainer}, func(t *testing.T, c catalog, _ domain.Product) {
			if got := c.reviews(t, "p1"); got != 0 {
				t.Errorf("the deleted product has %d reviews, want 0", got)
			}
		}},
		// A product that stays keeps its reviews: the step writes nothing.
		{"new price", nil, func(t *testing.T, c catalog, _ domain.Product) {
			if got, want := c.reviews(t, "p1"), 2; got != want {
				t.Errorf("the product has %d reviews, want %d", got, want)
			}
		}},
	})
}

// stepCase is one change of p1 (a key of productChanges) that a step is
// run on alone.
type stepCase struct {
	change string
	// own are the containers the step may write for it.
	own []string
	// want checks what the step made of p, p1's new version.
	want func(t *testing.T, c catalog, p domain.Product)
}

// testProductStep runs the products feed's step alone on each case's
// change of p1: it writes what it owns and no other container; run again
// on the same version (a duplicate, or a batch marked as a replay) it
// writes nothing; and the older version, arriving after the newer one,
// leaves every document as the newer one left it.
func testProductStep(t *testing.T, step string, cases []stepCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.change, func(t *testing.T) {
			c := newCatalog(t)
			// A first change through the whole handler, so that the older
			// version below is one the copies were made from.
			setPrice(t, c.repos, "p1", 900)
			c.apply(t, c.h.Products, c.raw(t, "products", "p1"))
			older := c.product(t, "p1")
			p := productChanges[tt.change](t, c)

			others := slices.DeleteFunc(slices.Clone(allContainers), func(name string) bool { return slices.Contains(tt.own, name) })
			before := snapshot(t, c.st, others...)
			if err := c.h.RunProductStep(t.Context(), step, p, false); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, snapshot(t, c.st, others...)); diff != "" {
				t.Errorf("the step wrote outside %v (-before +after):\n%s", tt.own, diff)
			}
			tt.want(t, c, p)

			applied := snapshot(t, c.st, allContainers...)
			for _, again := range []struct {
				what   string
				p      domain.Product
				replay bool
			}{
				{"the same version again", p, false},
				{"the same version in a batch marked as a replay", p, true},
				{"the older version after it", older, false},
			} {
				if err := c.h.RunProductStep(t.Context(), step, again.p, again.replay); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(applied, snapshot(t, c.st, allContainers...)); diff != "" {
					t.Errorf("%s changed the store (-before +after):\n%s", again.what, diff)
				}
			}
			tt.want(t, c, p)
		})
	}
}

// reviews counts the product's reviews.
func (c catalog) reviews(t *testing.T, productID string) int {
	t.Helper()
	all, err := c.repos.Reviews.All(t.Context(), productID)
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}
