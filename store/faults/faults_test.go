package faults_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.EnsureContainer(context.Background(), store.ContainerDef{ID: "things", PartitionKeyPath: "/pk"}); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEachFaultHasItsShape(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rule           faults.Rule
		wantRetryAfter time.Duration
		want           faults.Counts
	}{
		{"ThrottleCarriesRetryAfter", faults.Rule{Throttle: 1}, 250 * time.Millisecond, faults.Counts{Calls: 1, Throttled: 1}},
		{"UnavailableHasNoRetryAfter", faults.Rule{Unavailable: 1}, 0, faults.Counts{Calls: 1, Unavailable: 1}},
		{"TimeoutEndsAtTheDeadline", faults.Rule{Timeout: 1}, 0, faults.Counts{Calls: 1, TimedOut: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := faults.Wrap(openStore(t), faults.Config{Rules: []faults.Rule{tc.rule}, RetryAfter: 250 * time.Millisecond, TimeoutAfter: time.Hour})
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := f.Container("things").Create(ctx, "a", []byte(`{"id":"1","pk":"a"}`))
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != domain.EUNAVAILABLE {
				t.Fatalf("err = %v, want %s", err, domain.EUNAVAILABLE)
			}
			if got, want := de.RetryAfter, tc.wantRetryAfter; got != want {
				t.Errorf("RetryAfter = %v, want %v", got, want)
			}
			if diff := cmp.Diff(tc.want, f.Counts()); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			f.Heal()
			if _, err := f.Container("things").Read(context.Background(), "a", "1"); !domain.IsCode(err, domain.ENOTFOUND) {
				t.Errorf("read after a faulted create = %v, want not found: a faulted call must not reach the store", err)
			}
		})
	}
}

// TestPartitionFullFailsWritesOnly: a full logical partition refuses
// writes (Cosmos: 403, substatus 1014) and still serves reads.
func TestPartitionFullFailsWritesOnly(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	if _, err := st.Container("things").Create(ctx, "a", []byte(`{"id":"1","pk":"a"}`)); err != nil {
		t.Fatal(err)
	}
	f := faults.Wrap(st, faults.Config{Rules: []faults.Rule{{PartitionFull: 1}}})
	_, err := f.Container("things").Create(ctx, "a", []byte(`{"id":"2","pk":"a"}`))
	if got, want := domain.ErrorCode(err), domain.EPARTITIONFULL; got != want {
		t.Errorf("create: code %q (%v), want %q", got, err, want)
	}
	if _, err := f.Container("things").Read(ctx, "a", "1"); err != nil {
		t.Errorf("read of a full partition: %v, want the item", err)
	}
	if diff := cmp.Diff(faults.Counts{Calls: 2, Full: 1}, f.Counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestRulesSelectOperationsAndContainers(t *testing.T) {
	st := openStore(t)
	if _, err := st.EnsureContainer(context.Background(), store.ContainerDef{ID: "others", PartitionKeyPath: "/pk"}); err != nil {
		t.Fatal(err)
	}
	f := faults.Wrap(st, faults.Config{Rules: []faults.Rule{
		{Ops: faults.Writes, Containers: []string{"things"}, Unavailable: 1},
	}})
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		call    func() error
		wantErr bool
	}{
		{"WriteToSelectedContainerFails", func() error {
			_, err := f.Container("things").Upsert(ctx, "a", []byte(`{"id":"1","pk":"a"}`), nil)
			return err
		}, true},
		{"ReadOfSelectedContainerPasses", func() error {
			_, err := f.Container("things").Query(ctx, store.Query{PartitionKey: "a"})
			return err
		}, false},
		{"WriteToOtherContainerPasses", func() error {
			_, err := f.Container("others").Upsert(ctx, "a", []byte(`{"id":"1","pk":"a"}`), nil)
			return err
		}, false},
		{"PingIsNotInAContainerList", func() error { return f.Ping(ctx) }, false},
		{"BatchIsAWrite", func() error {
			_, err := f.Container("things").ExecuteBatch(ctx, "a", []store.BatchOp{{Kind: store.BatchUpsert, Item: []byte(`{"id":"2","pk":"a"}`)}})
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestRateAndSeed(t *testing.T) {
	run := func(seed uint64) ([]bool, faults.Counts) {
		f := faults.Wrap(openStore(t), faults.Config{Seed: seed, Rules: []faults.Rule{{Ops: []faults.Op{faults.OpRead}, Throttle: 0.1, Unavailable: 0.1}}})
		var failed []bool
		for range 2000 {
			_, err := f.Container("things").Read(context.Background(), "a", "missing")
			failed = append(failed, domain.IsCode(err, domain.EUNAVAILABLE))
		}
		return failed, f.Counts()
	}
	a, ca := run(7)
	b, _ := run(7)
	if !cmp.Equal(a, b) {
		t.Error("the same seed injected different faults")
	}
	if got := ca.Injected(); got < 300 || got > 500 {
		t.Errorf("injected %d faults in 2000 calls at 20%%, want about 400", got)
	}
	if got, want := ca.Calls, int64(2000); got != want {
		t.Errorf("calls = %d, want %d", got, want)
	}
	c, _ := run(8)
	if cmp.Equal(a, c) {
		t.Error("another seed injected the same faults")
	}
}

func TestHealAndBreak(t *testing.T) {
	f := faults.Wrap(openStore(t), faults.Config{Rules: []faults.Rule{{Unavailable: 1}}, Disabled: true})
	ping := func() error { return f.Ping(context.Background()) }
	if err := ping(); err != nil {
		t.Fatalf("disabled store: %v", err)
	}
	f.Break()
	if err := ping(); !domain.IsCode(err, domain.EUNAVAILABLE) {
		t.Fatalf("broken store: %v, want unavailable", err)
	}
	f.Heal()
	if err := ping(); err != nil {
		t.Fatalf("healed store: %v", err)
	}
	if got, want := f.Counts(), (faults.Counts{Calls: 1, Unavailable: 1}); got != want {
		t.Errorf("counts = %+v, want %+v: a healed store counts nothing", got, want)
	}
}

func TestLatencyIsAddedAndAbandonedWithTheCaller(t *testing.T) {
	f := faults.Wrap(openStore(t), faults.Config{Rules: []faults.Rule{{Latency: time.Hour}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Ping(ctx); !domain.IsCode(err, domain.EUNAVAILABLE) {
		t.Fatalf("err = %v, want unavailable once the caller gave up", err)
	}
	if got := f.Counts().Delayed; got != 1 {
		t.Errorf("delayed = %d, want 1", got)
	}
}
