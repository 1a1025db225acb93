package feedworkers_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
)

// TestFeaturedFollowsRatings: the products feed keeps the best-rated
// products of each category in the categories index: a product rated
// above the featured ones enters the list, and a deleted one leaves it
// for the next best.
func TestFeaturedFollowsRatings(t *testing.T) {
	c := newCatalog(t)
	featured := func() []string {
		t.Helper()
		cats, err := c.repos.Products.Categories(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range cats.Featured {
			ids = append(ids, f.CategoryID+"/"+f.ID)
		}
		return ids
	}
	// No reviews counted yet: both score the prior, ties go by id, descending.
	if diff := cmp.Diff([]string{"coffee/p2", "coffee/p1"}, featured()); diff != "" {
		t.Fatalf("featured at start (-want +got):\n%s", diff)
	}

	createProduct(t, c.repos, "p3", "coffee", 900)
	if _, err := c.repos.Products.UpdateAny(t.Context(), "p3", func(p *domain.Product) error {
		p.ReviewStats = domain.ReviewStats{Count: 20, Average: 4.9}
		p.Version++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.apply(t, c.h.Products, c.raw(t, "products", "p3"))
	if diff := cmp.Diff([]string{"coffee/p3", "coffee/p2"}, featured()); diff != "" {
		t.Errorf("after p3's reviews (-want +got):\n%s", diff)
	}

	if _, err := c.repos.Products.UpdateAny(t.Context(), "p3", func(p *domain.Product) error {
		p.SoftDelete(60, now)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.apply(t, c.h.Products, c.raw(t, "products", "p3"))
	if diff := cmp.Diff([]string{"coffee/p2", "coffee/p1"}, featured()); diff != "" {
		t.Errorf("after p3's deletion (-want +got):\n%s", diff)
	}
}
