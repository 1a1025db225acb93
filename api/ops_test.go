package api_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

func TestOps(t *testing.T) {
	s := newShop(t)
	t.Run("Healthz", func(t *testing.T) { s.do(req{method: "GET", path: "/healthz"}).want(200) })
	t.Run("Readyz", func(t *testing.T) { s.do(req{method: "GET", path: "/readyz"}).want(200) })
	t.Run("OpenAPIIsTheRootFile", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/openapi.yaml"}).want(200)
		root, err := os.ReadFile(filepath.Join("..", "openapi.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Body.Bytes(), root) {
			t.Error("GET /openapi.yaml is not ../openapi.yaml")
		}
	})
}

// TestRateLimitedIsInTheSpec: a 429 is a documented problem like any other.
func TestRateLimitedIsInTheSpec(t *testing.T) {
	s := newShop(t, func(o *options) { o.rateLimit = api.RateLimit{Anon: 1, Window: time.Hour} })
	s.do(req{method: "GET", path: "/v1/categories"}).want(200)
	r := s.do(req{method: "GET", path: "/v1/categories"}).want(429)
	if r.ops() != "0" {
		t.Errorf("X-Store-Operations = %s, want 0: a throttled request costs no store call", r.ops())
	}
}

func TestNotReadyIs503(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := migrations.Apply(context.Background(), st, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := &shop{t: t, store: st, handler: api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), nil, nil), Store: st, Secret: testSecret,
		Ready: func(context.Context) error { return errors.New("warming up") }})}
	r := s.do(req{method: "GET", path: "/readyz"}).want(503)
	if p := decodeBody[problemBody](t, r); p.Detail != "not ready" {
		t.Errorf("detail = %q, want no internal text", p.Detail)
	}
}

// TestRoutingOutsideTheSpec covers what openapi.yaml does not list: the
// frontend at "/", and problems for unknown /v1 paths and methods.
func TestRoutingOutsideTheSpec(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	web := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "frontend") })
	h := api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), nil, nil), Store: st, Secret: testSecret, Web: web})

	for _, tc := range []struct {
		name, method, path string
		want               int
		body               string
	}{
		{"FrontendAtRoot", "GET", "/", 200, "frontend"},
		{"FrontendAssets", "GET", "/app.js", 200, "frontend"},
		{"UnknownV1PathIsAProblem", "GET", "/v1/nope", 404, ""},
		{"WrongMethodIsAProblem", "DELETE", "/v1/categories", 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			if w.Code != tc.want {
				t.Fatalf("%s %s = %d, want %d", tc.method, tc.path, w.Code, tc.want)
			}
			if tc.body != "" {
				if got := w.Body.String(); got != tc.body {
					t.Errorf("body = %q, want %q", got, tc.body)
				}
				return
			}
			if got := w.Header().Get("Content-Type"); got != "application/problem+json" {
				t.Errorf("Content-Type = %q", got)
			}
			if got := w.Header().Get("X-Store-Operations"); got != "0" {
				t.Errorf("X-Store-Operations = %q, want 0", got)
			}
		})
	}
}

// TestStoreErrorsMapToStatus checks the one code-to-status table through a
// closed store: the request fails inside the store, and the client sees a
// problem without the store's text.
func TestStoreErrorsMapToStatus(t *testing.T) {
	s := newShop(t)
	s.store.Close()
	r := s.do(req{method: "GET", path: "/v1/products/book-1"})
	if r.Code < 500 {
		t.Fatalf("status = %d, want 5xx", r.Code)
	}
	p := decodeBody[problemBody](t, r)
	if p.Status != r.Code || (r.Code == 500 && p.Detail != "internal error") {
		t.Errorf("problem = %+v", p)
	}
}
