package api_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// variantLine is a cart or order line as the variant tests look at it.
type variantLine struct {
	ProductID      string
	SKU            string
	Attributes     map[string]string
	UnitPriceCents int64
	Quantity       int
	Available      bool
}

type variantProduct struct {
	ID           string
	PriceCents   int64
	PriceVersion int64
	Availability struct{ Status string }
	Variants     []struct {
		SKU          string
		Attributes   map[string]string
		PriceCents   int64
		Availability struct{ Status string }
	}
}

type summaryPage struct {
	Items []struct {
		ID            string
		PriceCents    int64
		PriceMaxCents int64
		Attributes    []string
	}
	Continuation *string
}

// teeVariants is the T-shirt's variants as the admin sends them.
func teeVariants(mNavyPrice int64) []map[string]any {
	return []map[string]any{
		{"sku": "tee-s-navy", "attributes": map[string]string{"size": "S", "colour": "navy"}, "priceCents": 1500, "stock": 20},
		{"sku": "tee-m-navy", "attributes": map[string]string{"size": "M", "colour": "navy"}, "priceCents": mNavyPrice, "stock": 1},
		{"sku": "tee-m-red", "attributes": map[string]string{"size": "M", "colour": "red"}, "priceCents": 1700},
	}
}

// variantCatalog adds, through the admin API, a T-shirt in three
// variants, a cap in size M and a hoodie in size L to the fixture's books,
// and runs the products feed over them (the category page's summaries).
func (s *shop) variantCatalog() {
	s.t.Helper()
	admin := token(s.t, "boss", true)
	for _, body := range []map[string]any{
		{"productId": "tee", "name": "Tee", "categoryId": "books", "stock": 5, "variants": teeVariants(1700)},
		{"productId": "cap", "name": "Cap", "categoryId": "books", "stock": 5, "variants": []map[string]any{
			{"sku": "cap-m", "attributes": map[string]string{"size": "M", "colour": "red"}, "priceCents": 900},
		}},
		{"productId": "hoodie", "name": "Hoodie", "categoryId": "books", "stock": 5, "variants": []map[string]any{
			{"sku": "hoodie-l", "attributes": map[string]string{"size": "L", "colour": "navy"}, "priceCents": 4000},
		}},
	} {
		s.do(req{method: "POST", path: "/v1/products", token: admin, body: body}).want(201)
	}
	s.indexProducts("tee", "cap", "hoodie")
}

// TestVariantsOverHTTP: a product with variants, created by the admin,
// read on its page, bought in two of its variants (each a line of its
// own, with its attributes and price), repriced per variant (the cart
// follows by the products feed), counted per SKU, and checked out: the
// order names the variants, and a sold-out variant refuses the checkout
// by its SKU while the other still sells.
func TestVariantsOverHTTP(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	alice := token(t, "alice", false)

	created := decodeBody[variantProduct](t, s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
		"productId": "tee", "name": "Tee", "categoryId": "books", "stock": 5, "variants": teeVariants(1700),
	}}).want(201))
	if created.PriceCents != 1500 || created.PriceVersion != 1 || len(created.Variants) != 3 {
		t.Fatalf("created = %+v, want priced from 1500 (the lowest variant), three variants", created)
	}
	status := map[string]string{}
	for _, v := range created.Variants {
		status[v.SKU] = v.Availability.Status
	}
	if diff := cmp.Diff(map[string]string{"tee-s-navy": "in_stock", "tee-m-navy": "low_stock", "tee-m-red": "low_stock"}, status); diff != "" {
		t.Errorf("variants' availability from their stock (-want +got):\n%s", diff)
	}
	s.indexProducts("tee")

	page := s.do(req{method: "GET", path: "/v1/products/tee"}).want(200)
	if got := page.ops(); got != "1" {
		t.Errorf("product page: X-Store-Operations %s, want 1", got)
	}
	if page.Header().Get("X-Request-Charge") == "" || page.Header().Get("Server-Timing") == "" {
		t.Errorf("product page: cost headers missing: %v", page.Header())
	}
	if p := decodeBody[variantProduct](t, page); len(p.Variants) != 3 || p.Variants[1].Attributes["size"] != "M" || p.Variants[1].PriceCents != 1700 {
		t.Errorf("product page = %+v, want the three variants", p)
	}

	s.do(req{method: "POST", path: "/v1/cart/items/tee?sku=tee-s-navy", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	cart := decodeBody[struct{ Items []variantLine }](t,
		s.do(req{method: "PUT", path: "/v1/cart/items/tee?sku=tee-m-navy", token: alice, body: map[string]int{"quantity": 1}}).want(200))
	want := []variantLine{
		{ProductID: "tee", SKU: "tee-s-navy", Attributes: map[string]string{"size": "S", "colour": "navy"}, UnitPriceCents: 1500, Quantity: 2, Available: true},
		{ProductID: "tee", SKU: "tee-m-navy", Attributes: map[string]string{"size": "M", "colour": "navy"}, UnitPriceCents: 1700, Quantity: 1, Available: true},
	}
	if diff := cmp.Diff(want, cart.Items); diff != "" {
		t.Errorf("cart lines (-want +got):\n%s", diff)
	}

	// One variant's price: the whole list, as a merge patch replaces it.
	patched := decodeBody[variantProduct](t, s.do(req{method: "PATCH", path: "/v1/products/tee", token: admin,
		body:   map[string]any{"variants": teeVariants(1800)},
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).want(200))
	if patched.PriceVersion != 2 || patched.PriceCents != 1500 {
		t.Errorf("patched = %+v, want priceVersion 2, still from 1500", patched)
	}
	s.indexProducts("tee") // the products feed: the cart fan-out
	cart = decodeBody[struct{ Items []variantLine }](t, s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200))
	want[1].UnitPriceCents = 1800
	if diff := cmp.Diff(want, cart.Items); diff != "" {
		t.Errorf("cart lines after the variant's new price (-want +got):\n%s", diff)
	}

	// Stock per SKU.
	stock := func(sku string) stockBody {
		t.Helper()
		return decodeBody[stockBody](t, s.do(req{method: "GET", path: "/v1/admin/products/tee/stock?sku=" + sku, token: admin}).want(200))
	}
	s.do(req{method: "PUT", path: "/v1/admin/products/tee/stock?sku=tee-m-navy", token: admin, body: map[string]int{"available": 1}}).want(200)
	if got := stock("tee-m-navy"); got.SKU != "tee-m-navy" || got.Available != 1 {
		t.Errorf("stock of tee-m-navy = %+v, want 1", got)
	}
	if got := stock("tee-s-navy"); got.SKU != "tee-s-navy" || got.Available != 20 {
		t.Errorf("stock of tee-s-navy = %+v, want 20, its own stock from the create", got)
	}

	o := decodeBody[orderBody](t, checkout(s, alice, "k1", address).want(201))
	var lines []variantLine
	for _, l := range o.Items {
		lines = append(lines, variantLine{ProductID: l.ProductID, SKU: l.SKU, Attributes: l.Attributes, UnitPriceCents: l.UnitPriceCents, Quantity: l.Quantity, Available: true})
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("order lines (-want +got):\n%s", diff)
	}
	if o.TotalCents != 2*1500+1800 {
		t.Errorf("order total = %d, want %d", o.TotalCents, 2*1500+1800)
	}
	if got := stock("tee-m-navy"); got.Available != 0 {
		t.Errorf("stock of tee-m-navy after the sale = %d, want 0", got.Available)
	}
	if got := stock("tee-s-navy"); got.Available != 18 {
		t.Errorf("stock of tee-s-navy after the sale = %d, want 18", got.Available)
	}

	// tee-m-navy is sold out: the checkout is refused naming its SKU.
	s.do(req{method: "PUT", path: "/v1/cart/items/tee?sku=tee-s-navy", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	s.do(req{method: "PUT", path: "/v1/cart/items/tee?sku=tee-m-navy", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	refused := checkout(s, alice, "k2", address).want(409)
	p := decodeBody[problemBody](t, refused)
	if p.Type != "https://shop.example/problems/out-of-stock" || len(p.Items) != 1 ||
		p.Items[0].ProductID != "tee" || p.Items[0].SKU != "tee-m-navy" || p.Items[0].Requested != 1 || p.Items[0].Available != 0 {
		t.Errorf("sold-out variant's checkout: %s, want an out-of-stock problem naming tee/tee-m-navy", refused.Body)
	}
	if got := stock("tee-s-navy"); got.Available != 18 {
		t.Errorf("stock of tee-s-navy after the refusal = %d, want 18: nothing reserved", got.Available)
	}
	s.do(req{method: "DELETE", path: "/v1/cart/items/tee?sku=tee-m-navy", token: alice}).want(200)
	o = decodeBody[orderBody](t, checkout(s, alice, "k3", address).want(201))
	if len(o.Items) != 1 || o.Items[0].SKU != "tee-s-navy" || o.Items[0].Quantity != 1 {
		t.Errorf("order of the other variant = %+v, want one tee-s-navy", o.Items)
	}
	if got := stock("tee-s-navy"); got.Available != 17 {
		t.Errorf("stock of tee-s-navy = %d, want 17", got.Available)
	}
}

// TestCategoryPageFilters: ?size=M lists the products having a variant of
// size M, in ONE store query, whatever the sort and the page; filters
// are ANDed; and the read cache keeps each filter's page apart.
func TestCategoryPageFilters(t *testing.T) {
	s := newShop(t)
	s.fixture()
	s.variantCatalog()

	pageOf := func(path string) summaryPage {
		t.Helper()
		r := s.do(req{method: "GET", path: path}).want(200)
		if got := r.ops(); got != "1" {
			t.Errorf("GET %s: X-Store-Operations %s, want 1", path, got)
		}
		if r.Header().Get("X-Request-Charge") == "" {
			t.Errorf("GET %s: no X-Request-Charge", path)
		}
		return decodeBody[summaryPage](t, r)
	}
	ids := func(p summaryPage) (out []string) {
		for _, it := range p.Items {
			out = append(out, it.ID)
		}
		return out
	}

	all := pageOf("/v1/categories/books/products")
	if got, want := ids(all), []string{"cap", "book-2", "book-1", "hoodie", "tee"}; !slices.Equal(got, want) {
		t.Errorf("unfiltered page = %v, want %v", got, want)
	}
	for _, it := range all.Items {
		switch it.ID {
		case "tee":
			if it.PriceCents != 1500 || it.PriceMaxCents != 1700 ||
				!slices.Equal(it.Attributes, []string{"colour=navy", "colour=red", "size=M", "size=S"}) {
				t.Errorf("tee's summary = %+v, want from 1500 to 1700 and its attribute values", it)
			}
		case "book-1":
			if it.PriceMaxCents != 0 || it.Attributes != nil {
				t.Errorf("a product without variants = %+v, want no price range or attributes", it)
			}
		}
	}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"size=M", []string{"cap", "tee"}},
		{"size=M&sort=price", []string{"cap", "tee"}},
		{"sort=rating&size=M", []string{"tee", "cap"}}, // ties by id descending
		{"size=L", []string{"hoodie"}},
		{"size=M&colour=navy", []string{"tee"}},
		{"colour=navy&size=M", []string{"tee"}},
		{"size=M&colour=red", []string{"cap", "tee"}},
		{"size=XL", nil},
	} {
		if got := ids(pageOf("/v1/categories/books/products?" + tc.query)); !slices.Equal(got, tc.want) {
			t.Errorf("?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	if got := ids(pageOf("/v1/categories/no-such-category/products?size=M")); got != nil {
		t.Errorf("a filter in an unknown category = %v, want an empty page", got)
	}

	t.Run("Paging", func(t *testing.T) {
		for _, sort := range []string{"name", "price", "rating"} {
			var got []string
			path := "/v1/categories/books/products?size=M&limit=1&sort=" + sort
			for cont := ""; ; {
				p := path
				if cont != "" {
					p += "&continuation=" + url.QueryEscape(cont)
				}
				page := pageOf(p)
				if len(page.Items) > 1 {
					t.Fatalf("%s: %d items, want at most 1", p, len(page.Items))
				}
				got = append(got, ids(page)...)
				if page.Continuation == nil {
					break
				}
				cont = *page.Continuation
				if len(got) > 3 {
					t.Fatalf("%s: pages without end: %v", path, got)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, []string{"cap", "tee"}) {
				t.Errorf("sort=%s, one by one: %v, want cap and tee", sort, got)
			}
		}
	})
}
