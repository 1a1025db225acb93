package feedworkers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestStartWaitsForAnUnavailableStore: a process starting while the store
// answers only 503s keeps trying to set up its leases, and starts once
// the store answers; it gives up only when its context ends.
func TestStartWaitsForAnUnavailableStore(t *testing.T) {
	tests := []struct {
		name string
		heal bool
	}{
		{"the store comes back: the workers start", true},
		{"the context ends first: Start gives up with EUNAVAILABLE", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := faults.Wrap(openStore(t), faults.Config{Seed: 1, Rules: []faults.Rule{{Unavailable: 1}}})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type started struct {
				w   *feedworkers.Workers
				err error
			}
			done := make(chan started, 1)
			go func() {
				w, err := feedworkers.Start(ctx, f, writes.New(repo.New(store.Metered(f), 0), nil, nil), workersConfig("w1"))
				done <- started{w, err}
			}()
			eventually(t, 10*time.Second, "three failed attempts at starting", func() (bool, string) {
				c := f.Counts()
				return c.Unavailable >= 3, fmt.Sprintf("%+v", c)
			})
			if tt.heal {
				f.Heal()
			} else {
				cancel()
			}
			got := <-done
			if !tt.heal {
				if !domain.IsCode(got.err, domain.EUNAVAILABLE) {
					t.Errorf("Start = %v, want EUNAVAILABLE", got.err)
				}
				return
			}
			if got.err != nil {
				t.Fatalf("Start after the store healed = %v, want the workers", got.err)
			}
			t.Cleanup(func() { _ = got.w.Stop(context.Background()) })
			status, err := got.w.FeedStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(status), 4; got != want {
				t.Errorf("running processors = %d, want %d", got, want)
			}
		})
	}
}
