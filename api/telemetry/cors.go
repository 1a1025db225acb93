package telemetry

import (
	"net/http"
	"slices"
	"strings"
)

// CORS answers browsers on other origins (the sample frontend served
// elsewhere, a workshop's notebook) from an allow-list of origins such as
// "https://shop.example.com". An allowed origin is echoed back; the entry
// "*" allows any origin. Credentials are never allowed: the API reads no
// cookie and no client certificate, only the Authorization header, which
// a page sends on purpose (it is listed in Allow-Headers), so
// Access-Control-Allow-Credentials would only widen what a page on an
// allowed origin could make a browser send, for nothing. A
// disallowed origin gets no CORS headers, so the browser blocks the
// response; a disallowed preflight is answered 403 and goes no further.
func CORS(allowed []string) func(http.Handler) http.Handler {
	anyOrigin := slices.Contains(allowed, "*")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
			if len(allowed) > 0 || preflight {
				// The answer depends on the Origin: caches must key on
				// it. With no origin allowed only a preflight's does (it
				// is refused); every other answer is the same for all,
				// and one header less keeps a screen's headers within
				// the eight a Go map holds before it grows.
				if len(h["Vary"]) == 0 {
					h["Vary"] = varyOrigin // the usual case, with no allocation
				} else {
					h.Add("Vary", "Origin")
				}
			}
			origin := r.Header.Get("Origin")
			if preflight {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
			}
			if origin == "" {
				next.ServeHTTP(w, r)
				return
			}
			switch {
			case slices.Contains(allowed, origin):
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Timing-Allow-Origin", origin)
			case anyOrigin:
				h.Set("Access-Control-Allow-Origin", "*")
				h.Set("Timing-Allow-Origin", "*")
			default:
				if preflight {
					w.WriteHeader(http.StatusForbidden)
					return
				}
				next.ServeHTTP(w, r)
				return
			}
			if !preflight {
				// Without this a script on another origin cannot read what a
				// response cost, the ETag it needs for If-Match, nor the
				// session token it sends back.
				h.Set("Access-Control-Expose-Headers", exposed)
				next.ServeHTTP(w, r)
				return
			}
			h.Set("Access-Control-Allow-Methods", allowedMethods)
			h.Set("Access-Control-Allow-Headers", allowedHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
		})
	}
}

// varyOrigin is the Vary of every answer: a full slice nobody writes
// into (Header.Add appends, which copies it), so one serves them all.
var varyOrigin = []string{"Origin"}

var (
	allowedMethods = strings.Join([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, ", ")
	allowedHeaders = strings.Join([]string{"Authorization", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key", "X-Session-Token", "traceparent", "tracestate"}, ", ")
	exposed        = strings.Join([]string{"ETag", "Location", "Retry-After", "X-Request-Charge", "X-Request-Charge-Estimated", "X-Store-Operations", "Server-Timing", "X-Session-Token"}, ", ")
)
