package changefeed_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// newStore opens a migrated embedded store in a temp dir, metered as the
// feed workers run it: the processor is tested against a real adapter,
// not a mock.
func newStore(tb testing.TB) store.Store {
	tb.Helper()
	_, st := openStore(tb)
	return st
}

// openStore is newStore that also returns the embedded store itself, to
// split its partitions.
func openStore(tb testing.TB) (*embedded.Store, store.Store) {
	tb.Helper()
	s, err := embedded.Open(filepath.Join(tb.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	if err := migrations.Apply(context.Background(), s, io.Discard); err != nil {
		tb.Fatal(err)
	}
	return s, store.Metered(s)
}

// eventually polls cond until it holds or the deadline passes: the tests
// wait for asynchronous work this way, never with a fixed sleep. The poll
// interval grows, so an expensive condition does not slow what it awaits.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %s did not happen; last state: %s", timeout, what, state)
		}
		time.Sleep(wait)
		wait = min(2*wait, 250*time.Millisecond)
	}
}
