package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// X-Session-Token on the embedded store: it is strongly consistent and
// issues no session token, so without a read cache the header never
// appears; what a client sends is opened all the same, so a client learns
// of a broken token on any store (the Cosmos side is tested in
// store/cosmos). A token is sealed with a key of the instance's secret:
// only one the shop issued opens, and a forged, edited or cut one is a
// 400 before any store call.
func TestSessionHeader(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	sealed := api.SealSessionToken(testSecret, "products/0:-1#12,carts/0:1#4#0=2", time.Time{})
	edited := []byte(sealed)
	edited[len(edited)/2] ^= 'A' ^ 'B'
	tests := []struct {
		name   string
		method string
		path   string
		header string
		body   any
		status int
	}{
		{"read without a token", "GET", "/v1/products/book-1", "", nil, http.StatusOK},
		{"read with a token", "GET", "/v1/products/book-1", sealed, nil, http.StatusOK},
		{"write with a token", "PUT", "/v1/cart/items/book-1", sealed, map[string]int{"quantity": 1}, http.StatusOK},
		{"a store's token as is", "GET", "/v1/categories", "products/0:-1#999999", nil, http.StatusBadRequest},
		{"edited", "GET", "/v1/categories", string(edited), nil, http.StatusBadRequest},
		{"cut short", "GET", "/v1/categories", sealed[:len(sealed)-4], nil, http.StatusBadRequest},
		{"sealed by another secret", "GET", "/v1/categories", api.SealSessionToken([]byte("another-secret-of-at-least-32-bytes"), "products/0:-1#12", time.Time{}), nil, http.StatusBadRequest},
		{"over the bound", "GET", "/v1/categories", "s1." + strings.Repeat("a", 8000), nil, http.StatusBadRequest},
		{"a space", "GET", "/v1/cart", sealed + " ", nil, http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.header != "" {
				h["X-Session-Token"] = tc.header
			}
			r := s.do(req{method: tc.method, path: tc.path, token: alice, body: tc.body, header: h}).want(tc.status)
			if got, ok := r.Header()["X-Session-Token"]; ok && tc.status != http.StatusBadRequest {
				t.Errorf("X-Session-Token = %q on the embedded store, want none", got)
			}
			if tc.status == http.StatusBadRequest {
				// The refusal says to drop the token: a client that keeps
				// tokens as the header says recovers on its next request.
				if got, ok := r.Header()["X-Session-Token"]; !ok || got[0] != "" {
					t.Errorf("X-Session-Token = %q, %v on a refused token; want it empty: drop it", got, ok)
				}
				if p := decodeBody[problemBody](t, r); !strings.HasPrefix(p.Detail, "X-Session-Token: ") {
					t.Errorf("detail = %q, want it to name X-Session-Token", p.Detail)
				}
				if got := r.ops(); got != "0" {
					t.Errorf("X-Store-Operations = %s, want 0: refused before any store call", got)
				}
			}
		})
	}
	t.Run("the longest token opens, and the spec says its length", func(t *testing.T) {
		longest := api.SealSessionToken(testSecret, strings.Repeat("a", store.MaxSessionTokenBytes), time.Now())
		if len(longest) != api.MaxSealedBytes {
			t.Errorf("a sealed %d-byte store token is %d bytes, want MaxSealedBytes = %d", store.MaxSessionTokenBytes, len(longest), api.MaxSealedBytes)
		}
		s.do(req{method: "GET", path: "/v1/categories", header: map[string]string{"X-Session-Token": longest}}).want(http.StatusOK)
		spec, err := os.ReadFile("openapi.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(spec), fmt.Sprintf("maxLength: %d", api.MaxSealedBytes)); n != 2 {
			t.Errorf("openapi.yaml gives X-Session-Token maxLength %d %d times, want 2 (the parameter and the header)", api.MaxSealedBytes, n)
		}
	})
	t.Run("sent twice", func(t *testing.T) {
		hr := httptest.NewRequest("GET", "/v1/categories", nil)
		hr.Header["X-Session-Token"] = []string{sealed, sealed}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, hr)
		checkSpec(t, "GET", "/v1/categories", hr.Header, nil, rec)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("status = %d, want 400: %s", rec.Code, rec.Body)
		}
	})
}

// TestACachedScreenIsNeverOlderThanTheClientsWrite: with the read cache on,
// a write hands the client a token that says when it wrote, and a cached
// screen read before that (within the instances' clock skew) is not
// served to it: it reads the store. Other clients still get the entry,
// which the change feed or the max age retires; and an entry read after
// the write is served to the writer too. No follower runs here, so the
// old entry stays for the test's whole length.
func TestACachedScreenIsNeverOlderThanTheClientsWrite(t *testing.T) {
	clock := time.Now() // the Bearer tokens are checked against it
	now := func() time.Time { return clock }
	s := newShop(t, func(o *options) {
		o.cache = readcache.New(readcache.Config{MaxAge: time.Hour, Now: now})
		o.now = now
	})
	s.fixture()
	admin := token(t, "ada", true)
	name := func(r response) string { return decodeBody[domain.Product](t, r).Name }
	timing := func(r response) string { return r.Header().Get("Server-Timing") }

	before := s.do(req{method: "GET", path: "/v1/products/book-1"}).want(http.StatusOK)
	clock = clock.Add(time.Minute)
	patched := s.do(req{method: "PATCH", path: "/v1/products/book-1", token: admin,
		body: map[string]string{"name": "Renamed"}, header: map[string]string{"Content-Type": "application/merge-patch+json"}}).want(http.StatusOK)
	tok := patched.Header().Get("X-Session-Token")
	if tok == "" {
		t.Fatal("a write through a shop with a read cache issued no X-Session-Token")
	}
	clock = clock.Add(100 * time.Millisecond)

	other := s.do(req{method: "GET", path: "/v1/products/book-1"}).want(http.StatusOK)
	if name(other) != name(before) || !strings.Contains(timing(other), "hit") {
		t.Errorf("another client: %q (%s), want the cached %q: a hit", name(other), timing(other), name(before))
	}
	mine := s.do(req{method: "GET", path: "/v1/products/book-1", header: map[string]string{"X-Session-Token": tok}}).want(http.StatusOK)
	if name(mine) != "Renamed" || mine.ops() != "1" || !strings.Contains(timing(mine), "bypass") {
		t.Errorf("the writer, with its token: %q (%s, %s operations), want %q read from the store", name(mine), timing(mine), mine.ops(), "Renamed")
	}

	// An entry read after the write and the skew: the writer's token does
	// not keep it from the cache.
	s.cache.Invalidate("product/book-1")
	clock = clock.Add(2 * time.Second)
	s.do(req{method: "GET", path: "/v1/products/book-1"}).want(http.StatusOK)
	again := s.do(req{method: "GET", path: "/v1/products/book-1", header: map[string]string{"X-Session-Token": tok}}).want(http.StatusOK)
	if name(again) != "Renamed" || !strings.Contains(timing(again), "hit") {
		t.Errorf("the writer, later: %q (%s), want %q from the cache", name(again), timing(again), "Renamed")
	}
}
