package telemetry

import (
	"log/slog"
	"net/http"
)

// Wrap puts the shop's HTTP telemetry around h in the order each piece
// needs: Middleware outermost (the span and the store.Meter exist before
// anything else runs), then RequestLog (it reads both, so its line carries
// the trace id and the cost), then CORS (a refused preflight is still
// traced and logged). GET /metrics is served beside h, outside CORS, the
// request log and the traces.
func (t *Telemetry) Wrap(h http.Handler, logger *slog.Logger, corsOrigins []string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", t.MetricsHandler())
	mux.Handle("/", RequestLog(logger)(CORS(corsOrigins)(h)))
	return Middleware(t)(mux)
}
