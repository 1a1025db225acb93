package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// testProcessor is a processor's configuration and its handler.
type testProcessor struct {
	changefeed.Config
	handler func(ctx context.Context, items [][]byte) error
}

// testConfig is a processor tuned for tests: short polls, expiry and
// backoff, so the tests wait for milliseconds, not seconds.
func testConfig(instance string, h func(ctx context.Context, items [][]byte) error) testProcessor {
	return testProcessor{Config: changefeed.Config{
		Name: "things", Watched: store.ProductsContainer, Instance: instance,
		MaxItems: 10, LeaseExpiry: time.Second, RenewEvery: 50 * time.Millisecond,
		PollEvery: 5 * time.Millisecond, MaxAttempts: 3, Backoff: time.Millisecond,
	}, handler: h}
}

func startProcessor(t *testing.T, ctx context.Context, st store.Store, cfg testProcessor) *changefeed.Processor {
	t.Helper()
	h := func(ctx context.Context, b changefeed.Batch) error { return cfg.handler(ctx, b.Items) }
	p, err := changefeed.NewProcessor(st.Container(cfg.Watched), st.Container(store.LeasesContainer), h, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	return p
}

func writeThing(t testing.TB, st store.Store, id string) {
	t.Helper()
	doc := fmt.Sprintf(`{"id":%q,"type":"thing"}`, id)
	if _, err := st.Container(store.ProductsContainer).Upsert(context.Background(), id, []byte(doc), nil); err != nil {
		t.Fatal(err)
	}
}

func ids(items [][]byte) []string {
	var out []string
	for _, it := range items {
		d, _ := repo.Decode[struct {
			ID string `json:"id"`
		}](it)
		out = append(out, d.ID)
	}
	return out
}

// seen records which documents a handler was handed, and by whom.
type seen struct {
	mu sync.Mutex
	by map[string]string
}

func (s *seen) handler(instance string, fail func(items [][]byte) error) func(context.Context, [][]byte) error {
	return func(_ context.Context, items [][]byte) error {
		if fail != nil {
			if err := fail(items); err != nil {
				return err
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, id := range ids(items) {
			s.by[id] = instance
		}
		return nil
	}
}

func (s *seen) has(want ...string) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var missing []string
	for _, id := range want {
		if _, ok := s.by[id]; !ok {
			missing = append(missing, id)
		}
	}
	return len(missing) == 0, fmt.Sprintf("missing %v", missing)
}

func deadLetters(t *testing.T, st store.Store) []changefeed.DeadLetter {
	t.Helper()
	page, err := st.Container(store.LeasesContainer).Query(t.Context(), store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: changefeed.TypeDeadLetter}},
		Limit:   100,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []changefeed.DeadLetter
	for _, it := range page.Items {
		d, err := repo.Decode[changefeed.DeadLetter](it)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestProcessorRetriesAndParksPoison(t *testing.T) {
	errPoison := errors.New("cannot apply poison")
	tests := []struct {
		name string
		// fail returns the handler's error for a batch (nil = success);
		// calls counts the calls so far.
		fail            func(calls int, items [][]byte) error
		wantDeadLetters []string
	}{
		{
			name: "a failure on the very first batch is retried",
			fail: func(calls int, _ [][]byte) error {
				if calls <= 2 {
					return errors.New("store unavailable")
				}
				return nil
			},
		},
		{
			name: "a poison document is parked and the feed moves on",
			fail: func(_ int, items [][]byte) error {
				if slices.Contains(ids(items), "poison") {
					return errPoison
				}
				return nil
			},
			wantDeadLetters: []string{"poison"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			for _, id := range []string{"a", "poison", "b"} {
				writeThing(t, st, id)
			}
			s := &seen{by: map[string]string{}}
			var mu sync.Mutex
			calls := 0
			p := startProcessor(t, context.Background(), st, testConfig("i1", s.handler("i1", func(items [][]byte) error {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				return tt.fail(n, items)
			})))
			eventually(t, 10*time.Second, "a and b handled", func() (bool, string) { return s.has("a", "b") })
			// A document written after the failure still flows.
			writeThing(t, st, "c")
			eventually(t, 10*time.Second, "c handled", func() (bool, string) { return s.has("c") })

			var got []string
			for _, d := range deadLetters(t, st) {
				got = append(got, d.DocumentID)
				if !strings.Contains(d.Reason, errPoison.Error()) || d.Processor != "things" || len(d.Document) == 0 {
					t.Errorf("dead letter = %+v, want the reason, the processor and the document", d)
				}
			}
			if diff := cmp.Diff(tt.wantDeadLetters, got); diff != "" {
				t.Errorf("dead-lettered documents (-want +got):\n%s", diff)
			}
			eventually(t, 5*time.Second, "the dead letters counted in the status", func() (bool, string) {
				status, err := p.Status(t.Context())
				if err != nil {
					return false, err.Error()
				}
				total := 0
				for _, l := range status {
					total += l.DeadLetters
				}
				return total == len(tt.wantDeadLetters), fmt.Sprintf("%+v", status)
			})
		})
	}
}

func TestInstancesShareTheLeases(t *testing.T) {
	st := newStore(t)
	s := &seen{by: map[string]string{}}
	procs := map[string]*changefeed.Processor{}
	for _, name := range []string{"a", "b", "c"} {
		procs[name] = startProcessor(t, context.Background(), st, testConfig(name, s.handler(name, nil)))
	}
	var want []string
	write := func(prefix string, n int) {
		for i := range n {
			id := fmt.Sprintf("%s-%03d", prefix, i)
			writeThing(t, st, id)
			want = append(want, id)
		}
	}
	balanced := func(names ...string) func() (bool, string) {
		return func() (bool, string) {
			owners := map[string][]string{}
			for _, n := range names {
				for _, l := range procs[n].Owned() {
					owners[l] = append(owners[l], n)
				}
			}
			state := fmt.Sprint(owners)
			if len(owners) != 4 {
				return false, state
			}
			for _, o := range owners {
				if len(o) != 1 {
					return false, state
				}
			}
			share := (4 + len(names) - 1) / len(names)
			for _, n := range names {
				if k := len(procs[n].Owned()); k == 0 || k > share {
					return false, state
				}
			}
			return true, state
		}
	}
	write("first", 100)
	eventually(t, 10*time.Second, "every lease owned by exactly one of 3 instances, none idle", balanced("a", "b", "c"))
	eventually(t, 10*time.Second, "every change handled", func() (bool, string) { return s.has(want...) })

	if err := procs["a"].Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := procs["a"].Owned(); len(got) != 0 {
		t.Errorf("a stopped still owning %v", got)
	}
	// Released, not left to expire: no lease names a as its owner.
	status, err := procs["b"].Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range status {
		if l.Owner == "a" {
			t.Errorf("lease %s still owned by the stopped instance", l.Lease)
		}
	}
	eventually(t, 10*time.Second, "a's leases moved to b and c", balanced("b", "c"))
	write("second", 50)
	eventually(t, 10*time.Second, "changes after the stop handled", func() (bool, string) { return s.has(want...) })
}

func TestStopFinishesAndCheckpointsTheBatchInHand(t *testing.T) {
	st := newStore(t)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p := startProcessor(t, context.Background(), st, testConfig("a", func(_ context.Context, items [][]byte) error {
		if slices.Contains(ids(items), "x") {
			once.Do(func() { close(started) })
			<-release
		}
		return nil
	}))
	writeThing(t, st, "x")
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("x never reached the handler")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop(context.Background()) }()
	close(release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}

	// A new instance starts from the checkpoints: x is not handed again.
	s := &seen{by: map[string]string{}}
	next := startProcessor(t, context.Background(), st, testConfig("b", s.handler("b", nil)))
	eventually(t, 10*time.Second, "every lease read to the end", func() (bool, string) {
		status, err := next.Status(t.Context())
		if err != nil {
			return false, err.Error()
		}
		for _, l := range status {
			if l.Owner != "b" || l.LagEstimate != 0 {
				return false, fmt.Sprintf("%+v", status)
			}
		}
		return true, ""
	})
	if ok, _ := s.has("x"); ok {
		t.Error("x was handed again: Stop did not checkpoint the batch it finished")
	}
}
