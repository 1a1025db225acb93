package embedded

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"shop/store"
)

func TestChargeFormulas(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"read 1 KB", readCharge(1024), 1},
		{"read 10 bytes rounds up to 1 KB", readCharge(10), 1},
		{"read 2 KB", readCharge(2048), 1.09},
		{"read 100 KB", readCharge(100 * 1024), 9.91},
		{"write 1 KB, nothing indexed", writeCharge(1024, 0), 5},
		{"write 1 KB, 10 indexed properties", writeCharge(1024, 10), 6},
		{"write 100 KB, 10 indexed properties", writeCharge(100*1024, 10), 50.55},
		{"delete 1 KB", deleteCharge(1024), 5},
		{"delete 3 KB", deleteCharge(3 * 1024), 5.9},
		{"query, one partition, nothing found", queryCharge(1, 0, 0), 2.3},
		{"query, one partition, 20 docs of 2 KB", queryCharge(1, 20, 40*1024), 5.3},
		{"query, four partitions, 20 docs of 2 KB", queryCharge(4, 20, 40*1024), 12.2},
		{"change feed, empty page", feedCharge(nil), 1},
		{"change feed, three 1 KB items", feedCharge([]int{1024, 1024, 1024}), 3},
		{"change feed, one 2 KB item", feedCharge([]int{2048}), 1.09},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("charge = %v RU, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestIndexPolicyCountsIndexedProperties(t *testing.T) {
	doc := map[string]any{
		"id": "p1", "name": "x", "description": "long",
		"topReviews": []any{map[string]any{"title": "a", "body": "b"}},
		"productIds": []any{"a", "b"},
		"_etag":      "e", "_ts": 1,
	}
	tests := []struct {
		name   string
		policy store.IndexingPolicy
		want   int
	}{
		{"default indexes every scalar", store.IndexingPolicy{}, 7},
		{"all included", store.IndexingPolicy{IncludedPaths: []string{"/*"}}, 7},
		{"excluded scalar and subtree", store.IndexingPolicy{IncludedPaths: []string{"/*"}, ExcludedPaths: []string{"/description/?", "/topReviews/*"}}, 4},
		{"only some included", store.IndexingPolicy{IncludedPaths: []string{"/productIds/[]/?", "/id/?"}, ExcludedPaths: []string{"/*"}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newIndexPolicy(tt.policy).countIndexed(doc); got != tt.want {
				t.Errorf("indexed properties = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestExcludedPathsLowerWriteCharge: the same document costs less to write
// where the indexing policy excludes its large unqueried fields.
func TestExcludedPathsLowerWriteCharge(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "shop.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	tags := make([]string, 30)
	for i := range tags {
		tags[i] = strings.Repeat("t", i+1)
	}
	doc, _ := json.Marshal(map[string]any{"id": "a", "pk": "a", "tags": tags, "name": "n"})
	charge := func(excluded []string) float64 {
		def := store.ContainerDef{ID: "c" + string(rune('a'+len(excluded))), PartitionKeyPath: "/pk",
			IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}, ExcludedPaths: excluded}}
		if _, err := s.EnsureContainer(ctx, def); err != nil {
			t.Fatal(err)
		}
		r, err := s.Container(def.ID).Create(ctx, "a", doc)
		if err != nil {
			t.Fatal(err)
		}
		return r.RequestCharge
	}
	all, lean := charge(nil), charge([]string{"/tags/*"})
	if got, want := all-lean, 3.0; got < want-0.001 || got > want+0.001 {
		t.Errorf("write charge %v RU with tags indexed, %v without: saving %v, want %v (30 properties)", all, lean, got, want)
	}
}

// A conditional patch is charged as a patch: the write estimate of the
// item it leaves when the condition holds, the failed-request 1 RU when it
// does not (Cosmos charges a 412 too), and a batch the sum of its parts.
func TestConditionalPatchCharge(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	c := ensure(t, s, "stock", nil)
	if _, err := c.Create(bg, "p", doc("p", "s", "available", 1)); err != nil {
		t.Fatal(err)
	}
	ops := []store.PatchOp{{Op: store.PatchIncrement, Path: "/available", Value: -1}}
	cond := store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: 1}}
	r, err := c.Patch(bg, "p", "s", ops, &store.PatchOptions{Condition: cond})
	if err != nil {
		t.Fatal(err)
	}
	// Under 1 KB, three indexed scalars (id, pk, available).
	if want := writeCharge(len(r.Item), 3); r.RequestCharge != want {
		t.Errorf("conditional patch charged %v RU, want %v", r.RequestCharge, want)
	}
	r, err = c.Patch(bg, "p", "s", ops, &store.PatchOptions{Condition: cond})
	if err == nil || r.RequestCharge != failedRU {
		t.Errorf("patch whose condition fails: charge %v RU, err %v; want %v RU and an error", r.RequestCharge, err, failedRU)
	}
	b, err := c.ExecuteBatch(bg, "p", []store.BatchOp{
		{Kind: store.BatchCreate, Item: doc("p", "r1")},
		{Kind: store.BatchPatch, ID: "s", Patch: ops, Condition: cond},
	})
	// The create (two indexed scalars) it rolled back, and the 412.
	if want := round2(writeCharge(1, 2) + failedRU); err == nil || b.RequestCharge != want {
		t.Errorf("failed batch charged %v RU (err %v), want %v", b.RequestCharge, err, want)
	}
}
