package storetest

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// seeded is one document of the query fixture.
type seeded struct {
	ID, PK, Kind, CreatedAt string
	N                       int
	Tags                    []string
}

func seedQuery(t *testing.T, c store.Container) []seeded {
	t.Helper()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var docs []seeded
	for i := range 30 {
		d := seeded{
			ID:        fmt.Sprintf("i%02d", i),
			PK:        fmt.Sprintf("p%d", i%3),
			Kind:      []string{"a", "b"}[i%2],
			CreatedAt: start.Add(time.Duration((i*11)%30) * time.Hour).Format(time.RFC3339),
			N:         (i * 7) % 30, // not the id order, and 10 > 9 numerically
			Tags:      []string{fmt.Sprintf("t%d", i%5), "all"},
		}
		mustCreate(t, c, d.PK, item(d.PK, d.ID, "kind", d.Kind, "createdAt", d.CreatedAt, "n", d.N, "tags", d.Tags))
		docs = append(docs, d)
	}
	return docs
}

// queryAll pages through q and returns every item, checking each page.
func queryAll(t *testing.T, c store.Container, q store.Query) []map[string]any {
	t.Helper()
	var out []map[string]any
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("query did not end after 100 pages")
		}
		p, err := c.Query(ctx, q)
		if err != nil {
			t.Fatalf("Query page %d: %v", pages, err)
		}
		charged(t, "Query", p.RequestCharge)
		limit := q.Limit
		if limit == 0 {
			limit = store.DefaultPageSize
		}
		if len(p.Items) > limit {
			t.Fatalf("page of %d items, limit %d", len(p.Items), limit)
		}
		if got, want := p.CrossPartition, q.PartitionKey == ""; got != want {
			t.Errorf("CrossPartition = %v, want %v", got, want)
		}
		for _, it := range p.Items {
			out = append(out, decode(t, it))
		}
		if p.Continuation == "" {
			return out
		}
		q.Continuation = p.Continuation
	}
}

func ids(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

// want returns the ids of docs that keep says, in the order less gives.
func want(docs []seeded, keep func(seeded) bool, less func(a, b seeded) bool) []string {
	var sel []seeded
	for _, d := range docs {
		if keep(d) {
			sel = append(sel, d)
		}
	}
	if less != nil {
		sort.Slice(sel, func(i, j int) bool { return less(sel[i], sel[j]) })
	}
	var out []string
	for _, d := range sel {
		out = append(out, d.ID)
	}
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// queryOrders are the orders testQuery runs: each needs its composite
// index (property, id) in the same direction on Cosmos (index-composite).
var queryOrders = []suite.Order{{Path: "n"}, {Path: "n", Desc: true}, {Path: "createdAt", Desc: true}, {Path: "kind"}}

func testQuery(t *testing.T, s store.Store) {
	c := newOrderedContainer(t, s, queryOrders)
	docs := seedQuery(t, c)
	all := func(seeded) bool { return true }

	unordered := []struct {
		name string
		q    store.Query
		keep func(seeded) bool
	}{
		{"EqualitySinglePartition", store.Query{PartitionKey: "p0", Filters: []store.Filter{{Path: "kind", Op: store.OpEqual, Value: "a"}}},
			func(d seeded) bool { return d.PK == "p0" && d.Kind == "a" }},
		{"EqualityOnNumber", store.Query{Filters: []store.Filter{{Path: "n", Op: store.OpEqual, Value: 7}}},
			func(d seeded) bool { return d.N == 7 }},
		{"ArrayContains", store.Query{Filters: []store.Filter{{Path: "tags", Op: store.OpArrayContains, Value: "t1"}}},
			func(d seeded) bool { return d.Tags[0] == "t1" }},
		{"FiltersAreAnded", store.Query{Filters: []store.Filter{
			{Path: "tags", Op: store.OpArrayContains, Value: "all"}, {Path: "kind", Op: store.OpEqual, Value: "b"}}},
			func(d seeded) bool { return d.Kind == "b" }},
		{"MissingPropertyNeverMatches", store.Query{Filters: []store.Filter{{Path: "absent", Op: store.OpEqual, Value: nil}}},
			func(seeded) bool { return false }},
		{"WholePartition", store.Query{PartitionKey: "p1", Limit: 4}, func(d seeded) bool { return d.PK == "p1" }},
		{"CrossPartitionPaged", store.Query{Limit: 7}, all},
		{"CrossPartitionFilterPaged", store.Query{Filters: []store.Filter{{Path: "kind", Op: store.OpEqual, Value: "a"}}, Limit: 4},
			func(d seeded) bool { return d.Kind == "a" }},
	}
	for _, tt := range unordered {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(queryAll(t, c, tt.q))
			if diff := cmp.Diff(want(docs, tt.keep, nil), sorted(got)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	// ORDER BY is single-partition only (the port's rule): each partition
	// holds 10 items whose n is not in id order.
	inP0 := func(d seeded) bool { return d.PK == "p0" }
	ordered := []struct {
		name string
		q    store.Query
		keep func(seeded) bool
		less func(a, b seeded) bool
	}{
		{"OrderByNumberAscending", store.Query{PartitionKey: "p0", OrderBy: "n", Limit: 100}, inP0,
			func(a, b seeded) bool { return a.N < b.N }},
		{"OrderByNumberDescendingPaged", store.Query{PartitionKey: "p0", OrderBy: "n", Desc: true, Limit: 3}, inP0,
			func(a, b seeded) bool { return a.N > b.N }},
		{"OrderByTimeDescendingInPartition", store.Query{PartitionKey: "p2", OrderBy: "createdAt", Desc: true, Limit: 3},
			func(d seeded) bool { return d.PK == "p2" }, func(a, b seeded) bool { return a.CreatedAt > b.CreatedAt }},
		{"OrderByWithFilterPaged", store.Query{PartitionKey: "p0", Filters: []store.Filter{{Path: "kind", Op: store.OpEqual, Value: "a"}}, OrderBy: "n", Limit: 2},
			func(d seeded) bool { return d.PK == "p0" && d.Kind == "a" }, func(a, b seeded) bool { return a.N < b.N }},
	}
	for _, tt := range ordered {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(queryAll(t, c, tt.q))
			if diff := cmp.Diff(want(docs, tt.keep, tt.less), got); diff != "" {
				t.Errorf("ids in order (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("PagesWithTiesCoverEverythingOnce", func(t *testing.T) {
		items := queryAll(t, c, store.Query{PartitionKey: "p1", OrderBy: "kind", Limit: 4})
		if diff := cmp.Diff(want(docs, func(d seeded) bool { return d.PK == "p1" }, nil), sorted(ids(items))); diff != "" {
			t.Errorf("ids over all pages (-want +got):\n%s", diff)
		}
		for i := 1; i < len(items); i++ {
			if items[i-1]["kind"].(string) > items[i]["kind"].(string) {
				t.Fatalf("item %d has kind %v after %v", i, items[i]["kind"], items[i-1]["kind"])
			}
		}
	})

	t.Run("LimitAndDefaultPageSize", func(t *testing.T) {
		// One logical partition fills its pages: 10 items, 5 a page.
		p, err := c.Query(ctx, store.Query{PartitionKey: "p1", Limit: 5})
		wantCode(t, "single-partition Query", err, "")
		if got := len(p.Items); got != 5 || p.Continuation == "" {
			t.Errorf("single-partition, Limit 5: %d items, continuation %q; want 5 and a continuation", got, p.Continuation)
		}
		// A cross-partition page holds at most its limit, maybe fewer
		// (on Cosmos each physical partition answers in turn), and only
		// an empty continuation ends the query: 30 items are not done
		// after one page of at most 20.
		for _, tt := range []struct{ limit, most int }{{5, 5}, {0, store.DefaultPageSize}} {
			p, err := c.Query(ctx, store.Query{Limit: tt.limit})
			wantCode(t, "cross-partition Query", err, "")
			if got := len(p.Items); got > tt.most || p.Continuation == "" {
				t.Errorf("cross-partition, Limit %d: %d items, continuation %q; want at most %d and a continuation", tt.limit, got, p.Continuation, tt.most)
			}
		}
	})

	t.Run("Projection", func(t *testing.T) {
		items := queryAll(t, c, store.Query{PartitionKey: "p0", Select: []string{"n", "kind"}})
		if len(items) == 0 {
			t.Fatal("no items")
		}
		for _, it := range items {
			var keys []string
			for k := range it {
				keys = append(keys, k)
			}
			if diff := cmp.Diff([]string{"id", "kind", "n"}, sorted(keys)); diff != "" {
				t.Errorf("projected properties (-want +got):\n%s", diff)
			}
		}
	})

	t.Run("PartitionsReported", func(t *testing.T) {
		single, err := c.Query(ctx, store.Query{PartitionKey: "p0"})
		wantCode(t, "single-partition query", err, "")
		if single.CrossPartition || single.PartitionsTouched != 1 {
			t.Errorf("single-partition query: CrossPartition %v, PartitionsTouched %d; want false, 1", single.CrossPartition, single.PartitionsTouched)
		}
		cross, err := c.Query(ctx, store.Query{})
		wantCode(t, "cross-partition query", err, "")
		if !cross.CrossPartition || cross.PartitionsTouched < 1 {
			t.Errorf("cross-partition query: CrossPartition %v, PartitionsTouched %d; want true, >= 1", cross.CrossPartition, cross.PartitionsTouched)
		}
	})

	t.Run("CrossPartitionOrderByRefused", func(t *testing.T) {
		// The Go SDK has no query plan, so the gateway refuses it; the
		// client pages the unordered query and sorts the items itself.
		for _, q := range []store.Query{{OrderBy: "n"}, {OrderBy: "createdAt", Desc: true, Limit: 5}} {
			_, err := c.Query(ctx, q)
			wantCode(t, fmt.Sprintf("cross-partition ORDER BY %s (desc %v)", q.OrderBy, q.Desc), err, domain.EINVALID)
		}
	})

	t.Run("BadContinuation", func(t *testing.T) {
		q := store.Query{PartitionKey: "p0", OrderBy: "n", Limit: 3}
		p, err := c.Query(ctx, q)
		wantCode(t, "Query", err, "")
		tok := p.Continuation
		if tok == "" {
			t.Fatal("first page of 3 out of 10 has no continuation")
		}
		flipped := []byte(tok)
		flipped[len(flipped)/2] ^= 1
		other := store.Query{PartitionKey: "p0", OrderBy: "createdAt", Limit: 3, Continuation: tok}
		for name, q := range map[string]store.Query{
			"garbage":            {PartitionKey: "p0", OrderBy: "n", Limit: 3, Continuation: "not a token"},
			"altered":            {PartitionKey: "p0", OrderBy: "n", Limit: 3, Continuation: string(flipped)},
			"from another query": other,
		} {
			_, err := c.Query(ctx, q)
			wantCode(t, name, err, domain.EINVALID)
		}
	})
}

// testOrderByKeepsMissing: an ORDER BY returns every item its filters
// match, those without the sorted property too (Microsoft's ORDER BY
// reference, Remarks: "Queries with ORDER BY return all items, including
// items where the property in the ORDER BY clause isn't defined", when
// the path is in the index, as the default policy's /* puts every path).
// Undefined sorts before every value, null included (undefined < null <
// booleans < numbers < strings < arrays < objects), so such items come
// first ascending and last descending, ties broken by id as the
// composite index (x, id) that serves the ORDER BY sorts them. Pages of
// two cross from the undefined items to the defined ones, so the
// continuation carries an undefined value.
func testOrderByKeepsMissing(t *testing.T, s store.Store) {
	c := newOrderedContainer(t, s, []suite.Order{{Path: "n"}, {Path: "n", Desc: true}})
	mustCreate(t, c, "p", item("p", "a", "n", 2, "g", 1))
	mustCreate(t, c, "p", item("p", "b", "n", 1))
	mustCreate(t, c, "p", item("p", "c", "g", 1))
	mustCreate(t, c, "p", item("p", "d", "n", 3))
	mustCreate(t, c, "p", item("p", "e", "g", 1))
	mustCreate(t, c, "p", item("p", "f", "n", nil))
	for _, tt := range []struct {
		name string
		q    store.Query
		want []string
	}{
		{"Ascending", store.Query{PartitionKey: "p", OrderBy: "n", Limit: 2}, []string{"c", "e", "f", "b", "a", "d"}},
		{"Descending", store.Query{PartitionKey: "p", OrderBy: "n", Desc: true, Limit: 2}, []string{"d", "a", "b", "f", "e", "c"}},
		{"Filtered", store.Query{PartitionKey: "p", OrderBy: "n", Limit: 1,
			Filters: []store.Filter{{Path: "g", Op: store.OpEqual, Value: 1}}}, []string{"c", "e", "a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(queryAll(t, c, tt.q))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}
