package main

import (
	"io"
	"testing"
	"time"
)

// TestDefaultMaxConns: the total bound leaves the reserve of the
// open-file limit, half the rest with Cosmos, and is capped where the
// limit is huge.
func TestDefaultMaxConns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fds    uint64
		cosmos bool
		want   int
	}{
		{"Unknown", 0, false, 0},
		{"Tiny", 256, false, 128},
		{"Common", 1024, false, 1024 - fdReserve},
		{"CommonCosmos", 1024, true, (1024 - fdReserve) / 2},
		{"Hard4096", 4096, false, 4096 - fdReserve},
		{"Hard4096Cosmos", 4096, true, (4096 - fdReserve) / 2},
		{"Large", 20000, false, maxConnsCap},
		{"Container", 1 << 20, false, maxConnsCap},
		{"ContainerCosmos", 1 << 20, true, maxConnsCap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := defaultMaxConns(tc.fds, tc.cosmos); got != tc.want {
				t.Errorf("defaultMaxConns(%d, cosmos %v) = %d, want %d", tc.fds, tc.cosmos, got, tc.want)
			}
		})
	}
}

// TestConnectionSettings: the idle timeout and the bounds come from the
// settings, with their defaults, and a bad value is refused.
func TestConnectionSettings(t *testing.T) {
	c, err := parseConfig("serve", nil, envOf(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.IdleTimeout != defaultIdleTimeout || c.MaxConnsPerAddr != defaultMaxConnsPerAddr || c.MaxConns != defaultMaxConns(fdLimit(), false) {
		t.Errorf("defaults: idle %v, per address %d, total %d; want %v, %d, %d",
			c.IdleTimeout, c.MaxConnsPerAddr, c.MaxConns, defaultIdleTimeout, defaultMaxConnsPerAddr, defaultMaxConns(fdLimit(), false))
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
