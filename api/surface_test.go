package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestSurface checks the layers around the routes (routes.go's surface):
// the metrics beside the API, CORS inside the request log and the trace.
func TestSurface(t *testing.T) {
	const origin = "https://shop.example.com"
	var logs bytes.Buffer
	tel, err := telemetry.Setup(t.Context(), func(string) string { return "" }, io.Discard, "shop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	h := api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(newShop(t).store), 0), nil, nil), Store: newShop(t).store, Secret: testSecret, Telemetry: tel,
		Logger: telemetry.NewLogger(&logs, false, slog.LevelDebug), CORSOrigins: []string{origin}})
	serve := func(method, target string, header http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	t.Run("Metrics", func(t *testing.T) {
		serve(http.MethodGet, "/v1/products/p1", nil)
		rec := serve(http.MethodGet, "/metrics", nil)
		if !lineWith(rec.Body.String(), "shop_http_request_charge_count{", `http_route="/v1/products/{productId}"`) {
			t.Errorf("GET /metrics lacks the product route's request charge:\n%s", rec.Body)
		}
	})
	t.Run("PreflightLoggedWithTrace", func(t *testing.T) {
		logs.Reset()
		rec := serve(http.MethodOptions, "/v1/cart", http.Header{
			"Origin": {origin}, "Access-Control-Request-Method": {"PUT"},
		})
		if got, want := rec.Code, http.StatusNoContent; got != want {
			t.Errorf("preflight = %d, want %d", got, want)
		}
		if got, want := rec.Header().Get("Access-Control-Allow-Origin"), origin; got != want {
			t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, want)
		}
		var line struct {
			Method  string
			Status  int
			TraceID string `json:"trace_id"`
		}
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("log %q: %v", logs.String(), err)
		}
		if line.Method != http.MethodOptions || line.Status != http.StatusNoContent || line.TraceID == "" {
			t.Errorf("log line %+v, want the OPTIONS 204 with a trace id", line)
		}
	})
	t.Run("MetricsNotLogged", func(t *testing.T) {
		logs.Reset()
		serve(http.MethodGet, "/metrics", nil)
		if strings.Contains(logs.String(), "/metrics") {
			t.Errorf("a scrape was logged: %s", logs.String())
		}
	})
}

// lineWith reports whether one line of body contains all the parts.
func lineWith(body string, parts ...string) bool {
	for line := range strings.Lines(body) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
