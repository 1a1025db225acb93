package embedded

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/store"
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
		{"write 1 KB, 10 index terms", writeCharge(1024, 10), 9.5},
		{"write 100 KB, 10 index terms", writeCharge(100*1024, 10), 54.05},
		{"delete 1 KB", deleteCharge(1024), 5},
		{"delete 3 KB", deleteCharge(3 * 1024), 5.9},
		{"query, one partition, nothing found", queryCharge(1, 0, 0), 2.3},
		{"query, one partition, 20 docs of 2 KB", queryCharge(1, 20, 40*1024), 5.6},
		{"query, four partitions, 20 docs of 2 KB", queryCharge(4, 20, 40*1024), 12.5},
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

func TestIndexPolicyCountsTerms(t *testing.T) {
	doc := []byte(`{"id":"p1","name":"x","description":"long",
		"topReviews":[{"title":"a","body":"b"}],"productIds":["a","b"],"gone":null,
		"_etag":"e","_ts":1}`)
	tests := []struct {
		name   string
		policy store.IndexingPolicy
		want   int
	}{
		{"default indexes every scalar", store.IndexingPolicy{}, 8},
		{"all included", store.IndexingPolicy{IncludedPaths: []string{"/*"}}, 8},
		{"excluded scalar and subtree", store.IndexingPolicy{IncludedPaths: []string{"/*"}, ExcludedPaths: []string{"/description/?", "/topReviews/*"}}, 5},
		{"only some included", store.IndexingPolicy{IncludedPaths: []string{"/productIds/[]/?", "/id/?"}, ExcludedPaths: []string{"/*"}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			terms, err := newIndexPolicy(tt.policy).terms(doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := terms.count(); got != tt.want {
				t.Errorf("index terms = %d (%v), want %d", got, terms, tt.want)
			}
		})
	}
}

// TestChangedTerms: an overwrite pays for the terms the new version drops
// and those it adds. A term is a value at its path: an array element at its
// position, a number apart from the string of the same digits.
func TestChangedTerms(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     int
	}{
		{"same document", `{"id":"a","n":1}`, `{"id":"a","n":1}`, 0},
		{"new _etag and _ts only", `{"id":"a","_etag":"1","_ts":1}`, `{"id":"a","_etag":"2","_ts":2}`, 0},
		{"one value changed", `{"id":"a","n":1}`, `{"id":"a","n":2}`, 2},
		{"a property added", `{"id":"a"}`, `{"id":"a","n":1}`, 1},
		{"a property removed", `{"id":"a","n":1,"m":2}`, `{"id":"a","n":1}`, 1},
		{"number to string", `{"id":"a","n":1}`, `{"id":"a","n":"1"}`, 2},
		{"element appended", `{"id":"a","t":["x"]}`, `{"id":"a","t":["x","y"]}`, 1},
		{"element inserted first moves the others", `{"id":"a","t":["x","y"]}`, `{"id":"a","t":["w","x","y"]}`, 5},
		{"nested value changed", `{"id":"a","o":{"p":{"q":true}}}`, `{"id":"a","o":{"p":{"q":false}}}`, 2},
		{"a name with a slash is one step", `{"id":"a","o/p":1}`, `{"id":"a","o":{"p":1}}`, 2},
		{"an escaped name is its text", `{"id":"a","\u006e":1}`, `{"id":"a","n":1}`, 0},
	}
	ip := newIndexPolicy(store.IndexingPolicy{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, err := ip.terms([]byte(tt.old))
			if err != nil {
				t.Fatal(err)
			}
			new, err := ip.terms([]byte(tt.new))
			if err != nil {
				t.Fatal(err)
			}
			if got := changedTerms(old, new); got != tt.want {
				t.Errorf("changed terms = %d, want %d (old %v, new %v)", got, tt.want, old, new)
			}
		})
	}
}

// TestOverwriteChargesChangedTerms: a replace, an upsert of an existing
// item, a patch and a batch replace pay the write base and the index terms
// that changed, not every term of the item as a create does; a term under
// an excluded path costs nothing either way.
func TestOverwriteChargesChangedTerms(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	def := store.ContainerDef{ID: "c", PartitionKeyPath: "/pk",
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}, ExcludedPaths: []string{"/notes/?"}}}
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	tags := []any{"a", "b", "c", "d", "e", "f", "g", "h"}
	created, err := c.Create(bg, "p", doc("p", "x", "tags", tags, "n", 1, "notes", "v1"))
	if err != nil {
		t.Fatal(err)
	}
	// id, pk, n and the 8 tags; notes is excluded.
	if want := writeCharge(len(created.Item), 11); created.RequestCharge != want {
		t.Errorf("create charged %v RU, want %v (11 terms)", created.RequestCharge, want)
	}
	steps := []struct {
		name  string
		write func() (store.ItemResponse, error)
		terms int
	}{
		{"replace changing n", func() (store.ItemResponse, error) {
			return c.Replace(bg, "p", "x", doc("p", "x", "tags", tags, "n", 2, "notes", "v1"), nil)
		}, 2},
		{"upsert changing only the excluded notes", func() (store.ItemResponse, error) {
			return c.Upsert(bg, "p", doc("p", "x", "tags", tags, "n", 2, "notes", "v2"), nil)
		}, 0},
		{"patch incrementing n", func() (store.ItemResponse, error) {
			return c.Patch(bg, "p", "x", []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: 1}}, nil)
		}, 2},
		{"patch appending a tag", func() (store.ItemResponse, error) {
			return c.Patch(bg, "p", "x", []store.PatchOp{{Op: store.PatchAdd, Path: "/tags/-", Value: "i"}}, nil)
		}, 1},
		{"batch replace dropping n", func() (store.ItemResponse, error) {
			b, err := c.ExecuteBatch(bg, "p", []store.BatchOp{{Kind: store.BatchReplace, ID: "x",
				Item: doc("p", "x", "tags", append(tags, "i"), "notes", "v2")}})
			if err != nil {
				return store.ItemResponse{}, err
			}
			return store.ItemResponse{Item: b.Results[0].Item, RequestCharge: b.RequestCharge}, nil
		}, 1},
	}
	for _, step := range steps {
		r, err := step.write()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if want := writeCharge(len(r.Item), step.terms); r.RequestCharge != want {
			t.Errorf("%s: charged %v RU, want %v (%d changed terms)", step.name, r.RequestCharge, want, step.terms)
		}
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
	if got, want := all-lean, 30*indexTermRU; got < want-0.001 || got > want+0.001 {
		t.Errorf("write charge %v RU with tags indexed, %v without: saving %v, want %v (30 terms)", all, lean, got, want)
	}
}

// A conditional patch is charged as a patch: the overwrite estimate of the
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
	// Under 1 KB, available 1 became 0: one term removed, one added.
	if want := writeCharge(len(r.Item), 2); r.RequestCharge != want {
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
	// The create (two terms: id, pk) it rolled back, and the 412.
	if want := round2(writeCharge(1, 2) + failedRU); err == nil || b.RequestCharge != want {
		t.Errorf("failed batch charged %v RU (err %v), want %v", b.RequestCharge, err, want)
	}
}
