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
// The suite creates its own containers with unique names, so it can run
// against a shared Cosmos account. What only the embedded store can show
// (TTL purge timing, the number of simulated partitions, durability across
// kill -9, the Request Unit formula) is tested in store/embedded.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"testing"

	"shop/domain"
	"shop/store"
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
const pkPath = "/pk"

func ttl(seconds int) *int { return &seconds }

// newContainer creates a container with a unique name and the /pk key.
func newContainer(t *testing.T, s store.Store, defaultTTL *int) store.Container {
	t.Helper()
	return ensure(t, s, store.ContainerDef{
		ID:               uniqueName(),
		PartitionKeyPath: pkPath,
		DefaultTTL:       defaultTTL,
		IndexingPolicy:   store.IndexingPolicy{IncludedPaths: []string{"/*"}},
	})
}

// order is one ORDER BY a test runs: a property and a direction.
type order struct {
	Path string
	Desc bool
}

// newOrderedContainer is newContainer with the composite index every
// given order needs. Adapters break ties by id, so ORDER BY x renders as
// ORDER BY c.x, c.id in one direction: a real account refuses it without
// a composite index (x, id) in that direction (index-composite).
func newOrderedContainer(t *testing.T, s store.Store, orders []order) store.Container {
	t.Helper()
	policy := store.IndexingPolicy{IncludedPaths: []string{"/*"}}
	for _, o := range orders {
		dir := "ascending"
		if o.Desc {
			dir = "descending"
		}
		policy.CompositeIndexes = append(policy.CompositeIndexes,
			[]store.CompositePath{{Path: "/" + o.Path, Order: dir}, {Path: "/id", Order: dir}})
	}
	return ensure(t, s, store.ContainerDef{ID: uniqueName(), PartitionKeyPath: pkPath, IndexingPolicy: policy})
}

func ensure(t *testing.T, s store.Store, def store.ContainerDef) store.Container {
	t.Helper()
	if _, err := s.EnsureContainer(context.Background(), def); err != nil {
		t.Fatalf("EnsureContainer(%s): %v", def.ID, err)
	}
	return s.Container(def.ID)
}

func uniqueName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "storetest-" + hex.EncodeToString(b)
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
