package domain_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
)

func ptr[T any](v T) *T { return &v }

func TestProductApply(t *testing.T) {
	later := now.Add(time.Hour)
	base := func() domain.Product {
		p := product("p1", 1000)
		p.Description, p.CategoryID, p.CategoryName, p.ImageURL = "Old description", "coffee", "Coffee & Tea", "/img/p1.svg"
		p.LastUpdated = now
		return p
	}
	// changed returns base with fn applied and the bookkeeping of a change;
	// a change of what a cart line copies (name, price, availability) also
	// moves copyVersion, which each case says.
	changed := func(fn func(*domain.Product)) domain.Product {
		p := base()
		fn(&p)
		p.Version++
		p.LastUpdated = later
		return p
	}
	tests := []struct {
		name        string
		change      domain.ProductChange
		wantChanged bool
		want        domain.Product
	}{
		{"nothing", domain.ProductChange{}, false, base()},
		{"same values", domain.ProductChange{Name: ptr("Name of p1"), PriceCents: ptr(int64(1000)), CategoryID: ptr("coffee"), ImageURL: ptr("/img/p1.svg")},
			false, base()},
		{"name only: price version stays", domain.ProductChange{Name: ptr("Renamed")}, true,
			changed(func(p *domain.Product) { p.Name, p.CopyVersion = "Renamed", 1 })},
		{"description", domain.ProductChange{Description: ptr("New description")}, true,
			changed(func(p *domain.Product) { p.Description = "New description" })},
		{"image cleared: the drawn picture takes its place", domain.ProductChange{ImageURL: ptr("")}, true,
			changed(func(p *domain.Product) { p.ImageURL = domain.DrawnImageURL(*p) })},
		{"price: priceVersion +1", domain.ProductChange{PriceCents: ptr(int64(899))}, true,
			changed(func(p *domain.Product) { p.PriceCents, p.PriceVersion, p.CopyVersion = 899, 2, 1 })},
		{"same price: priceVersion stays", domain.ProductChange{PriceCents: ptr(int64(1000)), Name: ptr("Renamed")}, true,
			changed(func(p *domain.Product) { p.Name, p.CopyVersion = "Renamed", 1 })},
		{"category: previousCategoryId set", domain.ProductChange{CategoryID: ptr("kitchen"), CategoryName: ptr("Kitchen")}, true,
			changed(func(p *domain.Product) {
				p.CategoryID, p.CategoryName, p.PreviousCategoryID = "kitchen", "Kitchen", "coffee"
			})},
		{"category name only (a rename)", domain.ProductChange{CategoryName: ptr("Coffee and Tea")}, true,
			changed(func(p *domain.Product) { p.CategoryName = "Coffee and Tea" })},
		{"everything at once: one version", domain.ProductChange{Name: ptr("N"), Description: ptr("D"), PriceCents: ptr(int64(1)), CategoryID: ptr("books"), CategoryName: ptr("Books"), ImageURL: ptr("/i.svg")}, true,
			changed(func(p *domain.Product) {
				p.Name, p.Description, p.PriceCents, p.PriceVersion, p.CopyVersion = "N", "D", 1, 2, 1
				p.CategoryID, p.CategoryName, p.PreviousCategoryID, p.ImageURL = "books", "Books", "coffee", "/i.svg"
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			if got := p.Apply(tt.change, later); got != tt.wantChanged {
				t.Errorf("Apply = %v, want %v", got, tt.wantChanged)
			}
			if diff := cmp.Diff(tt.want, p); diff != "" {
				t.Errorf("product (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDrawnImageFollowsTheProduct: a drawn picture's URL carries the
// version of the name and category it is drawn from, so a rename or a
// move changes it (an immutable cache keeps no old drawing) while a price
// change does not; a picture an admin set elsewhere stays.
func TestDrawnImageFollowsTheProduct(t *testing.T) {
	p := product("p1", 1000)
	p.CategoryID = "audio"
	if !p.KeepImage() {
		t.Fatal("KeepImage on a product without a picture changed nothing")
	}
	drawn := p.ImageURL
	if want := "/v1/products/p1/image.svg?v=" + domain.ImageVersion("audio", p.Name); drawn != want {
		t.Fatalf("image = %q, want %q", drawn, want)
	}
	p.Apply(domain.ProductChange{PriceCents: ptr(int64(900))}, now)
	if p.ImageURL != drawn {
		t.Errorf("a price change moved the picture to %q", p.ImageURL)
	}
	p.Apply(domain.ProductChange{Name: ptr("Portable Speaker")}, now)
	renamed := p.ImageURL
	if renamed == drawn {
		t.Errorf("a rename kept the picture URL %q", drawn)
	}
	p.Apply(domain.ProductChange{CategoryID: ptr("kitchen")}, now)
	if p.ImageURL == renamed {
		t.Errorf("a move to another category kept the picture URL %q", renamed)
	}
	p.Apply(domain.ProductChange{ImageURL: ptr("https://cdn.example/p1.jpg")}, now)
	p.Apply(domain.ProductChange{Name: ptr("Renamed again")}, now)
	if got, want := p.ImageURL, "https://cdn.example/p1.jpg"; got != want {
		t.Errorf("an admin's picture became %q, want it kept: %q", got, want)
	}
}

func TestProductApplyTwoPriceChanges(t *testing.T) {
	p := product("p1", 1000)
	p.Apply(domain.ProductChange{PriceCents: ptr(int64(900))}, now)
	p.Apply(domain.ProductChange{PriceCents: ptr(int64(800))}, now)
	if got, want := p.PriceVersion, int64(3); got != want {
		t.Errorf("priceVersion = %d, want %d", got, want)
	}
	if got, want := p.Version, int64(3); got != want {
		t.Errorf("version = %d, want %d", got, want)
	}
}

func TestProductSoftDelete(t *testing.T) {
	p := product("p1", 1000)
	at := now.In(time.FixedZone("CET", 3600))
	p.SoftDelete(3600, at)
	want := product("p1", 1000)
	want.Deleted, want.TTL, want.Version, want.CopyVersion, want.LastUpdated = true, ptr(3600), 2, 1, now
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("product (-want +got):\n%s", diff)
	}
	if got := p.LastUpdated.Location(); got != time.UTC {
		t.Errorf("lastUpdated location = %v, want UTC", got)
	}
}

func TestSummaryOfProduct(t *testing.T) {
	p := product("p1", 1999)
	p.ETag, p.TS = `"e"`, 7
	p.CategoryID, p.CategoryName, p.Description, p.ImageURL = "coffee", "Coffee & Tea", "Long text", "/img/p1.svg"
	p.ReviewStats = domain.ReviewStats{Count: 3, Average: 4.33, Histogram: [5]int{0, 0, 0, 2, 1}}
	p.TopReviews = []domain.TopReview{{ID: "review-u1", Rating: 5}}
	p.Version = 9
	want := domain.ProductSummary{
		Meta:          domain.Meta{ID: "p1", Type: domain.TypeProductSummary, SchemaVersion: domain.SchemaVersion},
		CategoryID:    "coffee",
		CategoryName:  "Coffee & Tea",
		Name:          "Name of p1",
		PriceCents:    1999,
		Currency:      "USD",
		ImageURL:      "/img/p1.svg",
		AverageRating: 4.33,
		ReviewCount:   3,
		// (4.33 × 3 + 3 × 5) / (3 + 5), four decimals.
		RatingScore:   3.4988,
		SourceVersion: 9,
	}
	if diff := cmp.Diff(want, domain.SummaryOfProduct(p)); diff != "" {
		t.Errorf("SummaryOfProduct (-want +got):\n%s", diff)
	}
}
