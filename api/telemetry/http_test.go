package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

const productRoute = "/v1/products/{productId}"

// newRouter is a chi router shaped like the shop's, with the middlewares
// use: a /v1 sub-router, a product page that is one point read (its body is
// the read's charge) and a cart write that loses one If-Match race.
func newRouter(f fixture, use ...func(http.Handler) http.Handler) http.Handler {
	r := chi.NewRouter()
	r.Use(use...)
	r.Route("/v1", func(r chi.Router) {
		r.Get("/products/{productId}", func(w http.ResponseWriter, req *http.Request) {
			id := chi.URLParam(req, "productId")
			res, err := f.store.Container("products").Read(req.Context(), id, id)
			if domain.IsCode(err, domain.ENOTFOUND) {
				http.NotFound(w, req)
				return
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Write([]byte(strconv.FormatFloat(res.RequestCharge, 'f', -1, 64)))
		})
		r.Put("/cart", func(w http.ResponseWriter, req *http.Request) {
			store.MeterFrom(req.Context()).AddRetry()
			_, err := f.store.Container("carts").Upsert(req.Context(), "u1", []byte(`{"id":"u1","userId":"u1"}`), nil)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		})
	})
	return r
}

func serve(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestMiddlewareSpans(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tt := range []struct {
		name  string
		mount func(f fixture) http.Handler
	}{
		{"InsideRouter", func(f fixture) http.Handler {
			return newRouter(f, telemetry.Middleware(f.tel))
		}},
		{"AroundRouter", func(f fixture) http.Handler {
			return telemetry.Middleware(f.tel)(newRouter(f))
		}},
		{"AroundServeMux", func(f fixture) http.Handler {
			// A ServeMux's own pattern ("/") must not name the span.
			mux := http.NewServeMux()
			mux.Handle("GET /metrics", f.tel.MetricsHandler())
			mux.Handle("/", newRouter(f))
			return telemetry.Middleware(f.tel)(mux)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			rec := serve(t, tt.mount(f), http.MethodGet, "/v1/products/p1",
				http.Header{"Traceparent": {traceparent}})
			if got, want := rec.Code, http.StatusOK; got != want {
				t.Fatalf("status = %d, want %d", got, want)
			}

			httpSpan := f.span(t, "GET "+productRoute)
			if got, want := httpSpan.SpanKind(), trace.SpanKindServer; got != want {
				t.Errorf("kind = %v, want %v", got, want)
			}
			if got, want := httpSpan.SpanContext().TraceID().String(), "4bf92f3577b34da6a3ce929d0e0e4736"; got != want {
				t.Errorf("trace id = %s, want the caller's %s (traceparent continued)", got, want)
			}
			if v, _ := attr(httpSpan.Attributes(), "http.route"); v.AsString() != productRoute {
				t.Errorf("http.route = %q, want %q", v.AsString(), productRoute)
			}

			storeSpan := f.span(t, "read_item products")
			if got, want := storeSpan.Parent().SpanID(), httpSpan.SpanContext().SpanID(); got != want {
				t.Errorf("store span parent = %s, want the HTTP span %s", got, want)
			}
			charge, ok := attr(storeSpan.Attributes(), "azure.cosmosdb.operation.request_charge")
			if !ok {
				t.Fatal("store span has no azure.cosmosdb.operation.request_charge")
			}
			if got, want := strconv.FormatFloat(charge.AsFloat64(), 'f', -1, 64), rec.Body.String(); got != want {
				t.Errorf("request charge attribute = %s, want the read's %s", got, want)
			}
		})
	}
}

func TestMiddlewareMetrics(t *testing.T) {
	f := newFixture(t)
	h := newRouter(f, telemetry.Middleware(f.tel))
	var ru float64
	for _, id := range []string{"p1", "p2", "p1"} {
		rec := serve(t, h, http.MethodGet, "/v1/products/"+id, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", id, rec.Code, rec.Body)
		}
		n, err := strconv.ParseFloat(rec.Body.String(), 64)
		if err != nil {
			t.Fatal(err)
		}
		ru += n
	}
	for _, step := range []struct {
		method, target string
		status         int
	}{
		{http.MethodGet, "/v1/products/missing", http.StatusNotFound},
		{http.MethodPut, "/v1/cart", http.StatusOK},
		// Outside /v1: under it chi reports the mount's pattern "/v1/*".
		{http.MethodGet, "/no-such-route", http.StatusNotFound},
	} {
		if got := serve(t, h, step.method, step.target, nil).Code; got != step.status {
			t.Fatalf("%s %s = %d, want %d", step.method, step.target, got, step.status)
		}
	}
	rm := f.collect(t)

	get := attribute.String("http.request.method", "GET")
	products := attribute.String("http.route", productRoute)
	ok := attribute.Int("http.response.status_code", 200)
	notFound := attribute.Int("http.response.status_code", 404)
	cart := []attribute.KeyValue{attribute.String("http.request.method", "PUT"), attribute.String("http.route", "/v1/cart")}

	t.Run("DurationByRouteAndStatus", func(t *testing.T) {
		if n, _ := histogram(t, rm, "http.server.request.duration", products, ok); n != 3 {
			t.Errorf("count{route, 200} = %d, want 3", n)
		}
		if n, _ := histogram(t, rm, "http.server.request.duration", products, notFound); n != 1 {
			t.Errorf("count{route, 404} = %d, want 1", n)
		}
		h := metricNamed(t, rm, "http.server.request.duration").(metricdata.Histogram[float64])
		var unrouted uint64
		for _, p := range h.DataPoints {
			route, found := p.Attributes.Value("http.route")
			if strings.Contains(route.AsString(), "p1") || strings.Contains(route.AsString(), "no-such") {
				t.Errorf("http.route = %q: a raw path, want the pattern", route.AsString())
			}
			if !found {
				unrouted += p.Count
			}
		}
		if unrouted != 1 {
			t.Errorf("requests without a route = %d, want 1 (the unmatched one)", unrouted)
		}
	})
	t.Run("RequestChargeByRoute", func(t *testing.T) {
		n, s := histogram(t, rm, "shop.http.request_charge", get, products, ok)
		if n != 3 {
			t.Errorf("count = %d, want 3", n)
		}
		if s != ru {
			t.Errorf("sum = %v, want the reads' %v", s, ru)
		}
		if n, s := histogram(t, rm, "shop.http.request_charge", get, products, notFound); n != 1 || s <= 0 {
			t.Errorf("404: count %d sum %v, want 1 request charged > 0 RU", n, s)
		}
		if n, _ := histogram(t, rm, "shop.http.request_charge", attribute.String("http.route", "")); n != 0 {
			t.Errorf("%d requests recorded without a route, want none", n)
		}
	})
	t.Run("StoreOperationsPerRequest", func(t *testing.T) {
		if n, s := histogram(t, rm, "shop.http.store_operations", get, products); n != 4 || s != 4 {
			t.Errorf("count %d sum %v, want 4 requests of one operation each", n, s)
		}
	})
	t.Run("OptimisticConcurrencyRetries", func(t *testing.T) {
		if n, _ := sum(t, rm, "shop.store.occ_retries", cart...); n != 1 {
			t.Errorf("retries{PUT /v1/cart} = %d, want 1", n)
		}
		if n, found := sum(t, rm, "shop.store.occ_retries", get, products); !found || n != 0 {
			t.Errorf("retries{GET products} = %d (present %v), want a 0 series", n, found)
		}
	})
	t.Run("StoreOperations", func(t *testing.T) {
		if n, _ := sum(t, rm, "shop.store.operations", attribute.String("db.operation.name", "read_item")); n != 4 {
			t.Errorf("read_item operations = %d, want 4", n)
		}
	})
}

func TestMetricsHandlerWithoutSetup(t *testing.T) {
	tel, err := telemetry.New(trace.NewNoopTracerProvider(), noop.NewMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if got, want := rec.Code, http.StatusNotFound; got != want {
		t.Errorf("MetricsHandler without Setup = %d, want %d", got, want)
	}
}

func TestMiddlewareKeepsTheWriter(t *testing.T) {
	f := newFixture(t)
	r := chi.NewRouter()
	r.Use(telemetry.Middleware(f.tel))
	r.Get("/v1/stream", func(w http.ResponseWriter, req *http.Request) {
		// An interim 103 first: the request's status is the final one.
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusAccepted)
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush through the middleware: %v", err)
		}
	})
	rec := serve(t, r, http.MethodGet, "/v1/stream", nil)
	if !rec.Flushed {
		t.Error("the flush did not reach the writer beneath")
	}
	rm := f.collect(t)
	route := attribute.String("http.route", "/v1/stream")
	if n, _ := histogram(t, rm, "http.server.request.duration", route, attribute.Int("http.response.status_code", 202)); n != 1 {
		t.Errorf("count{202} = %d, want 1: the final status, not the interim 103", n)
	}
}
