package main

import (
	"net/http"
	"regexp"
	"testing"
)

// TestMetricsOnTheirOwnAddress: with SHOP_METRICS_ADDR set, /metrics is
// served there and nowhere on the API's address, which the public may
// reach; without it, beside the API (TestOTelConsole and the workshop
// read it there).
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	base, out := runShop(t, shopEnv(t.TempDir(), "SHOP_METRICS_ADDR=127.0.0.1:0"))
	m := regexp.MustCompile(`shop: metrics on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no \"shop: metrics on\" line in:\n%s", out)
	}
	for _, tc := range []struct {
		url  string
		want int
	}{{m[1], http.StatusOK}, {base + "/metrics", http.StatusNotFound}} {
		resp, err := http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s = %d, want %d", tc.url, resp.StatusCode, tc.want)
		}
	}
}
