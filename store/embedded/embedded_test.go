package embedded_test

import (
	"path/filepath"
	"testing"

	"shop/store"
	"shop/store/embedded"
	"shop/store/storetest"
)

// open returns a store in a fresh file, closed when t ends.
func open(t *testing.T, opts embedded.Options) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// The embedded store splits partitions on demand, so the contract's
// split tests run here.
var _ storetest.Splitter = (*embedded.Store)(nil)

// Its throughput can be set, so the contract's throttle test runs here.
var _ storetest.Throttler = (*embedded.Store)(nil)

func TestContract(t *testing.T) {
	// The zero Options: the embedded store is held to everything.
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, embedded.Options{}) }, storetest.Options{})
}
