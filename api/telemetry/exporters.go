package telemetry

import (
	"context"
	"io"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reference-shop/shop/domain"
)

// traceExporters reads OTEL_TRACES_EXPORTER (a comma-separated list, per
// the OpenTelemetry environment specification) and returns one span
// processor option per exporter it names.
func traceExporters(ctx context.Context, getenv func(string) string, stdout io.Writer) ([]sdktrace.TracerProviderOption, error) {
	var opts []sdktrace.TracerProviderOption
	for name := range strings.SplitSeq(getenv("OTEL_TRACES_EXPORTER"), ",") {
		switch strings.TrimSpace(name) {
		case "", "none":
		case "console":
			e, err := stdouttrace.New(stdouttrace.WithWriter(stdout))
			if err != nil {
				return nil, err
			}
			// Synchronous: a developer watching the console sees the span
			// when the request ends, not when a batch fills.
			opts = append(opts, sdktrace.WithSyncer(e))
		case "otlp":
			e, err := otlptracehttp.New(ctx, otlpOptions(getenv)...)
			if err != nil {
				return nil, domain.Errorf(domain.EINVALID, "otlp trace exporter: %v", err)
			}
			opts = append(opts, sdktrace.WithBatcher(e))
		default:
			return nil, domain.Errorf(domain.EINVALID,
				"OTEL_TRACES_EXPORTER: unknown exporter %q (want otlp, console or none)", name)
		}
	}
	return opts, nil
}

// otlpOptions passes the endpoint read through getenv, so that the program
// honors the environment it was given rather than the process's own. The
// exporter still reads the other OTEL_EXPORTER_OTLP_* variables (headers,
// timeout) from the process.
func otlpOptions(getenv func(string) string) []otlptracehttp.Option {
	// The signal-specific endpoint is a full URL; the generic one is a base
	// to which /v1/traces is appended (OTLP exporter specification).
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u)}
	}
	if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(strings.TrimSuffix(u, "/") + "/v1/traces")}
	}
	return nil
}
