package loadbench

import (
	"math"
	"testing"
)

func TestStolenPercent(t *testing.T) {
	a := cpuClock{total: 1000, steal: 50}
	b := cpuClock{total: 1400, steal: 150}
	if got := b.sub(a).stolenPercent(); math.Abs(got-25) > 1e-9 {
		t.Errorf("stolen = %v%%, want 25%%", got)
	}
	if got := b.sub(a).add(cpuClock{total: 600, steal: 0}).stolenPercent(); math.Abs(got-10) > 1e-9 {
		t.Errorf("stolen over two intervals = %v%%, want 10%%", got)
	}
	if got := a.sub(b).stolenPercent(); got != 0 {
		t.Errorf("a clock going backwards = %v%%, want 0", got)
	}
	if got := (cpuClock{}).stolenPercent(); got != 0 {
		t.Errorf("an empty interval = %v%%, want 0", got)
	}
	if c := readCPUClock(); c.total != 0 && c.steal > c.total {
		t.Errorf("readCPUClock = %+v: more stolen than elapsed", c)
	}
}
