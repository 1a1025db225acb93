package changefeed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reference-shop/shop/feedworkers/changefeed"
)

// idle reports whether every lease of p has read its feed to the end.
func idle(t *testing.T, p *changefeed.Processor) (bool, string) {
	leases, err := p.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if l.LagEstimate != 0 {
			return false, fmt.Sprintf("%s lag %d", l.Lease, l.LagEstimate)
		}
	}
	return true, "all leases at the end"
}

func TestStartFromNow(t *testing.T) {
	tests := []struct {
		name string
		// earlier runs a processor without StartFromNow first, so the
		// leases exist with a checkpoint before the one under test starts.
		earlier bool
		// wantOld: the documents written before Start are delivered.
		wantOld bool
	}{
		{name: "new leases start at the end of the feed", earlier: false, wantOld: false},
		{name: "existing leases keep their checkpoint", earlier: true, wantOld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			if tt.earlier {
				s := &seen{by: map[string]string{}}
				p := startProcessor(t, t.Context(), st, testConfig("a", s.handler("a", nil)))
				writeThing(t, st, "before")
				eventually(t, 5*time.Second, "the earlier run's first document", func() (bool, string) {
					s.mu.Lock()
					defer s.mu.Unlock()
					return s.by["before"] != "", fmt.Sprintf("%d delivered", len(s.by))
				})
				if err := p.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			var old []string
			for i := range 40 {
				old = append(old, fmt.Sprintf("old-%02d", i))
				writeThing(t, st, old[i])
			}
			s := &seen{by: map[string]string{}}
			cfg := testConfig("b", s.handler("b", nil))
			cfg.StartFromNow = true
			p := startProcessor(t, t.Context(), st, cfg)
			writeThing(t, st, "new")
			eventually(t, 5*time.Second, "the new document delivered", func() (bool, string) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.by["new"] != "", fmt.Sprintf("%d delivered", len(s.by))
			})
			eventually(t, 5*time.Second, "every lease at the end", func() (bool, string) { return idle(t, p) })
			s.mu.Lock()
			defer s.mu.Unlock()
			delivered := 0
			for _, id := range old {
				if s.by[id] != "" {
					delivered++
				}
			}
			if got, want := delivered, len(old); tt.wantOld && got != want {
				t.Errorf("documents written before Start delivered = %d, want %d", got, want)
			}
			if got := delivered; !tt.wantOld && got != 0 {
				t.Errorf("documents written before Start delivered = %d, want 0", got)
			}
		})
	}
}
