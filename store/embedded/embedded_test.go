package embedded_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/store"
	"shop/store/embedded"
	"shop/store/storetest"
	"shop/store/storetest/suite"
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

// TestContract runs the whole contract; the zero Options hold the
// embedded store to everything. Every container the run ensures is
// recorded: they are exactly the list an account's owner deploys for a
// run that may create none (suite.Containers, `shop containers
// -contract`), so the list cannot drift from the suite.
func TestContract(t *testing.T) {
	rec := &ensured{defs: map[string]store.ContainerDef{}}
	storetest.Run(t, func(t *testing.T) store.Store {
		return hooked{Store: open(t, embedded.Options{}), ensure: rec.add}
	}, storetest.Options{})
	want := map[string]store.ContainerDef{}
	for _, def := range suite.Containers() {
		want[def.ID] = def
	}
	if diff := cmp.Diff(want, rec.defs); diff != "" {
		t.Errorf("the containers the run ensured are not suite.Containers (-listed +ensured):\n%s", diff)
	}
}

// ensured records the definitions of the successful EnsureContainer calls
// of a run, by container id; two definitions under one id are an error.
type ensured struct {
	mu   sync.Mutex
	defs map[string]store.ContainerDef
}

func (e *ensured) add(def store.ContainerDef) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.defs[def.ID]; ok && !reflect.DeepEqual(old, def) {
		return fmt.Errorf("container %s ensured as %+v and as %+v", def.ID, old, def)
	}
	e.defs[def.ID] = def
	return nil
}

// hooked is the embedded store with the contract's hooks (Throttler,
// Splitter), whose successful EnsureContainer calls are handed to ensure.
type hooked struct {
	*embedded.Store
	ensure func(store.ContainerDef) error
}

func (h hooked) EnsureContainer(ctx context.Context, def store.ContainerDef) (bool, error) {
	changed, err := h.Store.EnsureContainer(ctx, def)
	if err == nil {
		if rerr := h.ensure(def); rerr != nil {
			return changed, rerr
		}
	}
	return changed, err
}
