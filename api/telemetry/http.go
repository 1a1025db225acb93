package telemetry

import (
	"context"
	"net/http"
	"sync"

	"github.com/felixge/httpsnoop"
	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"shop/store"
)

// opsBuckets fit store operations per request: one for a screen (one read
// per screen), a few for a write.
var opsBuckets = []float64{0, 1, 2, 3, 5, 10, 20, 50}

// untraced paths are polled by machines every few seconds: a span each
// would drown the traces people look at.
var untraced = map[string]bool{"/metrics": true, "/healthz": true, "/readyz": true}

type httpInstruments struct {
	charge  metric.Float64Histogram
	ops     metric.Int64Histogram
	retries metric.Int64Counter
	// sets caches the attribute sets of a (method, route, status): a
	// route is a pattern and only known methods are kept, so it is bounded.
	sets sync.Map // requestKey → *requestSets
}

type requestKey struct {
	method, route string
	status        int
}

// requestSets are the attributes RecordRequest labels its figures with.
type requestSets struct {
	byRoute, byStatus metric.MeasurementOption
}

func (h *httpInstruments) setsOf(method, route string, status int) *requestSets {
	k := requestKey{method, route, status}
	if v, ok := h.sets.Load(k); ok {
		return v.(*requestSets)
	}
	rs := &requestSets{
		byRoute: metric.WithAttributeSet(attribute.NewSet(semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route))),
		byStatus: metric.WithAttributeSet(attribute.NewSet(
			semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route), semconv.HTTPResponseStatusCode(status))),
	}
	if knownMethods[method] {
		h.sets.Store(k, rs)
	}
	return rs
}

func (h *httpInstruments) init(m metric.Meter) error {
	var err error
	if h.charge, err = m.Float64Histogram("shop.http.request_charge",
		metric.WithDescription("Request Units spent by one HTTP request, all its store operations together."),
		metric.WithUnit("{request_unit}"),
		metric.WithExplicitBucketBoundaries(store.ChargeBuckets()...)); err != nil {
		return err
	}
	if h.ops, err = m.Int64Histogram("shop.http.store_operations",
		metric.WithDescription("Store operations made by one HTTP request: a screen should need exactly one."),
		metric.WithUnit("{operation}"),
		metric.WithExplicitBucketBoundaries(opsBuckets...)); err != nil {
		return err
	}
	h.retries, err = m.Int64Counter("shop.store.occ_retries",
		metric.WithDescription("Read-modify-write retries after an If-Match lost a race (412)."),
		metric.WithUnit("{retry}"))
	return err
}

// Middleware traces and measures every request with otelhttp: a server span
// named "{method} {route}" by the chi route pattern (never the raw path, so
// /v1/products/p1 and /v1/products/p2 are one route), and
// http.server.request.duration by route and status. After the handler it
// reads the store.Meter of the request into shop.http.request_charge,
// shop.http.store_operations and shop.store.occ_retries (see RecordRequest).
//
// Install it as the router's first middleware (r.Use) or around the
// router. It puts a store.Meter in the context when there is none; a
// middleware inside that also wants one must reuse store.MeterFrom's.
func Middleware(t *Telemetry) func(http.Handler) http.Handler {
	instrument := otelhttp.NewMiddleware("http.server",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithMeterProvider(t.mp),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithFilter(func(r *http.Request) bool { return !untraced[r.URL.Path] }))
	return func(next http.Handler) http.Handler {
		measured := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if untraced[r.URL.Path] {
				next.ServeHTTP(w, r)
				return
			}
			// One copy of the request for the route, the meter and the
			// status, which RequestLog inside reads too (statusFrom).
			ctx, rctx := routeContext(r.Context())
			ctx, meter := meterContext(ctx)
			sw := newStatusWriter(w)
			r = r.WithContext(context.WithValue(ctx, statusKey{}, sw))
			next.ServeHTTP(sw.w, r)

			// The pattern is known only now, after the router matched.
			route := rctx.RoutePattern()
			if route == "" {
				// No route matched: no store was touched, and the
				// unmatched path must not become a label.
				return
			}
			ctx = r.Context()
			span := trace.SpanFromContext(ctx)
			span.SetName(spanName(r.Method, route))
			span.SetAttributes(semconv.HTTPRoute(route))
			if l, ok := otelhttp.LabelerFromContext(ctx); ok {
				l.Add(semconv.HTTPRoute(route))
			}
			ops, ru, _ := meter.Totals()
			t.RecordRequest(ctx, r.Method, route, sw.status, ops, ru, meter.Retries())
		})
		return instrument(measured)
	}
}

// RecordRequest records what one request cost: its Request Units by
// method, route and status, its store operations and its optimistic-
// concurrency retries by method and route. Middleware calls it; a server
// that measures requests its own way can call it instead.
func (t *Telemetry) RecordRequest(ctx context.Context, method, route string, status, ops int, ru float64, retries int) {
	sets := t.http.setsOf(method, route, status)
	t.http.charge.Record(ctx, ru, sets.byStatus)
	t.http.ops.Record(ctx, int64(ops), sets.byRoute)
	// Added even when 0, so the series exists and rate() reads 0, not nothing.
	t.http.retries.Add(ctx, int64(retries), sets.byRoute)
}

// knownMethods are the methods the HTTP conventions allow in a span name;
// any other would let a client mint span names.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
	http.MethodConnect: true, http.MethodTrace: true,
}

// spanName is "{method} {route}" as the HTTP semantic conventions name a
// server span, e.g. "GET /v1/products/{productId}".
func spanName(method, route string) string {
	if !knownMethods[method] {
		method = "HTTP"
	}
	return method + " " + route
}

// withRoute makes sure the request carries a chi routing context, so that
// the route pattern can be read here once the router has matched. Inside a
// chi router (r.Use) the router's own context is already there; around the
// router a fresh one is handed down, which chi then fills in.
func withRoute(r *http.Request) (*http.Request, *chi.Context) {
	ctx, rctx := routeContext(r.Context())
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	return r, rctx
}

func routeContext(ctx context.Context) (context.Context, *chi.Context) {
	if rctx := chi.RouteContext(ctx); rctx != nil {
		return ctx, rctx
	}
	rctx := chi.NewRouteContext()
	return context.WithValue(ctx, chi.RouteCtxKey, rctx), rctx
}

// withMeter makes sure the request carries a store.Meter.
func withMeter(r *http.Request) (*http.Request, *store.Meter) {
	ctx, m := meterContext(r.Context())
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	return r, m
}

func meterContext(ctx context.Context) (context.Context, *store.Meter) {
	if m := store.MeterFrom(ctx); m != nil {
		return ctx, m
	}
	return store.WithMeter(ctx)
}

type statusKey struct{}

// statusFrom is the statusWriter Middleware put around the request, so
// that RequestLog inside need not wrap the writer again.
func statusFrom(ctx context.Context) *statusWriter {
	sw, _ := ctx.Value(statusKey{}).(*statusWriter)
	return sw
}

// statusWriter remembers the status a handler wrote. httpsnoop keeps the
// writer's optional interfaces (Flusher, Hijacker, ReaderFrom) intact.
type statusWriter struct {
	w      http.ResponseWriter
	status int
}

func newStatusWriter(w http.ResponseWriter) *statusWriter {
	sw := &statusWriter{status: http.StatusOK}
	wrote := false
	sw.w = httpsnoop.Wrap(w, httpsnoop.Hooks{
		WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
			return func(code int) {
				// 1xx are interim; the final status comes after.
				if !wrote && code >= 200 {
					sw.status, wrote = code, true
				}
				next(code)
			}
		},
		Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
			return func(b []byte) (int, error) {
				wrote = true
				return next(b)
			}
		},
	})
	return sw
}
