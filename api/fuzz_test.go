package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
)

// The fuzz targets drive the real handlers (NewServer over an embedded
// store holding the fixture) with the input in the place a client would
// put it. Whatever the input, the answer is a 2xx or a 4xx problem: a 5xx
// or a panic (withRecover turns it into a 500) fails the target. Seeds
// live in testdata/fuzz/<target>/; .ci/fuzz runs each target for a while.

// fuzzServer is the fixture shop, built once per target.
func fuzzServer(f *testing.F) http.Handler {
	f.Helper()
	s := newShop(f)
	s.fixture()
	return s.handler
}

// fuzzDo sends one request built from fuzzed parts and fails on a 5xx.
// Parts that no HTTP client could send (an unparsable URL) are skipped.
func fuzzDo(t *testing.T, h http.Handler, method, target, tok string, header map[string]string, body string) *httptest.ResponseRecorder {
	t.Helper()
	r, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Skip("not a request a client can send")
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code >= 500 {
		t.Fatalf("%s %s with body %q = %d: %s", method, target, body, w.Code, w.Body.String())
	}
	return w
}

var fuzzAlice, fuzzAdmin = func() (string, string) {
	a, _ := api.IssueToken(testSecret, "alice", "Alice", "alice@example.com", false, 24*time.Hour)
	b, _ := api.IssueToken(testSecret, "boss", "Boss", "boss@example.com", true, 24*time.Hour)
	return a, b
}()

// FuzzCartLine: PUT /v1/cart/items/{productId} {"quantity": n}.
func FuzzCartLine(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, productID, body string) {
		fuzzDo(t, h, "PUT", "/v1/cart/items/"+url.PathEscape(productID), fuzzAlice, nil, body)
	})
}

// FuzzCheckout: POST /v1/checkout with a shipping address and an
// Idempotency-Key, on a cart that holds a line.
func FuzzCheckout(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, key, body string) {
		fuzzDo(t, h, "PUT", "/v1/cart/items/book-1", fuzzAlice, nil, `{"quantity":1}`)
		fuzzDo(t, h, "POST", "/v1/checkout", fuzzAlice, map[string]string{"Idempotency-Key": key}, body)
	})
}

// FuzzReview: POST /v1/products/{productId}/reviews.
func FuzzReview(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, productID, body string) {
		fuzzDo(t, h, "POST", "/v1/products/"+url.PathEscape(productID)+"/reviews", fuzzAlice, nil, body)
	})
}

// FuzzProductCreate: POST /v1/products (admin).
func FuzzProductCreate(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzDo(t, h, "POST", "/v1/products", fuzzAdmin, nil, body)
	})
}

// FuzzProductPatch: PATCH /v1/products/{productId} as a JSON merge patch
// (RFC 7396), with or without If-Match.
func FuzzProductPatch(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, productID, ifMatch, body string) {
		header := map[string]string{"Content-Type": "application/merge-patch+json"}
		if ifMatch != "" {
			header["If-Match"] = ifMatch
		}
		fuzzDo(t, h, "PATCH", "/v1/products/"+url.PathEscape(productID), fuzzAdmin, header, body)
	})
}

// listPaths are the paged screens: each takes ?limit= and ?continuation=.
var listPaths = []string{
	"/v1/categories/books/products",
	"/v1/products/book-1/reviews",
	"/v1/orders",
	"/v1/admin/orders?status=placed&day=2026-11-29&",
	"/v1/search?q=books&",
}

// FuzzListContinuation: the opaque continuation tokens and page sizes
// of every paged screen. A token the server did not issue is a 400.
func FuzzListContinuation(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, limit, continuation string) {
		p := listPaths[int(which)%len(listPaths)]
		sep := "?"
		if strings.Contains(p, "?") {
			sep = ""
		}
		q := url.Values{"limit": {limit}, "continuation": {continuation}}
		fuzzDo(t, h, "GET", p+sep+q.Encode(), fuzzAdmin, nil, "")
	})
}

// FuzzSearch: the query of a search, whatever its text: a page, or a 400
// problem (empty, too long, too many words, control characters, no word
// left), never a 5xx.
func FuzzSearch(f *testing.F) {
	h := fuzzServer(f)
	for _, q := range []string{"books", "Cosmos patterns", "ｍｕｇｓ café", "the of", "a\x00b", strings.Repeat("x ", 6), "\xff\xfe"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		w := fuzzDo(t, h, "GET", "/v1/search?"+url.Values{"q": {q}}.Encode(), "", nil, "")
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("search %q = %d, want 200 or 400: %s", q, w.Code, w.Body.String())
		}
	})
}

// FuzzToken: the Bearer token parser. Only a token this server signed
// opens the cart; anything else is a 401.
func FuzzToken(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, tok string) {
		w := fuzzDo(t, h, "GET", "/v1/cart", "", map[string]string{"Authorization": "Bearer " + tok}, "")
		if w.Code != http.StatusOK && w.Code != http.StatusUnauthorized {
			t.Fatalf("token %q = %d, want 200 or 401", tok, w.Code)
		}
	})
}

// FuzzSmallBodies: the remaining decoders (dev token, category rename,
// order status change) through one target, so CI stays within its time.
func FuzzSmallBodies(f *testing.F) {
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, which uint8, id, body string) {
		switch which % 3 {
		case 0:
			fuzzDo(t, h, "POST", "/v1/dev/token", "", nil, body)
		case 1:
			fuzzDo(t, h, "PUT", "/v1/categories/"+url.PathEscape(id), fuzzAdmin, nil, body)
		case 2:
			fuzzDo(t, h, "PATCH", "/v1/admin/orders/alice/"+url.PathEscape(id), fuzzAdmin, nil, body)
		}
	})
}
