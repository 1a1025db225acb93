package feedworkers_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
)

// reviewOnly changes p1 the way ReviewsToProducts does: new review stats,
// a new version, nothing a cart line or a category count holds.
func reviewOnly(t *testing.T, c catalog) {
	t.Helper()
	if _, err := c.repos.Products.UpdateAny(t.Context(), "p1", func(p *domain.Product) error {
		p.ReviewStats.Count++
		p.Version++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestProductChangeFansOutOnlyWhenACartCopyMayBeStale(t *testing.T) {
	c := newCatalog(t)
	steps := []struct {
		name      string
		change    func(t *testing.T, c catalog)
		wantQuery bool
	}{
		{"first change, no fan-out record yet", reviewOnly, true},
		{"review stats only", reviewOnly, false},
		{"review stats only again", reviewOnly, false},
		{"new price", func(t *testing.T, c catalog) { setPrice(t, c.repos, "p1", 1100) }, true},
		{"review stats after the price", reviewOnly, false},
		{"new name", func(t *testing.T, c catalog) {
			name := "Renamed"
			changeProduct(t, c.repos, "p1", domain.ProductChange{Name: &name})
		}, true},
		{"deleted", func(t *testing.T, c catalog) {
			if _, err := c.repos.Products.UpdateAny(t.Context(), "p1", func(p *domain.Product) error {
				p.SoftDelete(60, now)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, s := range steps {
		before := c.h.FanoutStats()
		s.change(t, c)
		c.apply(t, c.h.Products, c.raw(t, "products", "p1"))
		after := c.h.FanoutStats()
		if got := after.Queries > before.Queries; got != s.wantQuery {
			t.Errorf("%s: fan-out query ran = %v, want %v", s.name, got, s.wantQuery)
		}
		if got, want := after.Skipped-before.Skipped, 1; !s.wantQuery && got != want {
			t.Errorf("%s: skipped = %d, want %d", s.name, got, want)
		}
		p, err := c.repos.Products.GetAny(t.Context(), "p1")
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"u1", "u2"} {
			_, l := c.line(t, u, "p1")
			got := [3]any{l.Name, l.UnitPriceCents, l.Available}
			if want := [3]any{p.Name, p.PriceCents, !p.Deleted}; got != want {
				t.Errorf("%s: %s line (name, price, available) = %v, want %v", s.name, u, got, want)
			}
		}
	}
}

// A product never changed since its creation needs no fan-out: every cart
// copied that very version.
func TestNewProductSkipsTheFanout(t *testing.T) {
	c := newCatalog(t)
	before := c.h.FanoutStats()
	createProduct(t, c.repos, "p3", "tea", 700)
	c.apply(t, c.h.Products, c.raw(t, "products", "p3"))
	after := c.h.FanoutStats()
	if got, want := after.Queries-before.Queries, 0; got != want {
		t.Errorf("fan-out queries = %d, want %d", got, want)
	}
	if got, want := after.Skipped-before.Skipped, 1; got != want {
		t.Errorf("skipped = %d, want %d", got, want)
	}
}

// The cost of a review-only product change once its fan-out record
// exists: the current product (1 point read), the summary's guarded put
// (read + replace), the fan-out record (1 point read), the categories
// index (1 point read) to see whether the home page's featured list may
// change, and the search index's ledger and its last entry (2 point
// reads): the rating the results show (half stars) is what the entries
// already hold, so none is written. No view partition is read for a recount and no query fans
// out. p3 is no featured product of coffee and its rating falls, so the
// featured list is not ranked again.
func TestReviewOnlyChangeCostsPointOperationsOnly(t *testing.T) {
	c := newCatalog(t)
	createProduct(t, c.repos, "p3", "coffee", 800)
	fallingRating := func() {
		t.Helper()
		if _, err := c.repos.Products.UpdateAny(t.Context(), "p3", func(p *domain.Product) error {
			p.ReviewStats.Count++
			p.ReviewStats.Average = 1
			p.Version++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fallingRating()
	c.apply(t, c.h.Products, c.raw(t, "products", "p3"))
	fallingRating()
	ctx, m := store.WithMeter(context.Background())
	if err := c.h.Products(ctx, changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p3")}}); err != nil {
		t.Fatal(err)
	}
	p, err := c.repos.Products.GetAny(t.Context(), "p3")
	if err != nil {
		t.Fatal(err)
	}
	if ops, ru, _ := m.Totals(); ops != 5+2 {
		t.Errorf("store operations = %d (%.2f RU), want %d", ops, ru, 5+2)
	}
	if got := p.ReviewStats.Average; got != 1 {
		t.Fatalf("average %v, want 1 (the shown rating unchanged)", got)
	}
}

// A review-only change of a featured product also rewrites its copy in
// the categories index. p1's score falls here (more reviews at an average
// of 0, below the prior), so what follows it is unknown to the list and
// its category is ranked again: the operations above, the category's
// TOP query and the index's replace. The home page shows the review
// count; search results do not, so the search index writes nothing.
func TestFeaturedProductReviewChangeRewritesTheIndex(t *testing.T) {
	c := newCatalog(t)
	reviewOnly(t, c)
	c.apply(t, c.h.Products, c.raw(t, "products", "p1"))
	reviewOnly(t, c)
	ctx, m := store.WithMeter(context.Background())
	if err := c.h.Products(ctx, changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p1")}}); err != nil {
		t.Fatal(err)
	}
	p, err := c.repos.Products.GetAny(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	if ops, ru, _ := m.Totals(); ops != 7+2 {
		t.Errorf("store operations = %d (%.2f RU), want %d", ops, ru, 7+2)
	}
	cats, err := c.repos.Products.Categories(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cats.Featured, func(f domain.FeaturedProduct) bool { return f.ID == "p1" })
	if i < 0 || cats.Featured[i].ReviewCount != p.ReviewStats.Count {
		t.Errorf("featured = %+v, want p1 with %d reviews", cats.Featured, p.ReviewStats.Count)
	}
}

func TestCategoryCountsFollowMembershipOnly(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, c catalog) [][]byte
		want   map[string]int
	}{
		{
			name: "a new product joins its category",
			change: func(t *testing.T, c catalog) [][]byte {
				createProduct(t, c.repos, "p3", "tea", 700)
				return [][]byte{c.raw(t, "products", "p3")}
			},
			want: map[string]int{"coffee": 2, "tea": 1},
		},
		{
			name: "new products of a category new to the index, one batch",
			change: func(t *testing.T, c catalog) [][]byte {
				createProduct(t, c.repos, "p3", "herbal", 700)
				createProduct(t, c.repos, "p4", "herbal", 800)
				return [][]byte{c.raw(t, "products", "p3"), c.raw(t, "products", "p4")}
			},
			want: map[string]int{"coffee": 2, "tea": 0, "herbal": 2},
		},
		{
			name: "a product moves",
			change: func(t *testing.T, c catalog) [][]byte {
				tea := "tea"
				changeProduct(t, c.repos, "p2", domain.ProductChange{CategoryID: &tea})
				return [][]byte{c.raw(t, "products", "p2")}
			},
			want: map[string]int{"coffee": 1, "tea": 1},
		},
		{
			name: "a summary already in place is not a new member",
			change: func(t *testing.T, c catalog) [][]byte {
				// As a first application that stopped before its recount
				// would leave it: the summary written, the count not.
				p := createProduct(t, c.repos, "p3", "tea", 700)
				if _, err := c.repos.ProductSummaries.Put(t.Context(), domain.SummaryOfProduct(p)); err != nil {
					t.Fatal(err)
				}
				return [][]byte{c.raw(t, "products", "p3")}
			},
			want: map[string]int{"coffee": 2, "tea": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCatalog(t)
			c.apply(t, c.h.Products, tt.change(t, c)...)
			if diff := cmp.Diff(tt.want, c.counts(t)); diff != "" {
				t.Errorf("productCount (-want +got):\n%s", diff)
			}
		})
	}
}

// A batch that may have been applied before recounts its products'
// categories even where the summary was already there: the first
// application may have written it and stopped before the recount.
func TestReplayedBatchRecounts(t *testing.T) {
	c := newCatalog(t)
	p := createProduct(t, c.repos, "p3", "tea", 700)
	if _, err := c.repos.ProductSummaries.Put(t.Context(), domain.SummaryOfProduct(p)); err != nil {
		t.Fatal(err)
	}
	tea := "tea"
	changeProduct(t, c.repos, "p2", domain.ProductChange{CategoryID: &tea})
	// The move's first application: the coffee copy deleted, the tea copy
	// created, the counts not yet recomputed.
	moved, err := c.repos.Products.GetAny(t.Context(), "p2")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.repos.ProductSummaries.Delete(t.Context(), "coffee", "p2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.repos.ProductSummaries.Put(t.Context(), domain.SummaryOfProduct(moved)); err != nil {
		t.Fatal(err)
	}
	replay := changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p3"), c.raw(t, "products", "p2")}, MayBeReplay: true}
	if err := c.h.Products(t.Context(), replay); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"coffee": 1, "tea": 2}, c.counts(t)); diff != "" {
		t.Errorf("productCount (-want +got):\n%s", diff)
	}
}
