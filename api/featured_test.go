package api_test

import (
	"testing"

	"github.com/reference-shop/shop/domain"
)

// TestHomeShowsFeaturedFromTheOneRead: the home page's featured products
// come with the categories, from the one point read of the index.
func TestHomeShowsFeaturedFromTheOneRead(t *testing.T) {
	s := newShop(t)
	s.fixture()
	page, err := s.repos.ProductSummaries.Page(t.Context(), "books", "name", nil, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	sums, err := page.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.Products.UpdateCategories(t.Context(), "", func(c *domain.Categories) error {
		c.SetFeatured("books", sums)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := s.do(req{method: "GET", path: "/v1/categories"}).want(200)
	if got, want := r.ops(), "1"; got != want {
		t.Errorf("store operations = %s, want %s", got, want)
	}
	body := decodeBody[struct {
		Featured []struct{ ID, CategoryName string }
	}](t, r)
	if len(body.Featured) != domain.FeaturedPerCategory || body.Featured[0].CategoryName != "Books" {
		t.Errorf("featured = %+v, want %d books named by their category", body.Featured, domain.FeaturedPerCategory)
	}
}
