package telemetry

import (
	"log/slog"
	"math"
	"net/http"
	"time"
)

// SlowRequest is the duration from which a request that went well is
// still logged at info.
const SlowRequest = 250 * time.Millisecond

// RequestLog writes one line per request: method, route, path, status,
// duration, store operations, Request Units and retries, and (through the
// logger's TraceHandler) the trace and span ids.
//
// A request that went well is logged at debug, so off by default: at
// thousands of requests a second a line each would cost more than the
// request, and /metrics already counts them by route and status
// (http.server.request.duration) with their cost. A 4xx, and any request
// slower than SlowRequest, is logged at info; a 5xx at error. It never logs headers, so
// neither the Authorization header nor a token can reach the log, and it
// logs the path without its query string.
//
// Install it inside Middleware, so that the request's span and store.Meter
// are in the context it reads.
func RequestLog(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			r, rctx := withRoute(r)
			r, meter := withMeter(r)
			sw := statusFrom(r.Context())
			if sw == nil {
				sw = newStatusWriter(w)
				w = sw
			}
			next.ServeHTTP(w, r)

			elapsed := time.Since(start)
			level := slog.LevelDebug
			switch {
			case sw.status >= 500:
				level = slog.LevelError
			case untraced[r.URL.Path]:
				// Probes and scrapes every few seconds: visible at debug only.
			case sw.status >= 400, elapsed >= SlowRequest:
				level = slog.LevelInfo
			}
			ctx := r.Context()
			if !logger.Enabled(ctx, level) {
				return
			}
			ops, ru, storeNanos := meter.Totals()
			logger.LogAttrs(ctx, level, "request",
				slog.String("method", r.Method),
				slog.String("route", rctx.RoutePattern()),
				slog.String("path", r.URL.Path),
				slog.Int("status", sw.status),
				slog.Duration("duration", elapsed),
				slog.Int("store_ops", ops),
				slog.Float64("ru", math.Round(ru*100)/100),
				slog.Duration("store_duration", time.Duration(storeNanos)),
				slog.Int("retries", meter.Retries()))
		})
	}
}
