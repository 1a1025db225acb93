package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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

// TestHotspots runs `shop bench --hotspots` briefly: every load measured
// against both shops; at full speed the uncached home page is throttled
// on one partition, the cached one answers more often; one user's cart
// writes are throttled with the cache too, every 503 with Retry-After.
func TestHotspots(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the shop: skipped with -short")
	}
	if findWrk() == "" {
		t.Skip("wrk is not on PATH: shop bench --hotspots refuses to run without it")
	}
	bin := filepath.Join(t.TempDir(), "shop")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/reference-shop/shop/cmd/shop").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--hotspots", "--json", "--shop", bin, "--duration", "1s"}, noEnv, &out); err != nil {
		t.Fatalf("shop bench --hotspots: %v", err)
	}
	var rep hotspotsReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, out.String())
	}
	if len(rep.Runs) != 8 || rep.Throughput != defaultHotThroughput {
		t.Fatalf("%d runs at %d RU/s, want 4 loads × cache off and on at %d", len(rep.Runs), rep.Throughput, defaultHotThroughput)
	}
	run := map[string]hotspotRun{}
	for _, r := range rep.Runs {
		if r.Requests == 0 || r.OK+r.Throttled+r.Other != r.Requests {
			t.Errorf("%s, cache %v: %+v, want requests, each counted once", r.Load, r.Cache, r)
		}
		run[fmt.Sprintf("%s/%v", r.Load, r.Cache)] = r
	}
	off, on := run["home page/false"], run["home page/true"]
	if off.Throttled == 0 || off.Hottest.Container != "products" || off.Hottest.Throttled == 0 {
		t.Errorf("home page without the cache: %+v, want 503s and the products partition throttling", off)
	}
	if on.successRate() <= off.successRate() {
		t.Errorf("home page: %.2f%% answered with the cache, %.2f%% without; want more with it", on.successRate(), off.successRate())
	}
	for _, cache := range []bool{false, true} {
		w := run[fmt.Sprintf("cart writes, one user/%v", cache)]
		if w.Throttled == 0 || w.RetryAfter != w.Throttled {
			t.Errorf("cart writes, cache %v: %d 503s, %d with Retry-After; want 503s, each with it", cache, w.Throttled, w.RetryAfter)
		}
	}
}
