package domain_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
)

func TestRatingScore(t *testing.T) {
	one := domain.RatingScore(domain.ReviewStats{Count: 1, Average: 5})
	forty := domain.RatingScore(domain.ReviewStats{Count: 40, Average: 4.8})
	if one >= forty {
		t.Errorf("one 5-star review scores %v, forty at 4.8 score %v: want the forty ahead", one, forty)
	}
	if got, want := domain.RatingScore(domain.ReviewStats{}), 3.0; got != want {
		t.Errorf("no reviews: score %v, want the prior %v", got, want)
	}
}

// TestSetFeatured: a category's featured products are replaced as a
// whole, sold-out ones skipped and at most FeaturedPerCategory kept, in
// the order of the index's categories; nothing changes, nothing is
// reported.
func TestSetFeatured(t *testing.T) {
	sum := func(id, cat, status string) domain.ProductSummary {
		return domain.ProductSummary{Meta: domain.Meta{ID: id}, CategoryID: cat, Name: "Name of " + id, StockStatus: status}
	}
	c := domain.Categories{Items: []domain.Category{{ID: "audio"}, {ID: "books"}}}
	if !c.SetFeatured("books", []domain.ProductSummary{sum("b1", "books", ""), sum("b2", "books", "")}) {
		t.Fatal("the first featured books changed nothing")
	}
	if !c.SetFeatured("audio", []domain.ProductSummary{
		sum("a1", "audio", domain.SoldOut), sum("a2", "audio", ""), sum("a3", "audio", "low_stock"), sum("a4", "audio", ""),
	}) {
		t.Fatal("the featured audio changed nothing")
	}
	var ids []string
	for _, f := range c.Featured {
		ids = append(ids, f.ID)
	}
	if diff := cmp.Diff([]string{"a2", "a3", "b1", "b2"}, ids); diff != "" {
		t.Errorf("featured (-want +got):\n%s", diff)
	}
	if c.SetFeatured("books", []domain.ProductSummary{sum("b1", "books", ""), sum("b2", "books", "")}) {
		t.Error("the same featured books reported a change")
	}
}

// TestPlaceFeatured: what the featured list alone can settle, it settles
// without a query; a product that falls, sells out or leaves, or a list
// that is not full, needs the category ranked again.
func TestPlaceFeatured(t *testing.T) {
	product := func(id string, count int, avg float64, status string) domain.Product {
		return domain.Product{Meta: domain.Meta{ID: id}, CategoryID: "audio", Name: "Name of " + id,
			ReviewStats: domain.ReviewStats{Count: count, Average: avg}, Availability: domain.Availability{Status: status}}
	}
	full := func() domain.Categories {
		c := domain.Categories{Items: []domain.Category{{ID: "audio"}}}
		c.SetFeatured("audio", []domain.ProductSummary{
			domain.SummaryOfProduct(product("a1", 20, 4.8, "")),
			domain.SummaryOfProduct(product("a2", 10, 4.5, "")),
		})
		return c
	}
	tests := []struct {
		name             string
		cats             domain.Categories
		p                domain.Product
		changed, settled bool
		want             []string
	}{
		{"FeaturedRisesInPlace", full(), product("a2", 40, 4.9, ""), true, true, []string{"a2", "a1"}},
		{"FeaturedFallsNeedsARanking", full(), product("a1", 21, 4.0, ""), false, false, nil},
		{"FeaturedSellsOutNeedsARanking", full(), product("a1", 20, 4.8, domain.SoldOut), false, false, nil},
		{"OutsiderAboveTheLastEnters", full(), product("a3", 30, 4.6, ""), true, true, []string{"a1", "a3"}},
		{"OutsiderBelowChangesNothing", full(), product("a3", 2, 3.5, ""), false, true, []string{"a1", "a2"}},
		{"SoldOutOutsiderChangesNothing", full(), product("a3", 90, 5, domain.SoldOut), false, true, []string{"a1", "a2"}},
		{"ListNotFullNeedsARanking", domain.Categories{Items: []domain.Category{{ID: "audio"}}}, product("a3", 2, 3.5, ""), false, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cats
			changed, settled := c.PlaceFeatured(tt.p)
			if changed != tt.changed || settled != tt.settled {
				t.Fatalf("PlaceFeatured = (changed %v, settled %v), want (%v, %v)", changed, settled, tt.changed, tt.settled)
			}
			if !settled {
				return
			}
			var ids []string
			for _, f := range c.Featured {
				ids = append(ids, f.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("featured (-want +got):\n%s", diff)
			}
		})
	}
}
