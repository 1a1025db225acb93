package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/domain"
)

// TestScreensReadOnce is the shop's first rule (docs/workshop/01-model-around-screens.md):
// every screen renders from ONE store operation, and says so.
//
// With the read cache on, a cached screen's first visit (a miss) is that
// one operation and the next (a hit) none.
func TestScreensReadOnce(t *testing.T) {
	t.Run("NoCache", func(t *testing.T) { screensReadOnce(t, nil) })
	t.Run("Cache", func(t *testing.T) { screensReadOnce(t, readcache.New(readcache.Config{})) })
}

func screensReadOnce(t *testing.T, cache *readcache.Cache) {
	s := newShop(t, func(o *options) { o.cache = cache })
	s.fixture()
	alice := token(t, "alice", false)
	admin := token(t, "boss", true)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	placed := decodeBody[struct{ ID string }](t, s.do(req{method: "POST", path: "/v1/checkout", token: alice, body: address,
		header: map[string]string{"Idempotency-Key": "k1"}}).want(201))

	for _, tc := range []struct {
		name, path, token string
		cached            bool
	}{
		{"Categories", "/v1/categories", "", true},
		{"CategoryPage", "/v1/categories/books/products", "", true},
		{"CategoryPageByPrice", "/v1/categories/books/products?sort=price&limit=1", "", true},
		{"CategoryPageByRating", "/v1/categories/books/products?sort=rating&limit=1", "", true},
		{"SearchOneWord", "/v1/search?q=books", "", false},
		{"SearchThreeWords", "/v1/search?q=Cosmos+patterns+book", "", false},
		{"ProductPage", "/v1/products/book-1", "", true},
		{"Reviews", "/v1/products/book-1/reviews", "", false},
		{"Cart", "/v1/cart", alice, false},
		{"EmptyCart", "/v1/cart", token(t, "newcomer", false), false},
		{"Orders", "/v1/orders", alice, false},
		{"OrderDetail", "/v1/orders/" + placed.ID, alice, false},
		{"Summary", "/v1/me/summary", alice, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(req{method: "GET", path: tc.path, token: tc.token}).want(200)
			if got, want := r.ops(), "1"; got != want {
				t.Errorf("X-Store-Operations = %s, want %s", got, want)
			}
			if r.Header().Get("X-Request-Charge") == "" || r.Header().Get("Server-Timing") == "" {
				t.Errorf("cost headers missing: %v", r.Header())
			}
			if cache == nil || !tc.cached {
				return
			}
			if got := r.Header().Get("Server-Timing"); !strings.HasPrefix(got, `cache;desc="miss", store;`) {
				t.Errorf("miss: Server-Timing = %q, want the cache's miss first", got)
			}
			again := s.do(req{method: "GET", path: tc.path, token: tc.token}).want(200)
			if got, want := again.ops(), "0"; got != want {
				t.Errorf("hit: X-Store-Operations = %s, want %s", got, want)
			}
			if got, want := again.Header().Get("X-Request-Charge"), "0.00"; got != want {
				t.Errorf("hit: X-Request-Charge = %s, want %s", got, want)
			}
			if got := again.Header().Get("Server-Timing"); !strings.HasPrefix(got, `cache;desc="hit, age `) || !strings.HasSuffix(got, `;desc="0 ops, 0.00 RU"`) {
				t.Errorf("hit: Server-Timing = %q, want the cache's hit and no store operation", got)
			}
			if again.Body.String() != r.Body.String() || again.Header().Get("ETag") != r.Header().Get("ETag") {
				t.Errorf("hit: ETag %q body %s\nwant the miss's: ETag %q body %s",
					again.Header().Get("ETag"), again.Body, r.Header().Get("ETag"), r.Body)
			}
		})
	}
	// The one exception: a day of one status is several partitions
	// (every checkout writes today's placed orders, too much for one), and
	// the admin screen reads each once (docs/order-views.md).
	t.Run("AdminOrdersOneDayReadsEachBucketOnce", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/admin/orders?status=placed&day=2026-11-29", token: admin}).want(200)
		if got, want := r.ops(), fmt.Sprint(s.repos.OrderSummaries.Buckets()); got != want {
			t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
	})
}

func TestCatalog(t *testing.T) {
	s := newShop(t)
	s.fixture()

	t.Run("Categories", func(t *testing.T) {
		got := decodeBody[struct{ Items []domain.Category }](t, s.do(req{method: "GET", path: "/v1/categories"}).want(200))
		want := []domain.Category{{ID: "books", Name: "Books", ProductCount: 2}, {ID: "games", Name: "Games", ProductCount: 1}, {ID: "empty", Name: "Empty"}}
		if diff := cmp.Diff(want, got.Items); diff != "" {
			t.Errorf("categories (-want +got):\n%s", diff)
		}
	})
	t.Run("CategoryPageSortsAndPages", func(t *testing.T) {
		type page struct {
			Items []struct {
				ID         string
				PriceCents int64
			}
			Continuation *string
		}
		first := decodeBody[page](t, s.do(req{method: "GET", path: "/v1/categories/books/products?sort=price&limit=1"}).want(200))
		if len(first.Items) != 1 || first.Items[0].ID != "book-2" || first.Continuation == nil {
			t.Fatalf("first page = %+v, want book-2 and a continuation", first)
		}
		second := decodeBody[page](t, s.do(req{method: "GET", path: "/v1/categories/books/products?sort=price&limit=1&continuation=" + *first.Continuation}).want(200))
		if len(second.Items) != 1 || second.Items[0].ID != "book-1" {
			t.Fatalf("second page = %+v, want book-1", second)
		}
	})
	t.Run("CategoryPageByRatingPages", func(t *testing.T) {
		type page struct {
			Items        []struct{ ID string }
			Continuation *string
		}
		// book-1 is rated 4.5 by the fixture's reviews, book-2 not at all.
		first := decodeBody[page](t, s.do(req{method: "GET", path: "/v1/categories/books/products?sort=rating&limit=1"}).want(200))
		if len(first.Items) != 1 || first.Items[0].ID != "book-1" || first.Continuation == nil {
			t.Fatalf("first page = %+v, want book-1 and a continuation", first)
		}
		second := decodeBody[page](t, s.do(req{method: "GET", path: "/v1/categories/books/products?sort=rating&limit=1&continuation=" + *first.Continuation}).want(200))
		if len(second.Items) != 1 || second.Items[0].ID != "book-2" || second.Continuation != nil {
			t.Fatalf("second page = %+v, want book-2 and no continuation", second)
		}
	})
	// An empty first page costs a second read, of the categories index:
	// the view alone cannot tell an empty category from an unknown one.
	t.Run("EmptyCategoryIsAnEmptyPage", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/categories/empty/products"}).want(200)
		if got := decodeBody[struct{ Items []any }](t, r); len(got.Items) != 0 {
			t.Errorf("items = %v, want none", got.Items)
		}
		if got, want := r.ops(), "2"; got != want {
			t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
	})
	t.Run("UnknownCategoryIs404", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/categories/nope/products"}).want(404)
		if got, want := r.ops(), "2"; got != want {
			t.Errorf("X-Store-Operations = %s, want %s", got, want)
		}
	})
	t.Run("ProductPage", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/products/book-1"}).want(200)
		if r.Header().Get("ETag") == "" {
			t.Error("no ETag")
		}
		got := decodeBody[struct {
			TopReviews  []struct{ ProductID, UserID string }
			ReviewStats struct {
				Count     int
				Average   float64
				Histogram [5]int
			}
		}](t, r)
		if len(got.TopReviews) != 2 || got.TopReviews[0].UserID != "sam" || got.TopReviews[0].ProductID != "book-1" {
			t.Errorf("topReviews = %+v, want sam's first", got.TopReviews)
		}
		if got.ReviewStats.Count != 2 || got.ReviewStats.Average != 4.5 || got.ReviewStats.Histogram != [5]int{0, 0, 0, 1, 1} {
			t.Errorf("reviewStats = %+v", got.ReviewStats)
		}
		p := decodeBody[map[string]any](t, r)
		for _, hidden := range []string{"_etag", "_ts", "type", "version", "schemaVersion", "deleted"} {
			if _, ok := p[hidden]; ok {
				t.Errorf("the product page shows %q", hidden)
			}
		}
	})
	t.Run("UnknownProductIs404", func(t *testing.T) {
		s.do(req{method: "GET", path: "/v1/products/nope"}).want(404)
	})
	t.Run("ReservedProductIDIsRefused", func(t *testing.T) {
		s.do(req{method: "GET", path: "/v1/products/categories"}).want(400)
	})
	t.Run("ReviewsNewestFirst", func(t *testing.T) {
		got := decodeBody[struct{ Items []struct{ UserID string } }](t, s.do(req{method: "GET", path: "/v1/products/book-1/reviews"}).want(200))
		if len(got.Items) != 2 || got.Items[0].UserID != "sam" {
			t.Errorf("reviews = %+v, want sam's first", got.Items)
		}
	})
	t.Run("PageSizeOver100Is400", func(t *testing.T) {
		s.do(req{method: "GET", path: "/v1/products/book-1/reviews?limit=101"}).want(400)
	})
	t.Run("BadSortIs400", func(t *testing.T) {
		s.do(req{method: "GET", path: "/v1/categories/books/products?sort=popularity"}).want(400)
	})
	t.Run("ForgedContinuationIs400", func(t *testing.T) {
		s.do(req{method: "GET", path: "/v1/categories/books/products?continuation=forged"}).want(400)
	})
}

func TestReviews(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	body := map[string]any{"rating": 5, "title": "Great", "body": "Loved it."}

	r := s.do(req{method: "POST", path: "/v1/products/book-2/reviews", token: alice, body: body}).want(201)
	got := decodeBody[struct {
		ID, UserID, UserName string
		Rating               int
	}](t, r)
	if got.UserID != "alice" || got.UserName != "User alice" || got.Rating != 5 {
		t.Errorf("review = %+v", got)
	}
	s.do(req{method: "POST", path: "/v1/products/book-2/reviews", token: alice, body: body}).want(409)
	s.do(req{method: "POST", path: "/v1/products/nope/reviews", token: alice, body: body}).want(404)
	s.do(req{method: "POST", path: "/v1/products/book-2/reviews", body: body}).want(401)
	bad := s.do(req{method: "POST", path: "/v1/products/book-1/reviews", token: alice, body: map[string]any{"rating": 6, "title": "x"}}).want(400)
	if p := decodeBody[problemBody](t, bad); len(p.Errors) != 1 || p.Errors[0].Pointer != "/rating" {
		t.Errorf("errors = %+v, want /rating", p.Errors)
	}
}
