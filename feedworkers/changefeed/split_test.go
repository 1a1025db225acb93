package changefeed_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// deliveries counts how many times each document reached a handler.
type deliveries struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *deliveries) handler(_ context.Context, items [][]byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids(items) {
		d.n[id]++
	}
	return nil
}

func (d *deliveries) count(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n[id]
}

func (d *deliveries) has(want []string) (bool, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var missing []string
	for _, id := range want {
		if d.n[id] == 0 {
			missing = append(missing, id)
		}
	}
	return len(missing) == 0, fmt.Sprintf("%d of %d missing, e.g. %v", len(missing), len(want), missing[:min(len(missing), 5)])
}

func writeThings(t testing.TB, st store.Store, prefix string, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		id := fmt.Sprintf("%s-%05d", prefix, i)
		writeThing(t, st, id)
		out = append(out, id)
	}
	return out
}

// splitProducts splits the first two feed ranges of products.
func splitProducts(t *testing.T, raw *embedded.Store, st store.Store) {
	t.Helper()
	ranges, err := st.Container(store.ProductsContainer).ReadFeedRanges(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges[:2] {
		if _, err := raw.SplitPartition(t.Context(), store.ProductsContainer, r); err != nil {
			t.Fatal(err)
		}
	}
}

// leasesFollowTheRanges reports whether the processors' leases are
// exactly one per current feed range of products, each held by one of
// them and read to its end (as its owner sees it: a lease's stored lag is
// its last checkpoint's).
func leasesFollowTheRanges(t *testing.T, st store.Store, procs ...*changefeed.Processor) (bool, string) {
	ranges, err := st.Container(store.ProductsContainer).ReadFeedRanges(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range ranges {
		want = append(want, procs[0].Name()+"."+r.String())
	}
	slices.Sort(want)
	var got []string
	for _, p := range procs {
		leases, err := p.Status(t.Context())
		if err != nil {
			return false, err.Error()
		}
		owned := p.Owned()
		for _, l := range leases {
			if !slices.Contains(owned, l.Lease) {
				continue
			}
			if l.LagEstimate != 0 {
				return false, fmt.Sprintf("lease %s: lag %d", l.Lease, l.LagEstimate)
			}
			got = append(got, l.Lease)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		return false, "leases (-one per range +held):\n" + diff
	}
	return true, ""
}

// TestRestartAfterASplit: a processor ran and stopped, two partitions of
// the watched container split, and a new instance starts. The leases of
// the ranges that split become one per child, each from its parent's
// checkpoint: nothing checkpointed is handed again, nothing written while
// no processor ran is skipped, with or without StartFromNow, and no lease
// is left behind for a range that is gone.
func TestRestartAfterASplit(t *testing.T) {
	for _, fromNow := range []bool{false, true} {
		t.Run(fmt.Sprintf("StartFromNow=%v", fromNow), func(t *testing.T) {
			raw, st := openStore(t)
			d := &deliveries{n: map[string]int{}}
			cfg := testConfig("a", d.handler)
			cfg.StartFromNow = fromNow
			p := startProcessor(t, context.Background(), st, cfg)
			before := writeThings(t, st, "before", 40)
			eventually(t, 10*time.Second, "the first run handled everything", func() (bool, string) {
				if ok, state := d.has(before); !ok {
					return false, state
				}
				return leasesFollowTheRanges(t, st, p)
			})
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			between := writeThings(t, st, "between", 40)
			splitProducts(t, raw, st)

			cfg.Instance = "b"
			q := startProcessor(t, context.Background(), st, cfg)
			after := writeThings(t, st, "after", 40)
			eventually(t, 10*time.Second, "everything written since the stop handled", func() (bool, string) {
				return d.has(slices.Concat(between, after))
			})
			eventually(t, 10*time.Second, "one lease per range after the split", func() (bool, string) {
				return leasesFollowTheRanges(t, st, q)
			})
			for _, id := range slices.Concat(before, between, after) {
				if n := d.count(id); n != 1 {
					t.Errorf("%s handed %d times, want once", id, n)
				}
			}
		})
	}
}

// TestSplitWhileRunning: partitions split under running processors (one
// instance, or two sharing the leases) while documents are written. The
// owner of each lease that split replaces it by its children at its
// checkpoint, the instances take them, and every document is handed,
// none that was checkpointed before the split again.
func TestSplitWhileRunning(t *testing.T) {
	for _, instances := range []int{1, 2} {
		t.Run(fmt.Sprintf("instances=%d", instances), func(t *testing.T) {
			raw, st := openStore(t)
			d := &deliveries{n: map[string]int{}}
			var procs []*changefeed.Processor
			for i := range instances {
				procs = append(procs, startProcessor(t, context.Background(), st, testConfig(fmt.Sprint("i", i), d.handler)))
			}
			// Balanced first: a lease stolen with a batch in hand would
			// hand that batch again, as it may.
			eventually(t, 10*time.Second, "the leases shared evenly", func() (bool, string) {
				counts := []int{}
				for _, p := range procs {
					counts = append(counts, len(p.Owned()))
				}
				if slices.Max(counts)-slices.Min(counts) > 1 {
					return false, fmt.Sprint("leases held: ", counts)
				}
				return leasesFollowTheRanges(t, st, procs...)
			})
			before := writeThings(t, st, "before", 40)
			eventually(t, 10*time.Second, "the documents before the split handled and checkpointed", func() (bool, string) {
				if ok, state := d.has(before); !ok {
					return false, state
				}
				return leasesFollowTheRanges(t, st, procs...)
			})

			done := make(chan []string)
			go func() {
				var during []string
				for i := range 40 {
					id := fmt.Sprintf("during-%03d", i)
					doc := fmt.Sprintf(`{"id":%q,"type":"thing"}`, id)
					if _, err := st.Container(store.ProductsContainer).Upsert(context.Background(), id, []byte(doc), nil); err == nil {
						during = append(during, id)
					}
				}
				done <- during
			}()
			splitProducts(t, raw, st)
			during := <-done
			after := writeThings(t, st, "after", 40)
			eventually(t, 10*time.Second, "every document handled", func() (bool, string) {
				return d.has(slices.Concat(during, after))
			})
			eventually(t, 10*time.Second, "one lease per range, each held by one instance", func() (bool, string) {
				return leasesFollowTheRanges(t, st, procs...)
			})
			if got := len(during); got != 40 {
				t.Errorf("%d of 40 writes during the split succeeded", got)
			}
			for _, id := range before {
				if n := d.count(id); n != 1 {
					t.Errorf("%s, checkpointed before the split, handed %d times", id, n)
				}
			}
		})
	}
}
