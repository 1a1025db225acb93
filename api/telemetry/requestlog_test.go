package telemetry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/reference-shop/shop/api/telemetry"
)

func TestRequestLog(t *testing.T) {
	f := newFixture(t)
	var buf bytes.Buffer
	logger := telemetry.NewLogger(&buf, false, slog.LevelDebug)
	h := newRouter(f, telemetry.Middleware(f.tel), telemetry.RequestLog(logger))

	const secret = "eyJhbGciOiJIUzI1NiJ9.secret-claims.signature"
	rec := serve(t, h, http.MethodGet, "/v1/products/p1?access_token=query-secret",
		http.Header{"Authorization": {"Bearer " + secret}, "Cookie": {"session=cookie-secret"}})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	serve(t, h, http.MethodGet, "/healthz", nil)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if got, want := len(lines), 2; got != want {
		t.Fatalf("%d lines, want %d: %q", got, want, lines)
	}
	for _, leak := range []string{secret, "secret-claims", "query-secret", "cookie-secret", "Bearer"} {
		if strings.Contains(buf.String(), leak) {
			t.Errorf("log contains %q: %s", leak, buf.String())
		}
	}
	var line struct {
		Msg      string
		Level    string
		Method   string
		Route    string
		Path     string
		Status   int
		StoreOps int `json:"store_ops"`
		RU       float64
		Retries  int
		TraceID  string `json:"trace_id"`
		SpanID   string `json:"span_id"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	httpSpan := f.span(t, "GET "+productRoute)
	for _, c := range []struct{ name, got, want string }{
		{"msg", line.Msg, "request"},
		{"level", line.Level, "DEBUG"},
		{"method", line.Method, "GET"},
		{"route", line.Route, productRoute},
		{"path", line.Path, "/v1/products/p1"},
		{"trace_id", line.TraceID, httpSpan.SpanContext().TraceID().String()},
		{"span_id", line.SpanID, httpSpan.SpanContext().SpanID().String()},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if got, want := strconv.FormatFloat(line.RU, 'f', -1, 64), rec.Body.String(); got != want {
		t.Errorf("ru = %s, want the read's %s", got, want)
	}
	if line.Status != 200 || line.StoreOps != 1 || line.Retries != 0 {
		t.Errorf("status %d store_ops %d retries %d, want 200 1 0", line.Status, line.StoreOps, line.Retries)
	}
}

// TestRequestLogLevels: at the default level (info) a request that went
// well writes nothing, a probe neither; a 4xx is logged at info.
func TestRequestLogLevels(t *testing.T) {
	f := newFixture(t)
	var buf bytes.Buffer
	logger := telemetry.NewLogger(&buf, false, slog.LevelInfo)
	h := newRouter(f, telemetry.Middleware(f.tel), telemetry.RequestLog(logger))

	if rec := serve(t, h, http.MethodGet, "/v1/products/p1", nil); rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	serve(t, h, http.MethodGet, "/healthz", nil)
	if buf.Len() != 0 {
		t.Fatalf("a 200 and a probe were logged at info: %s", buf.String())
	}
	if rec := serve(t, h, http.MethodGet, "/v1/products/missing", nil); rec.Code != http.StatusNotFound {
		t.Fatalf("status %d, want 404", rec.Code)
	}
	var line struct {
		Level  string
		Path   string
		Status int
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if line.Level != "INFO" || line.Status != http.StatusNotFound || line.Path != "/v1/products/missing" {
		t.Errorf("log line %+v, want the 404 at INFO", line)
	}
}
