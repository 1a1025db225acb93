package loadbench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestCountsScript: wrk with the hot spots' script sends the request it
// says (method, token, body) and counts every status, and the 503s that
// carry Retry-After, as the server answered them.
func TestCountsScript(t *testing.T) {
	wrk := findWrk()
	if wrk == "" {
		t.Skip("wrk is not on PATH: shop bench --hotspots refuses to run without it")
	}
	var n, bad, withRetry atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || r.Header.Get("Authorization") != "Bearer tok" || string(body) != `{"quantity":1}` {
			bad.Add(1)
		}
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(http.StatusOK)
		case 1:
			withRetry.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	script := filepath.Join(t.TempDir(), "counts.lua")
	if err := os.WriteFile(script, []byte(countsScript("PUT", "tok", `{"quantity":1}`)), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := wrkCounts(t.Context(), wrk, srv.URL+"/v1/cart/items/p-1", script, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if bad.Load() != 0 {
		t.Errorf("%d requests were not the script's PUT", bad.Load())
	}
	if got.Requests == 0 || got.OK+got.Throttled+got.Other != got.Requests || got.Other != 0 {
		t.Errorf("counts %+v: want every request counted as a 200 or a 503", got)
	}
	// wrk counts what it read; the server may have answered a few more
	// as the run ended.
	if got.Throttled == 0 || got.RetryAfter == 0 || got.RetryAfter >= got.Throttled || got.RetryAfter > withRetry.Load() {
		t.Errorf("503s %d, with Retry-After %d (the server sent %d): want both, about half of the 503s with it",
			got.Throttled, got.RetryAfter, withRetry.Load())
	}
	if got.P99Millis <= 0 {
		t.Errorf("p99 = %v ms, want it measured", got.P99Millis)
	}
}
