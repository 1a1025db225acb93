// Package telemetry makes the shop observable the way operators of a
// Cosmos-backed service expect: OpenTelemetry traces (HTTP spans named by
// route, a child span per store call carrying its Request Unit charge),
// metrics exposed for Prometheus at GET /metrics (latency, Request Units
// per route, store operations per request, optimistic-concurrency retries,
// 429s, change-feed lag), structured logs that carry the trace id, and the
// CORS allow-list.
package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// scope names the shop's instrumentation in every span and metric.
const scope = "shop"

// Telemetry holds the tracer and meter providers and the shop's own
// instruments. Build it with Setup (from the environment) or New (from
// providers, as tests do).
type Telemetry struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	metrics    http.Handler
	shutdown   []func(context.Context) error

	http      httpInstruments
	feed      feedInstruments
	partition partitionInstruments
	conns     connInstruments
}

// Setup builds the shop's telemetry from the standard OpenTelemetry
// environment, read through getenv:
//
//   - OTEL_TRACES_EXPORTER: "none" (the default), "console" (one JSON
//     object per span on stdout) or "otlp" (OTLP over HTTP), or several
//     separated by commas;
//   - OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:
//     where otlp sends (default http://localhost:4318);
//   - OTEL_SERVICE_NAME: overrides serviceName.
//
// Metrics always go to a Prometheus registry of their own, served by
// MetricsHandler. Setup sets the global propagator to W3C trace context and
// baggage so that a caller's traceparent continues its trace here.
func Setup(ctx context.Context, getenv func(string) string, stdout io.Writer, serviceName string) (*Telemetry, error) {
	if name := getenv("OTEL_SERVICE_NAME"); name != "" {
		serviceName = name
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(serviceName))

	exporters, err := traceExporters(ctx, getenv, stdout)
	if err != nil {
		return nil, err
	}
	// A provider even without an exporter: spans still get ids, so logs
	// carry a trace id and the traceparent of a caller is continued. But
	// with nowhere to send them, spans are not recorded: recording their
	// attributes and events would cost every request for nothing.
	opts := append(exporters, sdktrace.WithResource(res))
	if len(exporters) == 0 {
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(opts...)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exporter, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		return nil, errors.Join(err, tp.Shutdown(ctx))
	}
	// No label comes from what a client sends (the Host header, a raw
	// path): the server's own measurements are labelled by route.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(exporter))

	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	otel.SetTextMapPropagator(prop)

	t, err := New(tp, mp)
	if err != nil {
		return nil, errors.Join(err, tp.Shutdown(ctx), mp.Shutdown(ctx))
	}
	t.propagator = prop
	t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	t.shutdown = []func(context.Context) error{tp.Shutdown, mp.Shutdown}
	return t, nil
}

// New builds Telemetry over the given providers. Its MetricsHandler answers
// 404: only Setup owns a Prometheus registry.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Telemetry, error) {
	t := &Telemetry{
		tp:         tp,
		mp:         mp,
		tracer:     tp.Tracer(scope),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		metrics:    http.NotFoundHandler(),
	}
	meter := mp.Meter(scope)
	if err := t.http.init(meter); err != nil {
		return nil, err
	}
	if err := t.feed.init(meter); err != nil {
		return nil, err
	}
	if err := t.partition.init(meter); err != nil {
		return nil, err
	}
	if err := t.conns.init(meter); err != nil {
		return nil, err
	}
	return t, nil
}

// TracerProvider is for store.Traced and azotel.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// MeterProvider is for store.Traced.
func (t *Telemetry) MeterProvider() metric.MeterProvider { return t.mp }

// MetricsHandler serves the metrics in the Prometheus text format, for
// GET /metrics.
func (t *Telemetry) MetricsHandler() http.Handler { return t.metrics }

// Shutdown flushes the spans still buffered and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	t.shutdown = nil
	return errors.Join(errs...)
}

// lockedFunc holds a callback that may be replaced while a metric
// collection reads it.
type lockedFunc[T any] struct {
	mu sync.Mutex
	f  func(context.Context) T
}

func (l *lockedFunc[T]) set(f func(context.Context) T) {
	l.mu.Lock()
	l.f = f
	l.mu.Unlock()
}

func (l *lockedFunc[T]) get() func(context.Context) T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f
}
