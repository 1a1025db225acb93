package telemetry

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/store"
)

// opsBuckets fit store operations per request: one for a screen (one read
// per screen), a few for a write.
var opsBuckets = []float64{0, 1, 2, 3, 5, 10, 20, 50}

// untraced paths are polled by machines every few seconds: a span each
// would drown the traces people look at.
var untraced = map[string]bool{"/metrics": true, "/healthz": true, "/readyz": true}

type httpInstruments struct {
	duration metric.Float64Histogram
	charge   metric.Float64Histogram
	ops      metric.Int64Histogram
	retries  metric.Int64Counter
	// sets caches the attribute sets of a (method, route, status): a
	// route is a pattern and only known methods are kept, so it is bounded.
	sets labelCache[requestKey, *requestSets]
	// durationSets does the same for http.server.request.duration, whose
	// labels also name the scheme and the protocol version.
	durationSets labelCache[durationKey, []metric.RecordOption]
	// routes caches chi's route pattern of each list of the routers'
	// patterns, which chi joins and cleans up anew on every call.
	routes labelCache[[maxRouteDepth]string, string]
}

// maxRouteDepth is how many nested routers' patterns routeOf caches; a
// deeper route is computed each time.
const maxRouteDepth = 4

// routeOf is rctx.RoutePattern(), built once per matched route.
func (h *httpInstruments) routeOf(rctx *chi.Context) string {
	if len(rctx.RoutePatterns) > maxRouteDepth {
		return rctx.RoutePattern()
	}
	var k [maxRouteDepth]string
	copy(k[:], rctx.RoutePatterns)
	return h.routes.get(k, rctx.RoutePattern)
}

type requestKey struct {
	method, route string
	status        int
}

// requestSets are the attributes RecordRequest labels its figures with,
// each as the option list an instrument takes: a list built per call
// would be one more allocation per measurement (the instruments are
// interfaces, so a variadic argument escapes).
type requestSets struct {
	byRoute, byStatus []metric.RecordOption
	retries           []metric.AddOption
}

func (h *httpInstruments) setsOf(method, route string, status int) *requestSets {
	if !knownMethods[method] {
		method = "_OTHER"
	}
	return h.sets.get(requestKey{method, route, status}, func() *requestSets {
		byRoute := metric.WithAttributeSet(attribute.NewSet(semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route)))
		s := &requestSets{
			byRoute: []metric.RecordOption{byRoute},
			byStatus: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(
				semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route), semconv.HTTPResponseStatusCode(status)))},
			retries: []metric.AddOption{byRoute},
		}
		// The retries series exists from a route's first request, so
		// that rate() reads 0 rather than nothing; after that only a
		// retry adds to it (one measurement less per request).
		h.retries.Add(context.Background(), 0, s.retries...)
		return s
	})
}

// labelCache holds the measurement labels of each key, built once: every
// key is bounded by the routes and the known methods. A map under a lock
// rather than a sync.Map, whose interface keys would allocate on every
// request.
type labelCache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns k's labels, building them with build the first time.
func (c *labelCache[K, V]) get(k K, build func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	v = build()
	c.m[k] = v
	return v
}

func (h *httpInstruments) init(m metric.Meter) error {
	var err error
	if h.duration, err = m.Float64Histogram("http.server.request.duration",
		metric.WithDescription("Duration of HTTP server requests."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return err
	}
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

// Middleware traces and measures every request: a server span named
// "{method} {route}" by the chi route pattern (never the raw path, so
// /v1/products/p1 and /v1/products/p2 are one route), continuing a caller's
// traceparent, and http.server.request.duration by method, route and
// status, as the HTTP semantic conventions name them. After the handler
// it reads the store.Meter of the request into shop.http.request_charge,
// shop.http.store_operations and shop.store.occ_retries (see RecordRequest).
//
// It is written here rather than taken from otelhttp because the product
// page is the shop's hottest path: otelhttp builds every span's and every
// measurement's attributes per request (a third of the page's time, with
// no exporter configured), where this one adds the span attributes only
// to a span that is recorded and labels measurements with attribute sets
// built once per (method, route, status).
//
// Install it as the router's first middleware (r.Use) or around the
// router. It puts a store.Meter in the context when there is none; a
// middleware inside that also wants one must reuse store.MeterFrom's.
// canonicalCarrier is propagation.HeaderCarrier reading the W3C headers
// by their canonical names, spelled once: the propagators ask for
// "traceparent", "tracestate" and "baggage", and http.Header.Get turns
// each into "Traceparent" anew, an allocation per name per request.
type canonicalCarrier http.Header

// canonicalNames are the propagators' header names, canonical.
var canonicalNames = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"traceparent", "tracestate", "baggage"} {
		m[k] = http.CanonicalHeaderKey(k)
	}
	return m
}()

func (c canonicalCarrier) Get(key string) string {
	if name, ok := canonicalNames[key]; ok {
		if v := c[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return propagation.HeaderCarrier(c).Get(key)
}

func (c canonicalCarrier) Set(key, value string) { propagation.HeaderCarrier(c).Set(key, value) }

func (c canonicalCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }

// serverSpan starts a server span: built once, as an option built per
// call is an allocation per request.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

func Middleware(t *Telemetry) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if untraced[r.URL.Path] {
				next.ServeHTTP(w, r)
				return
			}
			start := time.Now()
			ctx := t.propagator.Extract(r.Context(), canonicalCarrier(r.Header))
			ctx, span := t.tracer.Start(ctx, spanName(r.Method, ""), serverSpan...)
			defer span.End()
			// One copy of the request for the span, the route, the meter
			// and the status, which RequestLog inside reads too
			// (statusFrom).
			rctx := chi.RouteContext(ctx)
			if rctx == nil {
				// Around the router: a routing context of the pool, as chi
				// keeps its own, given back once the route is read.
				rctx = routeContexts.Get().(*chi.Context)
				rctx.Reset()
				ctx = context.WithValue(ctx, chi.RouteCtxKey, rctx)
				defer routeContexts.Put(rctx)
			}
			ctx, meter := meterContext(ctx)
			sw := newStatusWriter(w)
			r = r.WithContext(context.WithValue(ctx, statusKey{}, sw))
			next.ServeHTTP(sw, r)

			// The pattern is known only now, after the router matched.
			route := t.http.routeOf(rctx)
			t.http.recordDuration(r.Context(), r, route, sw.status, time.Since(start))
			if span.IsRecording() {
				endServerSpan(span, r, route, sw.status)
			}
			if route == "" {
				// No route matched: no store was touched, and the
				// unmatched path must not become a label.
				return
			}
			ops, ru, _ := meter.Totals()
			t.RecordRequest(r.Context(), r.Method, route, sw.status, ops, ru, meter.Retries())
		})
	}
}

// RecordRequest records what one request cost: its Request Units by
// method, route and status, its store operations and its optimistic-
// concurrency retries by method and route. Middleware calls it; a server
// that measures requests its own way can call it instead.
func (t *Telemetry) RecordRequest(ctx context.Context, method, route string, status, ops int, ru float64, retries int) {
	sets := t.http.setsOf(method, route, status)
	t.http.charge.Record(ctx, ru, sets.byStatus...)
	t.http.ops.Record(ctx, int64(ops), sets.byRoute...)
	if retries > 0 {
		t.http.retries.Add(ctx, int64(retries), sets.retries...)
	}
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
// Before the route is known (or when none matched) it is the method
// alone.
func spanName(method, route string) string {
	if !knownMethods[method] {
		method = "HTTP"
	}
	if route == "" {
		return method
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

// routeContexts are the routing contexts Middleware hands down.
var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

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

// statusWriter remembers the status a handler wrote. It keeps Flush and,
// through Unwrap, every optional interface of the writer beneath
// (http.ResponseController reaches them).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func newStatusWriter(w http.ResponseWriter) *statusWriter {
	return &statusWriter{ResponseWriter: w, status: http.StatusOK}
}

func (sw *statusWriter) WriteHeader(code int) {
	// 1xx are interim; the final status comes after.
	if !sw.wrote && code >= 200 {
		sw.status, sw.wrote = code, true
	}
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *statusWriter) Write(b []byte) (int, error) {
	sw.wrote = true
	return sw.ResponseWriter.Write(b)
}

func (sw *statusWriter) Flush() {
	sw.wrote = true
	_ = http.NewResponseController(sw.ResponseWriter).Flush()
}

func (sw *statusWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }
