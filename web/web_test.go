package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reference-shop/shop/web"
)

func TestHandlerServesFiles(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	t.Cleanup(srv.Close)

	tests := []struct {
		name        string
		path        string
		status      int
		contentType string
		contains    string
	}{
		{"RootIsIndex", "/", http.StatusOK, "text/html; charset=utf-8", `<script type="module" src="/app.js">`},
		{"IndexByName", "/index.html", http.StatusOK, "text/html; charset=utf-8", "aria-live"},
		{"ModuleScript", "/app.js", http.StatusOK, "text/javascript; charset=utf-8", "import"},
		{"ApiClient", "/api.js", http.StatusOK, "text/javascript; charset=utf-8", "X-Request-Charge"},
		{"View", "/views/cart.js", http.StatusOK, "text/javascript; charset=utf-8", "If-Match"},
		{"Stylesheet", "/styles.css", http.StatusOK, "text/css; charset=utf-8", "focus-visible"},
		{"Favicon", "/favicon.ico", http.StatusOK, "image/svg+xml", "<svg"},
		{"FaviconByName", "/favicon.svg", http.StatusOK, "image/svg+xml", "<svg"},
		{"Missing", "/nope.js", http.StatusNotFound, "", ""},
		{"NoDirectoryListing", "/views/", http.StatusNotFound, "", ""},
		{"NoEscape", "/../web.go", http.StatusNotFound, "", ""},
		{"SourceNotServed", "/web.go", http.StatusNotFound, "", ""},
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := client.Get(srv.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := res.StatusCode, tt.status; got != want {
				t.Fatalf("GET %s: status %d, want %d", tt.path, got, want)
			}
			if tt.status != http.StatusOK {
				return
			}
			if got, want := res.Header.Get("Content-Type"), tt.contentType; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			if got, want := res.Header.Get("Cache-Control"), "no-cache"; got != want {
				t.Errorf("Cache-Control = %q, want %q", got, want)
			}
			if got, want := res.Header.Get("X-Content-Type-Options"), "nosniff"; got != want {
				t.Errorf("X-Content-Type-Options = %q, want %q", got, want)
			}
			if !strings.Contains(string(body), tt.contains) {
				t.Errorf("body of %s does not contain %q", tt.path, tt.contains)
			}
		})
	}
}

func TestHandlerRevalidatesWithETag(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	t.Cleanup(srv.Close)

	res, err := http.Get(srv.URL + "/app.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on /app.js")
	}

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/app.js", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", etag)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got, want := res.StatusCode, http.StatusNotModified; got != want {
		t.Errorf("GET with If-None-Match: status %d, want %d", got, want)
	}
}

func TestHandlerRefusesWrites(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	t.Cleanup(srv.Close)

	res, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got, want := res.StatusCode, http.StatusMethodNotAllowed; got != want {
		t.Errorf("POST /: status %d, want %d", got, want)
	}
	if got, want := res.Header.Get("Allow"), "GET, HEAD"; got != want {
		t.Errorf("Allow = %q, want %q", got, want)
	}
}
