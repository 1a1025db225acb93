package changefeed

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPlanTakesAFairShare(t *testing.T) {
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	const expiry = 10 * time.Second
	fresh, stale := now.Add(-time.Second), now.Add(-time.Minute)
	leases := func(owners ...string) []lease {
		out := make([]lease, len(owners))
		for i, o := range owners {
			out[i] = lease{ID: string(rune('a' + i)), Owner: o, Heartbeat: fresh}
		}
		return out
	}
	expired := func(ls []lease, i int) []lease { ls[i].Heartbeat = stale; return ls }
	tests := []struct {
		name   string
		leases []lease
		want   []string
	}{
		{"alone, it takes every free lease", leases("", "", "", ""), []string{"a", "b", "c", "d"}},
		{"it takes its share of the free leases", leases("x", "", "", ""), []string{"b", "c"}},
		{"an expired heartbeat frees the lease", expired(leases("x", "x", "x", "x"), 2), []string{"c"}},
		{"its own expired lease is taken back", expired(leases("me", "x", "x", "x"), 0), []string{"a"}},
		{"it steals one lease from the busiest owner", leases("x", "x", "x", "y"), []string{"a"}},
		{"no steal from an owner one lease ahead", leases("x", "x", "y", "me"), nil},
		{"it holds its share already", leases("me", "me", "x", "x"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range plan(tt.leases, "me", now, expiry) {
				got = append(got, l.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
