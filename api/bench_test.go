package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
)

// benchScreen measures one screen through the whole server (router, cost
// middleware, auth, one store read, encoding). Run with -benchmem.
func benchScreen(b *testing.B, path string, authed bool, opts ...func(*options)) {
	s := newShop(b, opts...)
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
	serve(b, s.handler, r)
}

// serve runs the benchmark loop and reports what one request cost the
// store, from the response's own headers: store-ops/op and RU/op.
func serve(b *testing.B, h http.Handler, r *http.Request) {
	b.ReportAllocs()
	b.ResetTimer()
	var w *httptest.ResponseRecorder
	for b.Loop() {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("%s = %d", r.URL, w.Code)
		}
	}
	ops, _ := strconv.ParseFloat(w.Header().Get("X-Store-Operations"), 64)
	ru, _ := strconv.ParseFloat(w.Header().Get("X-Request-Charge"), 64)
	b.ReportMetric(ops, "store-ops/op")
	b.ReportMetric(ru, "RU/op")
}

func BenchmarkCategories(b *testing.B)   { benchScreen(b, "/v1/categories", false) }
func BenchmarkCategoryPage(b *testing.B) { benchScreen(b, "/v1/categories/books/products", false) }
func BenchmarkProductPage(b *testing.B)  { benchScreen(b, "/v1/products/book-1", false) }
func BenchmarkReviews(b *testing.B)      { benchScreen(b, "/v1/products/book-1/reviews", false) }
func BenchmarkCart(b *testing.B)         { benchScreen(b, "/v1/cart", true) }
func BenchmarkOrders(b *testing.B)       { benchScreen(b, "/v1/orders", true) }
func BenchmarkOrderDetail(b *testing.B)  { benchScreen(b, "/v1/orders/{id}", true) }
func BenchmarkSummary(b *testing.B)      { benchScreen(b, "/v1/me/summary", true) }

// BenchmarkProductPageServed is the product page through the server as
// shop serve builds it by default: telemetry (spans without an exporter,
// metrics), the traced store, the request log and the request timeout.
func BenchmarkProductPageServed(b *testing.B) {
	benchScreen(b, "/v1/products/book-1", false, func(o *options) { o.served = true })
}

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

// benchAdminOrders measures the admin view by status over days of orders
// (20 placed orders a day, as the orders feed writes them).
func benchAdminOrders(b *testing.B, query string) {
	s := newShop(b)
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for d := range 14 {
		for i := range 20 {
			o := domain.Order{Meta: domain.Meta{ID: fmt.Sprintf("o-%02d-%02d", d, i)}, UserID: fmt.Sprintf("u-%d", i),
				Status: domain.StatusPlaced, CreatedAt: start.AddDate(0, 0, d).Add(time.Duration(i) * time.Minute),
				TotalCents: 1000, ItemCount: 1, Version: 1}
			if _, err := s.repos.OrderSummaries.Put(context.Background(), domain.SummaryOf(o, s.repos.OrderSummaries.Buckets())); err != nil {
				b.Fatal(err)
			}
		}
	}
	r := httptest.NewRequest("GET", "/v1/admin/orders?status=placed&"+query, nil)
	r.Header.Set("Authorization", "Bearer "+token(b, "boss", true))
	serve(b, s.handler, r)
}

func BenchmarkAdminOrdersOneDay(b *testing.B) { benchAdminOrders(b, "day=2026-11-05") }
func BenchmarkAdminOrdersSevenDays(b *testing.B) {
	benchAdminOrders(b, "from=2026-11-02&to=2026-11-08")
}

// BenchmarkCartServed is the cart through the server as shop serve
// builds it by default (see BenchmarkProductPageServed).
func BenchmarkCartServed(b *testing.B) {
	benchScreen(b, "/v1/cart", true, func(o *options) { o.served = true })
}

// BenchmarkSummaryServed is my account's screen through the same stack:
// beside BenchmarkCartServed, what the cart's answer adds.
func BenchmarkSummaryServed(b *testing.B) {
	benchScreen(b, "/v1/me/summary", true, func(o *options) { o.served = true })
}

// BenchmarkCategoryPageServed is the category page through the served
// stack: a page of summaries, each rendered by the render memo.
func BenchmarkCategoryPageServed(b *testing.B) {
	benchScreen(b, "/v1/categories/books/products", false, func(o *options) { o.served = true })
}

// BenchmarkSearchServed is search through the served stack: one query
// on the search word's partition of productsByTerm.
func BenchmarkSearchServed(b *testing.B) {
	benchScreen(b, "/v1/search?q=book", false, func(o *options) { o.served = true })
}
