package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/api/telemetry"
)

func TestCORS(t *testing.T) {
	const (
		shop  = "https://shop.example.com"
		other = "https://evil.example.net"
	)
	preflight := func(origin string) http.Header {
		return http.Header{"Origin": {origin}, "Access-Control-Request-Method": {"PUT"}, "Access-Control-Request-Headers": {"authorization,if-match"}}
	}
	tests := []struct {
		name       string
		allowed    []string
		method     string
		header     http.Header
		wantStatus int
		wantNext   bool
		want       map[string]string // "" = header absent
	}{
		{
			name: "AllowedOrigin", allowed: []string{shop}, method: http.MethodGet,
			header: http.Header{"Origin": {shop}}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{
				"Access-Control-Allow-Origin":      shop,
				"Access-Control-Allow-Credentials": "",
				"Access-Control-Expose-Headers":    "ETag, Location, Retry-After, X-Request-Charge, X-Request-Charge-Estimated, X-Store-Operations, Server-Timing, X-Session-Token",
				"Timing-Allow-Origin":              shop,
				"Vary":                             "Origin",
			},
		},
		{
			name: "OtherOriginGetsNoCORSHeaders", allowed: []string{shop}, method: http.MethodGet,
			header: http.Header{"Origin": {other}}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Credentials": "", "Vary": "Origin"},
		},
		{
			name: "SameOriginOrNoBrowser", allowed: []string{shop}, method: http.MethodGet,
			header: http.Header{}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"},
		},
		{
			name: "Preflight", allowed: []string{shop}, method: http.MethodOptions,
			header: preflight(shop), wantStatus: http.StatusNoContent, wantNext: false,
			want: map[string]string{
				"Access-Control-Allow-Origin":  shop,
				"Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE",
				"Access-Control-Allow-Headers": "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Session-Token, traceparent, tracestate",
				"Access-Control-Max-Age":       "600",
			},
		},
		{
			name: "PreflightFromOtherOrigin", allowed: []string{shop}, method: http.MethodOptions,
			header: preflight(other), wantStatus: http.StatusForbidden, wantNext: false,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""},
		},
		{
			// OPTIONS without Access-Control-Request-Method is no preflight.
			name: "PlainOptions", allowed: []string{shop}, method: http.MethodOptions,
			header: http.Header{"Origin": {shop}}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{"Access-Control-Allow-Origin": shop, "Access-Control-Allow-Methods": ""},
		},
		{
			name: "WildcardNeverWithCredentials", allowed: []string{"*"}, method: http.MethodGet,
			header: http.Header{"Origin": {other}}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": ""},
		},
		{
			name: "ListedOriginBeatsWildcard", allowed: []string{"*", shop}, method: http.MethodGet,
			header: http.Header{"Origin": {shop}}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{"Access-Control-Allow-Origin": shop, "Access-Control-Allow-Credentials": ""},
		},
		{
			name: "EmptyListAllowsNone", allowed: nil, method: http.MethodOptions,
			header: preflight(shop), wantStatus: http.StatusForbidden, wantNext: false,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"},
		},
		{
			// With no origin allowed, only a preflight's answer depends on
			// the Origin (403 or not): a plain request's never does, so it
			// says nothing of it (one header less on every answer).
			name: "EmptyListVariesNothing", allowed: nil, method: http.MethodGet,
			header: http.Header{"Origin": {other}}, wantStatus: http.StatusOK, wantNext: true,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true })
			req := httptest.NewRequest(tt.method, "/v1/cart", nil)
			req.Header = tt.header
			rec := httptest.NewRecorder()
			telemetry.CORS(tt.allowed)(next).ServeHTTP(rec, req)

			if got, want := rec.Code, tt.wantStatus; got != want {
				t.Errorf("status = %d, want %d", got, want)
			}
			if got, want := called, tt.wantNext; got != want {
				t.Errorf("next called = %v, want %v", got, want)
			}
			got := make(map[string]string)
			for k := range tt.want {
				got[k] = rec.Header().Get(k)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}
