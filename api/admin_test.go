package api_test

import (
	"testing"
)

func TestAdminProducts(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	patch := func(id, body, ifMatch string) response {
		h := map[string]string{"Content-Type": "application/merge-patch+json"}
		if ifMatch != "" {
			h["If-Match"] = ifMatch
		}
		return s.do(req{method: "PATCH", path: "/v1/products/" + id, token: admin, body: body, header: h})
	}
	type product struct {
		ID, Name, CategoryID, CategoryName, Currency string
		PriceCents, PriceVersion                     int64
	}

	t.Run("CreateWithGeneratedID", func(t *testing.T) {
		r := s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
			"name": "Sharding Sagas", "priceCents": 1999, "categoryId": "books", "currency": "EUR",
		}}).want(201)
		p := decodeBody[product](t, r)
		if p.ID == "" || p.CategoryName != "Books" || p.PriceVersion != 1 || p.Currency != "EUR" {
			t.Errorf("created = %+v", p)
		}
		if got, want := r.Header().Get("Location"), "/v1/products/"+p.ID; got != want {
			t.Errorf("Location = %s, want %s", got, want)
		}
		s.do(req{method: "GET", path: "/v1/products/" + p.ID}).want(200)
	})
	t.Run("CreateTakenIDIs409", func(t *testing.T) {
		s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
			"productId": "book-1", "name": "Again", "priceCents": 1, "categoryId": "books",
		}}).want(409)
	})

	etag := s.do(req{method: "GET", path: "/v1/products/book-1"}).want(200).Header().Get("ETag")
	t.Run("PriceChangeIncrementsPriceVersion", func(t *testing.T) {
		r := patch("book-1", `{"priceCents":4499}`, etag).want(200)
		p := decodeBody[product](t, r)
		if p.PriceCents != 4499 || p.PriceVersion != 2 || p.Name != "Go in Practice" {
			t.Errorf("patched = %+v, want price 4499 at priceVersion 2, name kept", p)
		}
		if r.Header().Get("ETag") == etag {
			t.Error("ETag did not change")
		}
	})
	t.Run("StaleIfMatchIs412", func(t *testing.T) {
		patch("book-1", `{"name":"Lost Update"}`, etag).want(412)
	})
	t.Run("NameChangeKeepsPriceVersion", func(t *testing.T) {
		p := decodeBody[product](t, patch("book-1", `{"name":"Go in Practice, 2nd ed."}`, "").want(200))
		if p.PriceVersion != 2 || p.Name != "Go in Practice, 2nd ed." {
			t.Errorf("patched = %+v", p)
		}
	})
	t.Run("CategoryChangeCopiesTheName", func(t *testing.T) {
		p := decodeBody[product](t, patch("book-1", `{"categoryId":"games"}`, "").want(200))
		if p.CategoryID != "games" || p.CategoryName != "Games" {
			t.Errorf("patched = %+v", p)
		}
	})
	t.Run("UnknownCategoryIs400", func(t *testing.T) {
		patch("book-1", `{"categoryId":"nope"}`, "").want(400)
	})
	t.Run("PatchUnknownProductIs404", func(t *testing.T) {
		patch("nope", `{"name":"x"}`, "").want(404)
	})
	t.Run("DeleteIsSoftAnd404After", func(t *testing.T) {
		s.do(req{method: "DELETE", path: "/v1/products/book-2", token: admin}).want(204)
		s.do(req{method: "GET", path: "/v1/products/book-2"}).want(404)
		s.do(req{method: "DELETE", path: "/v1/products/book-2", token: admin}).want(404)
		p, err := s.repos.Products.GetAny(t.Context(), "book-2")
		if err != nil {
			t.Fatal(err)
		}
		if !p.Deleted || p.TTL == nil || *p.TTL != 7*24*3600 {
			t.Errorf("deleted product = deleted %v ttl %v, want soft delete with a 7-day ttl", p.Deleted, p.TTL)
		}
	})
	t.Run("CartOfDeletedProductIs404", func(t *testing.T) {
		s.do(req{method: "PUT", path: "/v1/cart/items/book-2", token: token(t, "alice", false), body: map[string]int{"quantity": 1}}).want(404)
	})
}

func TestAdminCategories(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	type category struct {
		ID, Name     string
		ProductCount int
	}
	r := s.do(req{method: "PUT", path: "/v1/categories/toys", token: admin, body: map[string]string{"name": "Toys"}}).want(201)
	if got := decodeBody[category](t, r); got != (category{ID: "toys", Name: "Toys"}) {
		t.Errorf("created = %+v", got)
	}
	r = s.do(req{method: "PUT", path: "/v1/categories/books", token: admin, body: map[string]string{"name": "Books & Manuals"}}).want(200)
	if got := decodeBody[category](t, r); got != (category{ID: "books", Name: "Books & Manuals", ProductCount: 2}) {
		t.Errorf("renamed = %+v", got)
	}
	list := decodeBody[struct{ Items []category }](t, s.do(req{method: "GET", path: "/v1/categories"}).want(200))
	if len(list.Items) != 4 || list.Items[0].Name != "Books & Manuals" || list.Items[3].ID != "toys" {
		t.Errorf("categories = %+v", list.Items)
	}
	s.do(req{method: "PUT", path: "/v1/categories/toys", token: admin, body: map[string]string{"name": ""}}).want(400)
	// A new category has no products yet: an empty page, not a 404.
	s.do(req{method: "GET", path: "/v1/categories/toys/products"}).want(200)
}
