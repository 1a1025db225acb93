package domain_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/domain"
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
