package loadbench

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// cpuClock is the machine's CPU time so far, from the first line of
// /proc/stat, in clock ticks: all of it, and the part the hypervisor gave
// to other machines while this one wanted to run ("steal").
type cpuClock struct {
	total, steal uint64
}

// readCPUClock reads the clock; the zero clock where /proc/stat is not
// readable (not Linux), which stolenPercent reports as 0.
func readCPUClock() cpuClock {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuClock{}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() {
		return cpuClock{}
	}
	f := strings.Fields(sc.Text())
	if len(f) < 9 || f[0] != "cpu" {
		return cpuClock{}
	}
	var c cpuClock
	// user nice system idle iowait irq softirq steal [guest guest_nice],
	// where guest time is already counted in user time.
	for i, s := range f[1:9] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuClock{}
		}
		c.total += n
		if i == 7 {
			c.steal = n
		}
	}
	return c
}

// sub is the ticks from a to c.
func (c cpuClock) sub(a cpuClock) cpuClock {
	if c.total < a.total || c.steal < a.steal {
		return cpuClock{}
	}
	return cpuClock{total: c.total - a.total, steal: c.steal - a.steal}
}

// add sums two intervals.
func (c cpuClock) add(d cpuClock) cpuClock {
	return cpuClock{total: c.total + d.total, steal: c.steal + d.steal}
}

// stolenPercent is the share of the interval's CPU time the hypervisor
// took: on a virtual machine whose host is busy, time when neither the
// shop nor the load generator could run, which shows as latency no code
// of theirs explains. 0 on a machine that reports none.
func (c cpuClock) stolenPercent() float64 {
	if c.total == 0 {
		return 0
	}
	return float64(c.steal) / float64(c.total) * 100
}
