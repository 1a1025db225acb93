package embedded_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/storetest"
	"github.com/reference-shop/shop/store/storetest/suite"
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
	rec.check(t)
}

// check fails t unless every container the run ensured is listed in
// suite.Containers as it was ensured and, when no -run or -skip pattern
// left subtests out, every listed one was ensured.
func (e *ensured) check(t *testing.T) {
	t.Helper()
	want := map[string]store.ContainerDef{}
	for _, def := range suite.Containers() {
		if _, ok := e.defs[def.ID]; ok || wholeRun() {
			want[def.ID] = def
		}
	}
	if diff := cmp.Diff(want, e.defs, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the containers the run ensured are not suite.Containers (-listed +ensured):\n%s", diff)
	}
}

// wholeRun reports whether every subtest runs: no -run pattern names a
// subtest, and no -skip pattern is given.
func wholeRun() bool {
	run, skip := flag.Lookup("test.run"), flag.Lookup("test.skip")
	return (run == nil || !strings.Contains(run.Value.String(), "/")) && (skip == nil || skip.Value.String() == "")
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

// TestContractProvisioned runs the contract as on a target that can
// create no container (Options.Provisioned, as Cosmos keyless): one
// store whose containers were made beforehand from suite.Containers, as
// an account's owner deploys them, behind a wrapper that refuses to
// create or change one, as Entra ID's data-plane roles do. Each container
// starts with leftovers of an earlier run, items whose ids and values
// the tests use too, and the contract then runs twice on the same
// containers: every test must find its containers emptied first.
func TestContractProvisioned(t *testing.T) {
	es := open(t, embedded.Options{})
	deployed := map[string]store.ContainerDef{}
	for _, def := range suite.Containers() {
		if _, err := es.EnsureContainer(t.Context(), def); err != nil {
			t.Fatal(err)
		}
		deployed[def.ID] = def
		c := es.Container(def.ID)
		for _, doc := range []string{
			`{"id":"leftover","pk":"p","n":7,"kind":"a","tags":["all","t1"],"email":"x@example.com","createdAt":"2024-01-01"}`,
			`{"id":"a","pk":"p","n":1,"email":"a@example.com"}`,
			`{"id":"existing","pk":"p","n":1,"email":"e@example.com"}`,
			`{"id":"leftover","pk":"p0","kind":"a","n":3}`,
			`{"id":"leftover","pk":"p1","kind":"b"}`,
			`{"id":"old00","pk":"k00","v":"old"}`,
		} {
			var m map[string]any
			if err := json.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(t.Context(), m["pk"].(string), []byte(doc)); err != nil {
				t.Fatalf("leftover in %s: %v", def.ID, err)
			}
		}
	}
	rec := &ensured{defs: map[string]store.ContainerDef{}}
	target := refusing{hooked: hooked{Store: es, ensure: rec.add}, deployed: deployed}
	for _, run := range []string{"WithLeftovers", "AfterARun"} {
		t.Run(run, func(t *testing.T) {
			storetest.Run(t, func(*testing.T) store.Store { return target }, storetest.Options{Provisioned: true})
		})
	}
	rec.check(t)
}

// refusing is a store that creates and changes no container, as Cosmos
// with Entra ID: EnsureContainer of a deployed container's own definition
// is changed=false, another partition key ECONFLICT, any other difference
// ECONFLICT too, and a container not deployed ENOTFOUND.
type refusing struct {
	hooked
	deployed map[string]store.ContainerDef
}

func (r refusing) EnsureContainer(ctx context.Context, def store.ContainerDef) (bool, error) {
	have, ok := r.deployed[def.ID]
	switch {
	case !ok:
		return false, domain.Errorf(domain.ENOTFOUND, "no container %s, and this store creates none", def.ID)
	case have.PartitionKeyPath != def.PartitionKeyPath:
		return false, domain.Errorf(domain.ECONFLICT, "container %s is partitioned on %s", def.ID, have.PartitionKeyPath)
	case !cmp.Equal(have, def, cmpopts.EquateEmpty()):
		return false, domain.Errorf(domain.ECONFLICT, "container %s differs from its definition, and this store changes none", def.ID)
	}
	changed, err := r.hooked.EnsureContainer(ctx, def)
	if changed {
		return changed, fmt.Errorf("container %s changed by a store that changes none", def.ID)
	}
	return changed, err
}
