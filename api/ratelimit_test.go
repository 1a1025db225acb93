package api_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// limitedShop is a server whose callers get `user` requests per hour when
// authenticated and `anon` per client address otherwise.
func limitedShop(t *testing.T, user, anon int) http.Handler {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), nil, nil), Store: st, Secret: testSecret,
		RateLimit: api.RateLimit{User: user, Anon: anon, Window: time.Hour}})
}

// call sends GET path from addr with the token (if any) and returns the
// recorded response.
func call(h http.Handler, path, addr, tok string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	r.RemoteAddr = addr
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestRateLimit(t *testing.T) {
	const sameAddr = "192.0.2.1:4000"
	t.Run("OverTheLimitIs429ProblemWithRetryAfter", func(t *testing.T) {
		h := limitedShop(t, 3, 3)
		tok := token(t, "ann", false)
		for i := range 3 {
			if w := call(h, "/v1/cart", sameAddr, tok); w.Code == http.StatusTooManyRequests {
				t.Fatalf("request %d of 3 was refused", i+1)
			}
		}
		w := call(h, "/v1/cart", sameAddr, tok)
		if got, want := w.Code, http.StatusTooManyRequests; got != want {
			t.Fatalf("4th request = %d, want %d", got, want)
		}
		if got, want := w.Header().Get("Content-Type"), "application/problem+json"; got != want {
			t.Errorf("Content-Type = %q, want %q", got, want)
		}
		if got, want := w.Header().Get("Retry-After"), "3600"; got != want {
			t.Errorf("Retry-After = %q, want %q (the window)", got, want)
		}
		if got, want := w.Header().Get("X-Store-Operations"), "0"; got != want {
			t.Errorf("X-Store-Operations = %q, want %q: a refused request must not reach the store", got, want)
		}
	})
	t.Run("OneUsersBurstDoesNotThrottleAnother", func(t *testing.T) {
		h := limitedShop(t, 5, 5)
		ann, bob := token(t, "ann", false), token(t, "bob", false)
		refused := 0
		for range 50 {
			if call(h, "/v1/cart", sameAddr, ann).Code == http.StatusTooManyRequests {
				refused++
			}
		}
		if got, want := refused, 45; got != want {
			t.Errorf("ann's burst: %d of 50 refused, want %d", got, want)
		}
		for i := range 5 {
			if w := call(h, "/v1/cart", sameAddr, bob); w.Code != http.StatusOK {
				t.Fatalf("bob's request %d from ann's address = %d, want 200", i+1, w.Code)
			}
		}
	})
	t.Run("AnonymousCallersAreLimitedByAddress", func(t *testing.T) {
		h := limitedShop(t, 100, 2)
		for range 2 {
			call(h, "/v1/categories", sameAddr, "")
		}
		if got, want := call(h, "/v1/categories", sameAddr, "").Code, http.StatusTooManyRequests; got != want {
			t.Errorf("3rd anonymous request = %d, want %d", got, want)
		}
		if got := call(h, "/v1/categories", "198.51.100.7:4000", "").Code; got == http.StatusTooManyRequests {
			t.Errorf("another address was refused: %d", got)
		}
		if got := call(h, "/v1/cart", sameAddr, token(t, "cy", false)).Code; got == http.StatusTooManyRequests {
			t.Errorf("a user behind the throttled address was refused: %d", got)
		}
	})
	t.Run("ForgedTokenCountsAsAnonymous", func(t *testing.T) {
		h := limitedShop(t, 100, 1)
		call(h, "/v1/categories", sameAddr, "")
		forged := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
		if got, want := call(h, "/v1/categories", sameAddr, forged).Code, http.StatusTooManyRequests; got != want {
			t.Errorf("request with a forged token = %d, want %d: an unverified sub must not buy a fresh budget", got, want)
		}
	})
	t.Run("ZeroDisables", func(t *testing.T) {
		h := limitedShop(t, 0, 0)
		for i := range 200 {
			if w := call(h, "/v1/categories", sameAddr, ""); w.Code == http.StatusTooManyRequests {
				t.Fatalf("request %d refused with limits off", i+1)
			}
		}
	})
}
