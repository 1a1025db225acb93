package telemetry_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"shop/api/telemetry"
)

func TestWrap(t *testing.T) {
	const origin = "https://shop.example.com"
	var logs bytes.Buffer
	tel, _ := setup(t, nil, io.Discard)
	f := fixture{tel: tel, store: newStore(t, tel.TracerProvider(), tel.MeterProvider())}
	h := tel.Wrap(newRouter(f), telemetry.NewLogger(&logs, false, slog.LevelInfo), []string{origin})

	t.Run("Metrics", func(t *testing.T) {
		serve(t, h, http.MethodGet, "/v1/products/p1", nil)
		rec := serve(t, h, http.MethodGet, "/metrics", nil)
		if !lineWith(rec.Body.String(), "shop_http_request_charge_count{", `http_route="/v1/products/{productId}"`) {
			t.Errorf("GET /metrics lacks the product route's request charge:\n%s", rec.Body)
		}
	})
	t.Run("PreflightLoggedWithTrace", func(t *testing.T) {
		logs.Reset()
		rec := serve(t, h, http.MethodOptions, "/v1/cart", http.Header{
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
		serve(t, h, http.MethodGet, "/metrics", nil)
		if strings.Contains(logs.String(), "/metrics") {
			t.Errorf("a scrape was logged: %s", logs.String())
		}
	})
}
