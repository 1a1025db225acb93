package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/domain"
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

// TestVariantsBadInput: every wrong SKU, variant list or filter is a
// problem naming what is wrong (400, 404), never a 500.
func TestVariantsBadInput(t *testing.T) {
	s := newShop(t)
	s.fixture()
	s.variantCatalog()
	alice := token(t, "alice", false)
	admin := token(t, "boss", true)
	variant := func(sku string, attrs map[string]string, price int) map[string]any {
		return map[string]any{"sku": sku, "attributes": attrs, "priceCents": price}
	}
	size := func(v string) map[string]string { return map[string]string{"size": v} }
	create := func(vs ...map[string]any) map[string]any {
		return map[string]any{"name": "Sock", "categoryId": "books", "variants": append([]map[string]any{}, vs...)}
	}
	many := func(n int) []map[string]any {
		var vs []map[string]any
		for i := range n {
			vs = append(vs, variant(fmt.Sprintf("sku-%d", i), size(fmt.Sprint(i)), 100))
		}
		return vs
	}
	one := []byte(`{"quantity":1}`)
	for _, tc := range []struct {
		name         string
		method, path string
		tok          string
		body         any
		want         int
		pointer      string
	}{
		{"CartLineWithoutSKU", "PUT", "/v1/cart/items/tee", alice, one, 400, "/sku"},
		{"CartAddWithoutSKU", "POST", "/v1/cart/items/tee", alice, one, 400, "/sku"},
		{"CartSKUOfAProductWithoutVariants", "PUT", "/v1/cart/items/book-1?sku=tee-s-navy", alice, one, 404, ""},
		{"CartUnknownSKU", "PUT", "/v1/cart/items/tee?sku=tee-xl", alice, one, 404, ""},
		{"CartAnotherProductsSKU", "POST", "/v1/cart/items/tee?sku=cap-m", alice, one, 404, ""},
		{"CartMalformedSKU", "PUT", "/v1/cart/items/tee?sku=tee%20s", alice, one, 400, "/sku"},
		{"CartLongSKU", "PUT", "/v1/cart/items/tee?sku=" + strings.Repeat("s", 65), alice, one, 400, "/sku"},
		{"CartDeleteMalformedSKU", "DELETE", "/v1/cart/items/tee?sku=a/b", alice, nil, 400, "/sku"},
		{"StockUnknownSKU", "GET", "/v1/admin/products/tee/stock?sku=tee-xl", admin, nil, 404, ""},
		{"StockMalformedSKU", "GET", "/v1/admin/products/tee/stock?sku=%C3%A9", admin, nil, 400, "/sku"},
		{"StockSetWithoutSKU", "PUT", "/v1/admin/products/tee/stock", admin, map[string]int{"available": 3}, 400, "/sku"},
		{"StockSetUnknownSKU", "PUT", "/v1/admin/products/tee/stock?sku=tee-xl", admin, map[string]int{"available": 3}, 404, ""},
		{"StockSetSKUOfAProductWithoutVariants", "PUT", "/v1/admin/products/book-1/stock?sku=x", admin, map[string]int{"available": 3}, 404, ""},
		{"CreateWithPriceAndVariants", "POST", "/v1/products", admin, map[string]any{"name": "Sock", "categoryId": "books", "priceCents": 100,
			"variants": []map[string]any{variant("s", size("M"), 100)}}, 400, "/priceCents"},
		{"CreateWithoutPriceOrVariants", "POST", "/v1/products", admin, map[string]any{"name": "Sock", "categoryId": "books"}, 400, "/priceCents"},
		{"CreateWithNoVariantsAndNoPrice", "POST", "/v1/products", admin, create(), 400, "/priceCents"},
		{"CreateDuplicateSKU", "POST", "/v1/products", admin, create(variant("s", size("M"), 100), variant("s", size("L"), 100)), 400, "/variants/1/sku"},
		{"CreateMalformedSKU", "POST", "/v1/products", admin, create(variant("s m", size("M"), 100)), 400, "/variants/0/sku"},
		{"CreateAttributeNamesDiffer", "POST", "/v1/products", admin, create(variant("a", size("M"), 100), variant("b", map[string]string{"colour": "red"}, 100)), 400, "/variants/1/attributes"},
		{"CreateSameValuesTwice", "POST", "/v1/products", admin, create(variant("a", size("M"), 100), variant("b", size("M"), 200)), 400, "/variants/1/attributes"},
		{"CreateMoreThan50", "POST", "/v1/products", admin, create(many(51)...), 400, "/variants"},
		{"CreateMoreThan4Attributes", "POST", "/v1/products", admin, create(variant("a", map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1"}, 100)), 400, "/variants/0/attributes"},
		{"CreateBadAttributeName", "POST", "/v1/products", admin, create(variant("a", map[string]string{"Size!": "M"}, 100)), 400, "/variants/0/attributes"},
		{"CreateValueWithEquals", "POST", "/v1/products", admin, create(variant("a", size("M=L"), 100)), 400, "/variants/0/attributes/size"},
		{"CreateValueWithComma", "POST", "/v1/products", admin, create(variant("a", size("M,L"), 100)), 400, "/variants/0/attributes/size"},
		{"CreateEmptyAttributes", "POST", "/v1/products", admin, create(variant("a", map[string]string{}, 100)), 400, "/variants/0/attributes"},
		{"CreateNullAttributeValue", "POST", "/v1/products", admin, `{"name":"Sock","categoryId":"books","variants":[{"sku":"a","attributes":{"size":null},"priceCents":100}]}`, 400, "/variants/0/attributes/size"},
		{"CreateZeroPrice", "POST", "/v1/products", admin, create(variant("a", size("M"), 0)), 400, "/variants/0/priceCents"},
		// A value of the wrong type inside the array is named by its index.
		{"CreateAttributesOfTheWrongType", "POST", "/v1/products", admin, `{"name":"Sock","categoryId":"books","variants":[{"sku":"a","attributes":{"size":"M"},"priceCents":100},{"sku":"b","attributes":["L"],"priceCents":100}]}`, 400, "/variants/1/attributes"},
		{"CreatePriceNotAnInteger", "POST", "/v1/products", admin, `{"name":"Sock","categoryId":"books","variants":[{"sku":"a","attributes":{"size":"M"},"priceCents":1e30}]}`, 400, "/variants/0/priceCents"},
		{"CreateAttributeNamedLimit", "POST", "/v1/products", admin, create(variant("a", map[string]string{"limit": "big"}, 100)), 400, "/variants/0/attributes"},
		{"PatchPriceOfAVariantProduct", "PATCH", "/v1/products/tee", admin, `{"priceCents":100}`, 400, "/priceCents"},
		{"PatchPriceWithVariants", "PATCH", "/v1/products/book-1", admin, `{"priceCents":100,"variants":[{"sku":"a","attributes":{"size":"M"},"priceCents":100}]}`, 400, "/priceCents"},
		{"PatchDuplicateSKU", "PATCH", "/v1/products/tee", admin, map[string]any{"variants": []map[string]any{variant("s", size("M"), 100), variant("s", size("L"), 100)}}, 400, "/variants/1/sku"},
		{"PatchMoreThan50", "PATCH", "/v1/products/tee", admin, map[string]any{"variants": many(51)}, 400, "/variants"},
		{"PatchZeroPrice", "PATCH", "/v1/products/tee", admin, map[string]any{"variants": []map[string]any{variant("a", size("M"), 0)}}, 400, "/variants/0/priceCents"},
		{"FilterRepeated", "GET", "/v1/categories/books/products?size=M&size=L", "", nil, 400, "/size"},
		{"FilterBadName", "GET", "/v1/categories/books/products?Size%21=M", "", nil, 400, "/Size!"},
		{"FilterEmptyValue", "GET", "/v1/categories/books/products?size=", "", nil, 400, "/size"},
		{"FilterValueWithEquals", "GET", "/v1/categories/books/products?size=M%3DL", "", nil, 400, "/size"},
		{"FilterBidiOverride", "GET", "/v1/categories/books/products?size=%E2%80%AEM", "", nil, 400, "/size"},
		{"CreateValueWithBidiOverride", "POST", "/v1/products", admin, create(variant("a", size("\u202eLX"), 100)), 400, "/variants/0/attributes/size"},
		{"FilterLongValue", "GET", "/v1/categories/books/products?size=" + strings.Repeat("m", 41), "", nil, 400, "/size"},
		{"FiveFilters", "GET", "/v1/categories/books/products?a=1&b=1&c=1&d=1&e=1", "", nil, 400, ""},
		{"FilterWithABadSort", "GET", "/v1/categories/books/products?size=M&sort=size", "", nil, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.method == "PATCH" {
				h["Content-Type"] = "application/merge-patch+json"
			}
			r := s.do(req{method: tc.method, path: tc.path, token: tc.tok, body: tc.body, header: h}).want(tc.want)
			if ct := r.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q, want a problem", ct)
			}
			p := decodeBody[problemBody](t, r)
			if p.Status != tc.want {
				t.Errorf("problem = %+v", p)
			}
			if tc.pointer != "" && (len(p.Errors) == 0 || p.Errors[0].Pointer != tc.pointer) {
				t.Errorf("errors = %+v, want the first at %s", p.Errors, tc.pointer)
			}
		})
	}

	t.Run("AContinuationOfAnotherFilter", func(t *testing.T) {
		page := decodeBody[summaryPage](t, s.do(req{method: "GET", path: "/v1/categories/books/products?size=M&limit=1"}).want(200))
		if page.Continuation == nil {
			t.Fatal("no second page")
		}
		r := s.do(req{method: "GET", path: "/v1/categories/books/products?size=L&limit=1&continuation=" + url.QueryEscape(*page.Continuation)})
		if r.Code != 400 {
			t.Errorf("a continuation of ?size=M with ?size=L: %d %s, want 400", r.Code, r.Body)
		}
	})
}

// TestCacheKeyDistinguishesFilters: with the read cache on, each filter
// is a page of its own (a miss, one read), and the same filters in
// another order are the same page (a hit, none).
func TestCacheKeyDistinguishesFilters(t *testing.T) {
	s := newShop(t, func(o *options) { o.cache = readcache.New(readcache.Config{MaxAge: time.Hour}) })
	s.fixture()
	s.variantCatalog()
	for _, tc := range []struct {
		query, ops string
		want       []string
	}{
		{"size=M", "1", []string{"cap", "tee"}},
		{"size=L", "1", []string{"hoodie"}},
		{"size=M&colour=navy", "1", []string{"tee"}},
		{"colour=navy&size=M", "0", []string{"tee"}},
		{"size=M", "0", []string{"cap", "tee"}},
		{"", "1", []string{"cap", "book-2", "book-1", "hoodie", "tee"}},
	} {
		r := s.do(req{method: "GET", path: "/v1/categories/books/products?" + tc.query}).want(200)
		if got := r.ops(); got != tc.ops {
			t.Errorf("?%s: X-Store-Operations %s, want %s (Server-Timing %q)", tc.query, got, tc.ops, r.Header().Get("Server-Timing"))
		}
		var ids []string
		for _, it := range decodeBody[summaryPage](t, r).Items {
			ids = append(ids, it.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("?%s = %v, want %v", tc.query, ids, tc.want)
		}
	}
}

// TestVariantEventsMatchTheSpec: the webhook bodies of a product with
// variants and of an order of variants are what openapi.yaml's event
// schemas say (no response check sees them: the dispatcher sends them).
func TestVariantEventsMatchTheSpec(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(schema string, e domain.Event) {
		t.Helper()
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := doc.Components.Schemas[schema].Value.VisitJSON(v); err != nil {
			t.Errorf("%s %s: %v", schema, b, err)
		}
	}
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	p := domain.Product{Meta: domain.Meta{ID: "tee"}, Name: "Tee", CategoryID: "books", Currency: "USD", PriceVersion: 1, Version: 1, LastUpdated: now}
	vs := []domain.Variant{
		{SKU: "tee-m", Attributes: map[string]string{"size": "M"}, PriceCents: 1500},
		{SKU: "tee-l", Attributes: map[string]string{"size": "L"}, PriceCents: 1700},
	}
	p.SetVariants(vs)
	vs[1].PriceCents = 1900
	p.Apply(domain.ProductChange{Variants: &vs}, now)
	events := domain.ProductEventsOf(p)
	if len(events) != 1 || len(events[0].Product.Variants) != 2 {
		t.Fatalf("events = %+v, want a price change naming both variants", events)
	}
	check("ProductEvent", events[0])

	o := domain.Order{Meta: domain.Meta{ID: "o-1"}, UserID: "alice", Status: domain.StatusPlaced, CreatedAt: now, LastUpdated: now,
		Items:           []domain.OrderLine{{ProductID: "tee", SKU: "tee-m", Attributes: map[string]string{"size": "M"}, Name: "Tee", UnitPriceCents: 1500, Quantity: 1, LineTotalCents: 1500}},
		ShippingAddress: domain.Address{Name: "A", Line1: "B", City: "C", PostalCode: "D", Country: "GB"},
		Rejection:       &domain.Rejection{Reason: domain.RejectedOutOfStock, Shortages: []domain.Shortage{{ProductID: "tee", SKU: "tee-m", Requested: 1}}},
		History:         []domain.Step{{From: domain.StatusAuthorized, To: domain.StatusPlaced, At: now}},
	}
	e, ok := domain.NewOrderEvent(o, domain.StatusAuthorized)
	if !ok {
		t.Fatal("no event of a placed order")
	}
	check("OrderEvent", e)
}
