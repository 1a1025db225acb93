package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestHTTPDetails: what HTTP says a server does, which a client or an
// operator meets before any screen.
func TestHTTPDetails(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, r)
		return rec
	}

	t.Run("HEAD is served wherever GET is", func(t *testing.T) {
		// As the tests build the server, and as shop serve does: with
		// telemetry around the router and the storefront on /*.
		served := newShop(t, func(o *options) { o.served, o.web = true, true })
		served.fixture()
		for name, shop := range map[string]*shop{"bare": s, "served": served} {
			srv := httptest.NewServer(shop.handler)
			defer srv.Close()
			for _, path := range []string{"/healthz", "/readyz", "/", "/openapi.yaml", "/v1/categories", "/v1/products/book-1", "/v1/products/book-1/image.svg"} {
				get, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				get.Body.Close()
				head, err := http.Head(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				head.Body.Close()
				if head.StatusCode != get.StatusCode {
					t.Errorf("%s: HEAD %s = %d; GET = %d", name, path, head.StatusCode, get.StatusCode)
				}
				if h, g := head.Header.Get("Content-Type"), get.Header.Get("Content-Type"); h != g {
					t.Errorf("%s: HEAD %s: Content-Type %q, GET's %q", name, path, h, g)
				}
			}
		}
	})
	t.Run("Authorization sent twice is refused", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/v1/cart", nil)
		r.Header["Authorization"] = []string{"Bearer " + alice, "Bearer " + alice}
		rec := serve(r)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Authorization") {
			t.Errorf("two Authorization headers = %d %s, want a 400 that names Authorization", rec.Code, rec.Body)
		}
	})
	t.Run("image version at most 64 characters", func(t *testing.T) {
		// Characters, as JSON Schema's maxLength counts them: 64 é are
		// 128 bytes and still within it.
		for _, c := range []string{"a", "é"} {
			for n, want := range map[int]int{64: http.StatusOK, 65: http.StatusBadRequest} {
				v := url.QueryEscape(strings.Repeat(c, n))
				rec := serve(httptest.NewRequest(http.MethodGet, "/v1/products/book-1/image.svg?v="+v, nil))
				if rec.Code != want {
					t.Errorf("v of %d %q = %d, want %d", n, c, rec.Code, want)
				}
			}
		}
	})
}
