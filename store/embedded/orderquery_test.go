package embedded

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/store"
)

// randomValue returns an ORDER BY value of a random type, with many ties,
// or nil for "missing".
func randomValue(r *rand.Rand) (any, bool) {
	long := strings.Repeat("z", maxIndexedBytes)
	switch r.IntN(12) {
	case 0:
		return nil, false
	case 1:
		return nil, true
	case 2:
		return r.IntN(2) == 0, true
	case 3, 4:
		return r.IntN(5) - 2, true
	case 5:
		return float64(r.IntN(7)) / 2, true
	case 6, 7:
		return string(rune('a' + r.IntN(4))), true
	case 8:
		return "a\x00" + string(rune('a'+r.IntN(2))), true
	case 9:
		return long + string(rune('a'+r.IntN(3))), true
	case 10:
		return []any{r.IntN(2)}, true
	}
	return map[string]any{"k": r.IntN(2)}, true
}

func randomDoc(r *rand.Rand, pk, id string) []byte {
	m := map[string]any{"id": id, "pk": pk, "kind": []string{"a", "b", "c"}[r.IntN(3)],
		"tags": []string{fmt.Sprintf("t%d", r.IntN(3))}}
	for _, prop := range []string{"v", "x"} {
		if v, ok := randomValue(r); ok {
			m[prop] = v
		}
	}
	if r.IntN(5) > 0 {
		m["w"] = time.Date(2026, 11, 1+r.IntN(5), 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	}
	if r.IntN(4) > 0 {
		m["n"] = r.IntN(4)
	}
	if r.IntN(8) == 0 {
		m["n"] = json.RawMessage("1.0") // stored as written: equals 1
	}
	if r.IntN(4) == 0 {
		m["ttl"] = 1 + r.IntN(20)
	}
	b, _ := json.Marshal(m)
	return b
}

// mutate applies one random write: creates, replaces, upserts, patches
// (setting or removing an ordered property), deletes, batches, time
// passing (expiring items) and purges. Refused writes are part of the mix.
func mutate(r *rand.Rand, s *Store, c store.Container, clk *clock) {
	pk := fmt.Sprintf("p%d", r.IntN(3))
	id := fmt.Sprintf("i%02d", r.IntN(40))
	switch r.IntN(10) {
	case 0, 1, 2:
		_, _ = c.Upsert(bg, pk, randomDoc(r, pk, id), nil)
	case 3:
		_, _ = c.Create(bg, pk, randomDoc(r, pk, id))
	case 4:
		_, _ = c.Replace(bg, pk, id, randomDoc(r, pk, id), nil)
	case 5:
		prop := []string{"v", "w", "n"}[r.IntN(3)]
		if v, ok := randomValue(r); ok {
			_, _ = c.Patch(bg, pk, id, []store.PatchOp{{Op: store.PatchSet, Path: "/" + prop, Value: v}}, nil)
		} else {
			_, _ = c.Patch(bg, pk, id, []store.PatchOp{{Op: store.PatchRemove, Path: "/" + prop}}, nil)
		}
	case 6:
		_, _ = c.Delete(bg, pk, id, nil)
	case 7:
		ops := []store.BatchOp{
			{Kind: store.BatchUpsert, Item: randomDoc(r, pk, id)},
			{Kind: store.BatchDelete, ID: fmt.Sprintf("i%02d", r.IntN(40))},
			{Kind: store.BatchCreate, Item: randomDoc(r, pk, fmt.Sprintf("i%02d", r.IntN(40)))},
		}
		_, _ = c.ExecuteBatch(bg, pk, ops)
	case 8:
		clk.Advance(time.Duration(r.IntN(4)) * time.Second)
	case 9:
		if r.IntN(4) == 0 {
			_, _ = s.PurgeExpired()
		}
	}
}

func randomQuery(r *rand.Rand) store.Query {
	q := store.Query{Limit: 1 + r.IntN(7), Desc: r.IntN(2) == 0}
	if r.IntN(6) > 0 {
		q.PartitionKey = fmt.Sprintf("p%d", r.IntN(3))
	}
	q.OrderBy = []string{"v", "w", "n", "x", ""}[r.IntN(5)]
	if q.PartitionKey == "" {
		q.OrderBy = "" // the port refuses a cross-partition ORDER BY
	}
	if r.IntN(2) == 0 {
		q.Filters = append(q.Filters, store.Filter{Path: "kind", Op: store.OpEqual, Value: []string{"a", "b"}[r.IntN(2)]})
	}
	if r.IntN(4) == 0 {
		if v, ok := randomValue(r); ok {
			q.Filters = append(q.Filters, store.Filter{Path: "v", Op: store.OpEqual, Value: v})
		}
	}
	if r.IntN(3) == 0 {
		// 1.0 equals 1: the index must find both spellings.
		q.Filters = append(q.Filters, store.Filter{Path: "n", Op: store.OpEqual, Value: []any{1, 1.0, 2, "2", nil}[r.IntN(5)]})
	}
	if r.IntN(3) == 0 {
		q.Filters = append(q.Filters, store.Filter{Path: "tags", Op: store.OpArrayContains, Value: fmt.Sprintf("t%d", r.IntN(3))})
	}
	if r.IntN(4) == 0 {
		q.Select = []string{"v", "n"}
	}
	return q
}

// samePages pages through q with the order indexes and with the scan and
// fails at the first page where items or continuation differ; between
// pages it sometimes writes, as pages of a real listing are read apart.
func samePages(t *testing.T, r *rand.Rand, s *Store, c store.Container, clk *clock, q store.Query) {
	t.Helper()
	for pages := 0; pages < 200; pages++ {
		// The memo's page, kept before a write or a tick of the clock,
		// must still be the answer after them.
		if _, err := c.Query(bg, q); err != nil {
			t.Fatal(err)
		}
		if r.IntN(2) == 0 {
			mutate(r, s, c, clk)
		}
		kept, err := c.Query(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		s.opts.noQueryMemo = true
		indexed, err1 := c.Query(bg, q)
		s.opts.scanQueries = true
		scanned, err2 := c.Query(bg, q)
		s.opts.scanQueries, s.opts.noQueryMemo = false, false
		if err1 != nil || err2 != nil {
			t.Fatalf("%+v: errors %v (index) and %v (scan)", q, err1, err2)
		}
		if diff := cmp.Diff(strs(indexed.Items), strs(kept.Items)); diff != "" || kept.Continuation != indexed.Continuation || kept.RequestCharge != indexed.RequestCharge {
			t.Fatalf("query %+v page %d: the memo's page is not the walked one (charge %.2f, walked %.2f; -walked +memo):\n%s", q, pages, kept.RequestCharge, indexed.RequestCharge, diff)
		}
		if diff := cmp.Diff(strs(scanned.Items), strs(indexed.Items)); diff != "" {
			t.Fatalf("query %+v page %d: items differ (-scan +index):\n%s", q, pages, diff)
		}
		if indexed.Continuation != scanned.Continuation {
			t.Fatalf("query %+v page %d: continuations differ", q, pages)
		}
		if indexed.Continuation == "" {
			return
		}
		q.Continuation = indexed.Continuation
		if r.IntN(3) == 0 {
			mutate(r, s, c, clk)
		}
	}
	t.Fatalf("query %+v did not end after 200 pages", q)
}

func strs(items [][]byte) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it)
	}
	return out
}

// TestOrderIndexAnswersAsTheScan runs random queries over random data
// (ties, missing properties, mixed types, cut long values, deletes, TTL
// expiry and purges) through the order indexes and through the scan: the
// pages must be identical, item for item and token for token.
func TestOrderIndexAnswersAsTheScan(t *testing.T) {
	clk := newClock()
	s := openTemp(t, Options{Now: clk.Now, PhysicalPartitions: 2, NoSync: true})
	if _, err := s.EnsureContainer(bg, orderedDef("c")); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 30 {
		for range 40 {
			mutate(r, s, c, clk)
		}
		for range 15 {
			samePages(t, r, s, c, clk, randomQuery(r))
		}
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}
	}
	checkOrderIndexes(t, s, "c")
}
