package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"shop/store"
)

// X-Session-Token on the embedded store: it is strongly consistent and
// issues no session token, so the header never appears; what a client
// sends is checked all the same, so a client learns of a broken token on
// any store (the Cosmos side is tested in store/cosmos).
func TestSessionHeader(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	tests := []struct {
		name   string
		method string
		path   string
		header string
		body   any
		status int
	}{
		{"read without a token", "GET", "/v1/products/book-1", "", nil, http.StatusOK},
		{"read with a token", "GET", "/v1/products/book-1", "products/0:-1#12,carts/0:1#4#0=2", nil, http.StatusOK},
		{"write with a token", "PUT", "/v1/cart/items/book-1", "carts/0:-1#3", map[string]int{"quantity": 1}, http.StatusOK},
		{"a token the store cannot read is ignored", "GET", "/v1/categories", "not/a:token", nil, http.StatusOK},
		{"at the bound", "GET", "/v1/categories", strings.Repeat("a", store.MaxSessionTokenBytes), nil, http.StatusOK},
		{"over the bound", "GET", "/v1/categories", strings.Repeat("a", store.MaxSessionTokenBytes+1), nil, http.StatusBadRequest},
		{"a space", "GET", "/v1/cart", "carts/0:-1#3, orders/0:-1#4", nil, http.StatusBadRequest},
		{"a semicolon", "GET", "/v1/me/summary", "orders/0:-1#3;x", nil, http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.header != "" {
				h["X-Session-Token"] = tc.header
			}
			r := s.do(req{method: tc.method, path: tc.path, token: alice, body: tc.body, header: h}).want(tc.status)
			if got, ok := r.Header()["X-Session-Token"]; ok {
				t.Errorf("X-Session-Token = %q on the embedded store, want none", got)
			}
			if tc.status == http.StatusBadRequest {
				if p := decodeBody[problemBody](t, r); !strings.HasPrefix(p.Detail, "X-Session-Token: ") {
					t.Errorf("detail = %q, want it to name X-Session-Token", p.Detail)
				}
				if got := r.ops(); got != "0" {
					t.Errorf("X-Store-Operations = %s, want 0: refused before any store call", got)
				}
			}
		})
	}
	t.Run("sent twice", func(t *testing.T) {
		hr := httptest.NewRequest("GET", "/v1/categories", nil)
		hr.Header["X-Session-Token"] = []string{"products/0:-1#1", "products/0:-1#2"}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, hr)
		checkSpec(t, "GET", "/v1/categories", hr.Header, nil, rec)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("status = %d, want 400: %s", rec.Code, rec.Body)
		}
	})
}
