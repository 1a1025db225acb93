package httpserver

import "testing"

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
			if got := DefaultMaxConns(tc.fds, tc.cosmos); got != tc.want {
				t.Errorf("DefaultMaxConns(%d, cosmos %v) = %d, want %d", tc.fds, tc.cosmos, got, tc.want)
			}
		})
	}
}
