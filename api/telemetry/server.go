package telemetry

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// durationBuckets are the bucket bounds of http.server.request.duration,
// in seconds, as the HTTP semantic conventions advise.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// durationKey is what labels one http.server.request.duration series.
type durationKey struct {
	method, route, scheme, proto string
	status                       int
}

// recordDuration records one request's duration. An unknown method is
// "_OTHER" and an unmatched request has no route, as the conventions ask,
// so that no client can mint series; the attribute set of each label
// combination is built once.
func (h *httpInstruments) recordDuration(ctx context.Context, r *http.Request, route string, status int, d time.Duration) {
	k := durationKey{method: semconvMethod(r.Method), route: route, scheme: scheme(r), proto: protoVersion(r), status: status}
	opts := h.durationSets.get(k, func() []metric.RecordOption {
		attrs := []attribute.KeyValue{
			semconv.HTTPRequestMethodKey.String(k.method),
			semconv.URLScheme(k.scheme),
			semconv.NetworkProtocolName("http"),
			semconv.NetworkProtocolVersion(k.proto),
			semconv.HTTPResponseStatusCode(status),
		}
		if route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
	h.duration.Record(ctx, d.Seconds(), opts...)
}

// endServerSpan names a recorded server span by its route and gives it the
// request's attributes. A span that is not recorded (no exporter, or not
// sampled) is never given any: building them would cost every request for
// nothing.
func endServerSpan(span trace.Span, r *http.Request, route string, status int) {
	span.SetName(spanName(r.Method, route))
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(semconvMethod(r.Method)),
		semconv.URLPath(r.URL.Path),
		semconv.URLScheme(scheme(r)),
		semconv.NetworkProtocolVersion(protoVersion(r)),
		semconv.ServerAddress(r.Host),
		semconv.ClientAddress(r.RemoteAddr),
		semconv.HTTPResponseStatusCode(status),
	}
	if route != "" {
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	span.SetAttributes(attrs...)
	// A server span is an error only for a 5xx: a 4xx is the client's.
	if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
}

// semconvMethod is the method as a label: a known one, or "_OTHER".
func semconvMethod(m string) string {
	if knownMethods[m] {
		return m
	}
	return "_OTHER"
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// protoVersion is "1.1" or "2" (a request's protocol is one the server
// parsed, so the set is small).
func protoVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 1 && r.ProtoMinor == 1:
		return "1.1"
	case r.ProtoMajor == 2:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	}
	return "other"
}
