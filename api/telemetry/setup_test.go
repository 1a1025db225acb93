package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/domain"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// setup is Setup with a cleanup, and a router over a store traced by it.
func setup(t *testing.T, vars map[string]string, stdout io.Writer) (*telemetry.Telemetry, http.Handler) {
	t.Helper()
	tel, err := telemetry.Setup(t.Context(), env(vars), stdout, "shop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	f := fixture{tel: tel, store: newStore(t, tel.TracerProvider(), tel.MeterProvider())}
	return tel, newRouter(f, telemetry.Middleware(tel))
}

// consoleSpan is the part of stdouttrace's JSON the test reads.
type consoleSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
	Resource []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s consoleSpan) attr(key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

func TestSetupConsoleExporter(t *testing.T) {
	var out bytes.Buffer
	_, h := setup(t, map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "shop-test"}, &out)
	rec := serve(t, h, http.MethodGet, "/v1/products/p1", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}

	// One JSON object per span, written as each span ends.
	spans := make(map[string]consoleSpan)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var s consoleSpan
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("console line is not a span: %q: %v", sc.Text(), err)
		}
		spans[s.Name] = s
	}
	read, ok := spans["read_item products"]
	if !ok {
		t.Fatalf("no store span on stdout; spans: %v", spans)
	}
	if got, want := read.attr("azure.cosmosdb.operation.request_charge"), any(mustFloat(t, rec.Body.String())); got != want {
		t.Errorf("request charge = %v, want %v", got, want)
	}
	page := spans["GET "+productRoute]
	if got, want := read.Parent.SpanID, page.SpanContext.SpanID; got != want || got == "" {
		t.Errorf("store span parent = %q, want the HTTP span %q", got, want)
	}
	var service any
	for _, kv := range read.Resource {
		if kv.Key == "service.name" {
			service = kv.Value.Value
		}
	}
	if got, want := service, any("shop-test"); got != want {
		t.Errorf("service.name = %v, want %v (OTEL_SERVICE_NAME)", got, want)
	}
}

func TestSetupNoExporterWritesNothing(t *testing.T) {
	for _, value := range []string{"", "none"} {
		var out bytes.Buffer
		_, h := setup(t, map[string]string{"OTEL_TRACES_EXPORTER": value}, &out)
		serve(t, h, http.MethodGet, "/v1/products/p1", nil)
		if out.Len() != 0 {
			t.Errorf("OTEL_TRACES_EXPORTER=%q wrote %q", value, out.String())
		}
	}
}

func TestSetupUnknownExporter(t *testing.T) {
	_, err := telemetry.Setup(t.Context(), env(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}), io.Discard, "shop")
	if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
		t.Errorf("code = %q, want %q (err %v)", got, want, err)
	}
}

func TestSetupOTLPExporter(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
	}))
	defer collector.Close()

	tel, err := telemetry.Setup(t.Context(), env(map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
	}), io.Discard, "shop")
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{tel: tel, store: newStore(t, tel.TracerProvider(), tel.MeterProvider())}
	serve(t, newRouter(f, telemetry.Middleware(tel)), http.MethodGet, "/v1/products/p1", nil)
	// Shutdown flushes the batch to the collector.
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := paths, []string{"POST /v1/traces application/x-protobuf"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("collector got %q, want %q", got, want)
	}
}

func TestSetupMetricsEndpoint(t *testing.T) {
	tel, h := setup(t, nil, io.Discard)
	for _, target := range []string{"/v1/products/p1", "/v1/products/p2", "/v1/products/missing"} {
		serve(t, h, http.MethodGet, target, nil)
	}
	serve(t, h, http.MethodPut, "/v1/cart", nil)
	tel.ObserveFeeds(func(context.Context) []telemetry.FeedGauge {
		return []telemetry.FeedGauge{{Processor: "products", Lag: map[string]int64{"00-3F": 2}, CartsUpdated: 1}}
	})
	tel.ObserveConnections(func(context.Context) telemetry.ConnGauge {
		return telemetry.ConnGauge{Open: 7, Evicted: 3, Refused: 1}
	})

	rec := serve(t, tel.MetricsHandler(), http.MethodGet, "/metrics", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", rec.Code)
	}
	body := rec.Body.String()
	route := `http_route="/v1/products/{productId}"`
	for _, want := range []string{
		`http_server_request_duration_seconds_count{`,
		`shop_http_request_charge_bucket{`,
		`shop_http_store_operations_bucket{`,
		`shop_store_occ_retries_total{`,
		`shop_store_request_charge_bucket{`,
		`shop_store_operations_total{`,
		`shop_feed_lag{`,
		`shop_feed_carts_updated_total{`,
		"shop_http_connections{otel_scope_name=",
		"shop_http_connections_evicted_total{",
		"shop_http_connections_refused_total{",
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, want := range []string{
		`http_server_request_duration_seconds_count{`,
		`shop_http_request_charge_count{`,
	} {
		if !lineWith(body, want, route, `http_response_status_code="404"`) {
			t.Errorf("/metrics has no %s line for the route and 404", want)
		}
	}
	if !lineWith(body, `shop_store_occ_retries_total{`, `http_route="/v1/cart"`, `http_request_method="PUT"`) {
		t.Errorf("/metrics has no retries line for PUT /v1/cart")
	}
	if !lineWith(body, `shop_feed_lag{`, `shop_feed_lease="00-3F"`, `shop_feed_processor="products"`) {
		t.Errorf("/metrics has no lag line for products 00-3F")
	}
	for _, banned := range []string{"server_address", "/v1/products/p1"} {
		if strings.Contains(body, banned) {
			t.Errorf("/metrics contains %q: a client-chosen value as a label", banned)
		}
	}
}

// lineWith reports whether one line of the exposition holds every part.
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

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatal(err)
	}
	return f
}
