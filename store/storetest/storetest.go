// Package storetest is the contract every adapter of the store port must
// pass: each behavior of Cosmos DB the shop relies on is specified once,
// through the port only, and run against store/embedded always and
// store/cosmos whenever an account or emulator is reachable.
//
// Beyond what every target must do, the suite names the capabilities of
// Cosmos it tests (Capability: charges, batches, patch, change feed,
// TTL, ...) and which tests need each. A caller passes Options: the zero
// value holds the target to all of them, as the embedded store and a real
// account are held; an emulator declares the ones its documentation says
// it lacks, and those tests are skipped with the reason instead of
// failing (store/cosmos/cosmos_test.go, emulatorGaps).
//
// Each test ensures containers of its own, named from the test and their
// ordinal within it (suite.Name), the same on every run, and listed in
// store/storetest/suite: a keyed run on a Cosmos account isolates itself
// in a database of its own, while a keyless one runs on containers the
// account's owner deployed from that list. What only the embedded store
// can show (TTL purge timing, the number of simulated partitions,
// durability across kill -9, the Request Unit formula) is tested in
// store/embedded.
package storetest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// Run runs the contract suite. newStore returns a store for one subtest;
// it must close the store when t ends (t.Cleanup). opts says what the
// target is held to: its zero value, everything (see Options).
func Run(t *testing.T, newStore func(t *testing.T) store.Store, opts Options) {
	if err := opts.check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range Capabilities {
		if why, ok := opts.Lacks[c]; ok {
			t.Logf("the target lacks %s: %s", c, why)
		}
	}
	targets.Store(t.Name(), opts)
	t.Cleanup(func() { targets.Delete(t.Name()) })
	tests := []struct {
		name  string
		fn    func(t *testing.T, s store.Store)
		needs []Capability // each test also uses Charges, checked in passing
	}{
		{"EnsureContainerIdempotent", testEnsureContainer, nil},
		{"PartitionKeyRequired", testPartitionKeyRequired, nil},
		{"IDUniquePerPartition", testIDUniquePerPartition, nil},
		{"ETagChangesOnEveryWrite", testETagChangesOnEveryWrite, []Capability{Patch}},
		{"TSIsSet", testTSIsSet, nil},
		{"ReadIfNoneMatch", testReadIfNoneMatch, nil},
		{"StaleIfMatchIsPrecondition", testStaleIfMatch, []Capability{Patch}},
		{"UpsertIfMatchOfMissingCreates", testUpsertIfMatchOfMissing, []Capability{Batch}},
		{"MissingIsNotFound", testMissingIsNotFound, []Capability{Patch}},
		{"ItemOver2MBRefused", testItemOver2MB, nil},
		{"BadInput", testBadInput, nil},
		{"OptimisticConcurrency", testOptimisticConcurrency, nil},
		{"UniqueKeysPerPartition", testUniqueKeys, []Capability{UniqueKeys}},
		{"BatchAtomic", testBatchAtomic, []Capability{Batch}},
		{"BatchRefusedAcrossKeys", testBatchAcrossKeys, []Capability{Batch}},
		{"BatchOver100Refused", testBatchOver100, []Capability{Batch}},
		{"BatchOver2MBRefused", testBatchOver2MB, []Capability{Batch}},
		{"PatchOver10OpsRefused", testPatchOver10Ops, []Capability{Patch, Batch}},
		{"Patch", testPatch, []Capability{Patch}},
		{"ConditionalPatch", testConditionalPatch, []Capability{ConditionalPatch}},
		{"ConditionalPatchInBatch", testConditionalBatch, []Capability{Batch, ConditionalPatch}},
		{"ConditionalPatchConcurrent", testConditionalConcurrent, []Capability{ConditionalPatch}},
		{"Query", testQuery, nil},
		{"OrderByKeepsItemsWithoutTheProperty", testOrderByKeepsMissing, []Capability{CompositeIndexes}},
		{"ChangeFeed", testChangeFeed, []Capability{ChangeFeed}},
		{"ChangeFeedFromNow", testFeedFromNow, []Capability{ChangeFeed}},
		{ChangeFeedAcrossSplit, testFeedAcrossSplit, []Capability{ChangeFeed}},
		{"TTL", testTTL, []Capability{TTL}},
		{ThrottledOverBudget, testThrottle, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range tt.needs {
				if why, ok := opts.Lacks[c]; ok {
					t.Skipf("the target lacks %s: %s", c, why)
				}
			}
			tt.fn(t, newStore(t))
		})
	}
}

// pkPath is the partition key path of the suite's containers.
const pkPath = suite.PartitionKeyPath

func ttl(seconds int) *int { return &seconds }

// newContainer ensures the test's next container: the /pk key, every path
// indexed, and the default TTL given.
func newContainer(t *testing.T, s store.Store, defaultTTL *int) store.Container {
	t.Helper()
	return ensure(t, s, suite.Plain(defaultTTL))
}

// newOrderedContainer is newContainer with the composite index every
// given order needs (suite.Ordered).
func newOrderedContainer(t *testing.T, s store.Store, orders []suite.Order) store.Container {
	t.Helper()
	return ensure(t, s, suite.Ordered(orders...))
}

// ensure names def as the test's next container and ensures it.
func ensure(t *testing.T, s store.Store, def store.ContainerDef) store.Container {
	t.Helper()
	return ensureDefined(t, s, define(t, def))
}

// ensureDefined ensures def, named by define. On a Provisioned target
// the container exists already, deployed from suite.Containers, and
// perhaps holds what an earlier run left: EnsureContainer must find it
// as def says (changed=false; a keyless Cosmos store reads and compares
// only), and it is emptied before the test uses it.
func ensureDefined(t *testing.T, s store.Store, def store.ContainerDef) store.Container {
	t.Helper()
	changed, err := s.EnsureContainer(context.Background(), def)
	if err != nil {
		t.Fatalf("EnsureContainer(%s): %v", def.ID, err)
	}
	c := s.Container(def.ID)
	if provisioned(t) {
		if changed {
			t.Fatalf("EnsureContainer(%s) created or changed the container on a Provisioned target, "+
				"whose containers exist already as suite.Containers defines them", def.ID)
		}
		empty(t, c)
	}
	return c
}

// empty deletes every item of c: the whole container queried for ids and
// partition keys, each deleted (one expired meanwhile is gone already).
// A drained container is as good as a new one to every test: queries
// find nothing, and its change feed read from the beginning in
// latest-version mode holds no deleted item.
func empty(t *testing.T, c store.Container) {
	t.Helper()
	for _, it := range queryAll(t, c, store.Query{Select: []string{"id", "pk"}, Limit: store.MaxQueryPageSize}) {
		id, _ := it["id"].(string)
		pk, ok := it["pk"].(string)
		if !ok {
			t.Fatalf("emptying the container: item %q has no string pk: %v", id, it)
		}
		if _, err := c.Delete(ctx, pk, id, nil); err != nil && !domain.IsCode(err, domain.ENOTFOUND) {
			t.Fatalf("emptying the container: Delete(%s, %s): %v", pk, id, err)
		}
	}
	if left := queryAll(t, c, store.Query{Select: []string{"id", "pk"}}); len(left) > 0 {
		t.Fatalf("the container still holds %d items after it was emptied: %v", len(left), left)
	}
}

// define names def (whose ID is ignored) as the next container of t,
// suite.Name(its path below the Run, its ordinal within t): the same on
// every run, so that an account's owner can deploy it beforehand. It
// fails the test unless suite lists that container with that definition:
// a container the list lacks is one `shop containers -contract` would not
// deploy.
func define(t *testing.T, def store.ContainerDef) store.ContainerDef {
	t.Helper()
	path := suitePath(t)
	ordinals.Lock()
	n, ok := ordinals.next[t]
	if !ok {
		t.Cleanup(func() {
			ordinals.Lock()
			delete(ordinals.next, t)
			ordinals.Unlock()
		})
	}
	n++
	ordinals.next[t] = n
	ordinals.Unlock()
	def.ID = suite.Name(path, n)
	listed, ok := suite.Lookup(path, n)
	if !ok {
		t.Fatalf("%s ensures a container #%d that store/storetest/suite does not list: add it there, "+
			"so that `shop containers -contract` deploys it for a run that may create none", path, n)
	}
	if diff := cmp.Diff(listed, def, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("%s's container #%d differs from the one store/storetest/suite lists, which `shop containers -contract` deploys "+
			"(-listed +ensured):\n%s", path, n, diff)
	}
	return def
}

// ordinals counts the containers each running test has defined.
var ordinals = struct {
	sync.Mutex
	next map[*testing.T]int
}{next: map[*testing.T]int{}}

// missingContainer is a container no run creates: suite lists no such
// name.
const missingContainer = "storetest-missing"

// suitePath is t's name below the Run it belongs to ("TTL/PerItem"), the
// same whichever test calls Run.
func suitePath(t *testing.T) string {
	t.Helper()
	name, path := t.Name(), ""
	targets.Range(func(k, _ any) bool {
		if p := k.(string); strings.HasPrefix(name, p+"/") {
			path = strings.TrimPrefix(name, p+"/")
			return false
		}
		return true
	})
	if path == "" {
		t.Fatalf("%s is not a test of storetest.Run", name)
	}
	return path
}

// item builds a document with id, pk and the given property pairs.
func item(pk, id string, kv ...any) []byte {
	m := map[string]any{"id": id, "pk": pk}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// decode parses a returned document.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("returned item is not a JSON object: %v: %s", err, b)
	}
	return m
}

// userFields drops the system properties so documents compare by content.
func userFields(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "_etag", "_ts", "_rid", "_self", "_attachments", "_lsn":
			continue
		}
		out[k] = v
	}
	return out
}

// wantCode fails unless err carries code ("" = no error) and, for an
// error, a message that says what is wrong.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := domain.ErrorCode(err); got != code {
		t.Fatalf("%s: error code %q (%v), want %q", what, got, err, code)
	}
	if err != nil && domain.ErrorMessage(err) == "" {
		t.Fatalf("%s: error %q has no message", what, code)
	}
}

// charged fails unless a successful call reported a positive charge, on
// a target that reports charges (Charges).
func charged(t *testing.T, what string, ru float64) {
	t.Helper()
	if ru <= 0 && !lacks(t, Charges) {
		t.Errorf("%s: RequestCharge = %v, want > 0", what, ru)
	}
}

var ctx = context.Background()

func mustCreate(t *testing.T, c store.Container, pk string, doc []byte) store.ItemResponse {
	t.Helper()
	r, err := c.Create(ctx, pk, doc)
	if err != nil {
		t.Fatalf("Create(%s): %v", pk, err)
	}
	charged(t, "Create", r.RequestCharge)
	return r
}

func mustRead(t *testing.T, c store.Container, pk, id string) map[string]any {
	t.Helper()
	r, err := c.Read(ctx, pk, id)
	if err != nil {
		t.Fatalf("Read(%s, %s): %v", pk, id, err)
	}
	charged(t, "Read", r.RequestCharge)
	return decode(t, r.Item)
}

// etagOf returns the _etag inside a returned document.
func etagOf(t *testing.T, doc []byte) string {
	t.Helper()
	s, _ := decode(t, doc)["_etag"].(string)
	return s
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}
