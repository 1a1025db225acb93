package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchScreen measures one screen through the whole server (router, cost
// middleware, auth, one store read, encoding). Run with -benchmem.
func benchScreen(b *testing.B, path string, authed bool) {
	s := newShop(b)
	s.fixture()
	alice := token(b, "alice", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	o := decodeBody[orderBody](b, checkout(s, alice, "bench", address).want(201))
	s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	if path == "/v1/orders/{id}" {
		path = "/v1/orders/" + o.ID
	}
	r := httptest.NewRequest("GET", path, nil)
	if authed {
		r.Header.Set("Authorization", "Bearer "+alice)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.handler.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%s = %d", path, w.Code)
		}
	}
}

func BenchmarkCategories(b *testing.B)   { benchScreen(b, "/v1/categories", false) }
func BenchmarkCategoryPage(b *testing.B) { benchScreen(b, "/v1/categories/books/products", false) }
func BenchmarkProductPage(b *testing.B)  { benchScreen(b, "/v1/products/book-1", false) }
func BenchmarkReviews(b *testing.B)      { benchScreen(b, "/v1/products/book-1/reviews", false) }
func BenchmarkCart(b *testing.B)         { benchScreen(b, "/v1/cart", true) }
func BenchmarkOrders(b *testing.B)       { benchScreen(b, "/v1/orders", true) }
func BenchmarkOrderDetail(b *testing.B)  { benchScreen(b, "/v1/orders/{id}", true) }
func BenchmarkSummary(b *testing.B)      { benchScreen(b, "/v1/me/summary", true) }

// BenchmarkProductPageBare is the baseline of BenchmarkProductPage: the
// same point read and encoding in a bare handler, with no router, no cost
// headers and no response mapping.
func BenchmarkProductPageBare(b *testing.B) {
	s := newShop(b)
	s.fixture()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.repos.Products.Get(r.Context(), "book-1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		body, _ := json.Marshal(p)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	r := httptest.NewRequest("GET", "/v1/products/book-1", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("bare = %d", w.Code)
		}
	}
}
