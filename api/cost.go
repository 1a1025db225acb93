package api

import (
	"net/http"
	"strconv"

	"shop/store"
)

// withCost puts a store.Meter in the request's context (or uses the one an
// outer middleware, the telemetry, put there) and writes what the request
// cost into its response headers (DESIGN.md §1): every /v1 response says
// how many store operations and Request Units it took.
func withCost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, m := r.Context(), store.MeterFrom(r.Context())
		if m == nil {
			ctx, m = store.WithMeter(ctx)
		}
		cw := &costWriter{ResponseWriter: w, meter: m}
		next.ServeHTTP(cw, r.WithContext(ctx))
		if !cw.wrote {
			cw.WriteHeader(http.StatusOK)
		}
	})
}

// costWriter sets the cost headers at WriteHeader time: after the handler's
// last store call, before the headers leave.
type costWriter struct {
	http.ResponseWriter
	meter *store.Meter
	wrote bool
}

func (cw *costWriter) WriteHeader(status int) {
	if !cw.wrote {
		cw.wrote = true
		setCostHeaders(cw.Header(), cw.meter)
	}
	cw.ResponseWriter.WriteHeader(status)
}

func (cw *costWriter) Write(b []byte) (int, error) {
	if !cw.wrote {
		cw.WriteHeader(http.StatusOK)
	}
	return cw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (cw *costWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

func setCostHeaders(h http.Header, m *store.Meter) {
	ops, ru, nanos := m.Totals()
	charge := strconv.FormatFloat(ru, 'f', 2, 64)
	opWord := " ops, "
	if ops == 1 {
		opWord = " op, "
	}
	h["X-Store-Operations"] = []string{strconv.Itoa(ops)}
	h["X-Request-Charge"] = []string{charge}
	h["Server-Timing"] = []string{"store;dur=" + strconv.FormatFloat(float64(nanos)/1e6, 'f', 2, 64) +
		`;desc="` + strconv.Itoa(ops) + opWord + charge + ` RU"`}
}
