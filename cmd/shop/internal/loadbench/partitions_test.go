package loadbench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPartitionsDuring(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	snap := func(sec int, parts ...partitionTotals) throughputSnapshot {
		return throughputSnapshot{at: at.Add(time.Duration(sec) * time.Second), containers: []containerTotals{{Container: "carts", Partitions: parts}}}
	}
	before := snap(0,
		partitionTotals{Partition: "-40000000", Provisioned: 100, RequestCharge: 50, Throttled: 1},
		partitionTotals{Partition: "40000000-80000000", Provisioned: 100, RequestCharge: 20},
		partitionTotals{Partition: "80000000-FF", Provisioned: 100, RequestCharge: 7})
	after := snap(4,
		partitionTotals{Partition: "-40000000", Provisioned: 100, RequestCharge: 450, Throttled: 31},
		partitionTotals{Partition: "40000000-80000000", Provisioned: 100, RequestCharge: 30},
		partitionTotals{Partition: "80000000-FF", Provisioned: 100, RequestCharge: 7},
		partitionTotals{Partition: "80000000-C0000000", Provisioned: 100, RequestCharge: 8})
	want := []partitionUsage{
		{Container: "carts", Partition: "-40000000", Provisioned: 100, RUPerSecond: 100, Throttled: 30},
		{Container: "carts", Partition: "40000000-80000000", Provisioned: 100, RUPerSecond: 2.5},
		// Idle: left out. New since (a split): counted from zero.
		{Container: "carts", Partition: "80000000-C0000000", Provisioned: 100, RUPerSecond: 2},
	}
	if diff := cmp.Diff(want, partitionsDuring(before, after)); diff != "" {
		t.Errorf("partitionsDuring (-want +got):\n%s", diff)
	}
}

// TestPartitionsReported: the text and the markdown show the partitions
// with a throughput, and nothing of them without one (the default).
func TestPartitionsReported(t *testing.T) {
	hot := partitionUsage{Container: "carts", Partition: "-40000000", Provisioned: 100, RUPerSecond: 99.5, Throttled: 30}
	for _, tt := range []struct {
		name string
		rep  benchReport
		want bool
	}{
		{"Throttled", benchReport{Throughput: 400, MixPartitions: []partitionUsage{hot}}, true},
		{"Default", benchReport{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var text, md bytes.Buffer
			writeBenchText(&text, tt.rep)
			writeBenchMarkdown(&md, tt.rep)
			for what, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
				if got := strings.Contains(out, "400 RU/s provisioned per container"); got != tt.want {
					t.Errorf("%s: partition section shown %v, want %v:\n%s", what, got, tt.want, out)
				}
				if tt.want && !strings.Contains(out, "99.50") {
					t.Errorf("%s: no RU/s of the hot partition:\n%s", what, out)
				}
			}
		})
	}
}
