package main

import (
	"io"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/httpserver"
)

// TestConnectionSettings: the idle timeout and the bounds come from the
// settings, with their defaults, and a bad value is refused.
func TestConnectionSettings(t *testing.T) {
	c, err := parseConfig("serve", nil, envOf(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.IdleTimeout != httpserver.DefaultIdleTimeout || c.MaxConnsPerAddr != httpserver.DefaultMaxConnsPerAddr || c.MaxConns != httpserver.DefaultMaxConns(httpserver.FDLimit(), false) {
		t.Errorf("defaults: idle %v, per address %d, total %d; want %v, %d, %d",
			c.IdleTimeout, c.MaxConnsPerAddr, c.MaxConns, httpserver.DefaultIdleTimeout, httpserver.DefaultMaxConnsPerAddr, httpserver.DefaultMaxConns(httpserver.FDLimit(), false))
	}
	c, err = parseConfig("serve", []string{"--max-conns", "0"}, envOf("SHOP_IDLE_TIMEOUT=75s", "SHOP_MAX_CONNS_PER_ADDR=20000"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.IdleTimeout != 75*time.Second || c.MaxConnsPerAddr != 20000 || c.MaxConns != 0 {
		t.Errorf("set: idle %v, per address %d, total %d; want 75s, 20000, 0", c.IdleTimeout, c.MaxConnsPerAddr, c.MaxConns)
	}
	for _, bad := range []string{"SHOP_IDLE_TIMEOUT=0s", "SHOP_IDLE_TIMEOUT=soon", "SHOP_MAX_CONNS=-1", "SHOP_MAX_CONNS_PER_ADDR=many"} {
		if _, err := parseConfig("serve", nil, envOf(bad), io.Discard); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
