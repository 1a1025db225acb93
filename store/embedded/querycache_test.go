package embedded

import (
	"testing"

	"github.com/reference-shop/shop/store"
)

// TestCompiledQueriesAreKeptPerText: a query compiled before comes back
// with this run's continuation and scratch space of its own; queries
// that differ in any part (a filter value's type among them) are
// different queries; a refused query is refused again.
func TestCompiledQueriesAreKeptPerText(t *testing.T) {
	q := store.Query{PartitionKey: "books", Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: "productSummary"}}, OrderBy: "name", Limit: 20}
	a, err := compile("productsByCategory", q)
	if err != nil {
		t.Fatal(err)
	}
	q.Continuation = "next"
	b, err := compile("productsByCategory", q)
	if err != nil {
		t.Fatal(err)
	}
	if a.key == b.key || b.Continuation != "next" || a.Continuation != "" {
		t.Errorf("keys %q and %q, continuations %q and %q: the continuation is each run's own", a.key, b.key, a.Continuation, b.Continuation)
	}
	if a.found[0] = []byte("x"); b.found[0] != nil {
		t.Error("two runs share the filters' scratch space")
	}
	if a.shape() != b.shape() {
		t.Error("one query, two shapes: a continuation would not resume it")
	}

	texts := map[string]store.Query{}
	for _, q := range []store.Query{
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: "1"}}},
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: 1}}},
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: int64(2)}}},
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: true}}},
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: "true"}}},
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: "a"}, {Path: "w", Op: store.OpEqual, Value: "b"}}},
		{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: "a:1:w"}}},
		{PartitionKey: "a", OrderBy: "b"},
		{PartitionKey: "ab"},
		{PartitionKey: "ab", Desc: true},
		{Select: []string{"a", "b"}},
		{Select: []string{"ab"}},
	} {
		text, ok := appendQueryText(nil, "c", q)
		if !ok {
			t.Fatalf("%+v not spelled", q)
		}
		if prev, dup := texts[string(text)]; dup {
			t.Errorf("%+v and %+v have one text %q", prev, q, text)
		}
		texts[string(text)] = q
	}
	if _, ok := appendQueryText(nil, "c", store.Query{Filters: []store.Filter{{Path: "v", Op: store.OpEqual, Value: 1.5}}}); ok {
		t.Error("a float is spelled: 1 and 1.0 would need to be one value")
	}

	bad := store.Query{Limit: store.MaxQueryPageSize + 1}
	for range 2 {
		if _, err := compile("c", bad); err == nil {
			t.Fatal("a query over the page size compiled")
		}
	}
}
