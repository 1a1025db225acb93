package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"shop/domain"
	"shop/store"
)

// orderedDef declares composite indexes on v, w and n (v and n ascending,
// w descending): every ORDER BY on them is served by an order index.
func orderedDef(name string) store.ContainerDef {
	return store.ContainerDef{ID: name, PartitionKeyPath: "/pk", DefaultTTL: ttlOf(-1),
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}, CompositeIndexes: [][]store.CompositePath{
			{{Path: "/v", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
			{{Path: "/w", Order: "descending"}, {Path: "/id", Order: "descending"}},
			{{Path: "/n", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
			{{Path: "/n", Order: "descending"}, {Path: "/id", Order: "descending"}},
		}}}
}

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
	if r.IntN(2) == 0 {
		q.Filters = append(q.Filters, store.Filter{Path: "kind", Op: store.OpEqual, Value: []string{"a", "b"}[r.IntN(2)]})
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
		s.opts.scanQueries = false
		indexed, err1 := c.Query(bg, q)
		s.opts.scanQueries = true
		scanned, err2 := c.Query(bg, q)
		s.opts.scanQueries = false
		if err1 != nil || err2 != nil {
			t.Fatalf("%+v: errors %v (index) and %v (scan)", q, err1, err2)
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

// checkOrderIndexes compares every order index of the container with the
// entries its stored items call for.
func checkOrderIndexes(t *testing.T, s *Store, name string) {
	t.Helper()
	st, err := s.state(name)
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		for _, oi := range st.orders.load() {
			for p, bucket := range oi.buckets {
				var want, got []string
				err := tx.Bucket(st.items[p]).ForEach(func(k, v []byte) error {
					_, doc, err := parseHeader(v)
					pk, id := splitItemKey(k)
					var sk sortKey
					topLevel(doc, func(key, raw []byte) bool {
						if string(key) == oi.prop {
							sk = newSortKey(raw)
						}
						return true
					})
					want = append(want, string(orderKey(nil, pk, sk, []byte(id))))
					return err
				})
				if err != nil {
					return err
				}
				b := tx.Bucket(bucket)
				if b == nil {
					return fmt.Errorf("order index %s of partition %d is missing", oi.prop, p)
				}
				_ = b.ForEach(func(k, _ []byte) error { got = append(got, string(k)); return nil })
				slices.Sort(want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("order index %s of partition %d (-want +got):\n%s", oi.prop, p, diff)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOrderIndexBuiltForAnOldFile: a file without order index buckets (as
// written before they existed) gets them on open, built from its items.
func TestOrderIndexBuiltForAnOldFile(t *testing.T) {
	path := t.TempDir() + "/shop.db"
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureContainer(bg, orderedDef("c")); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		pk := fmt.Sprintf("p%d", i%3)
		if _, err := s.Container("c").Upsert(bg, pk, randomDoc(r, pk, fmt.Sprintf("i%02d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := s.state("c")
	err = s.db.Update(func(tx *bolt.Tx) error {
		for _, oi := range st.orders.load() {
			for _, b := range oi.buckets {
				if err := tx.DeleteBucket(b); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openAt(t, path, Options{NoSync: true})
	checkOrderIndexes(t, s, "c")
	c := s.Container("c")
	for range 20 {
		q := randomQuery(r)
		q.PartitionKey = fmt.Sprintf("p%d", r.IntN(3))
		samePages(t, r, s, c, newClock(), q)
	}
}

// TestEnsureContainerRebuildsOrderIndexes: adding a composite index builds
// its order index from the items already stored; removing it drops it.
func TestEnsureContainerRebuildsOrderIndexes(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	def := orderedDef("c")
	def.IndexingPolicy.CompositeIndexes = nil
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 50 {
		if _, err := c.Upsert(bg, "p0", randomDoc(r, "p0", fmt.Sprintf("i%02d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	buckets := func() []string {
		var names []string
		_ = s.db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
				if bytes.HasPrefix(name, []byte("o\x00c\x00")) {
					names = append(names, string(name))
				}
				return nil
			})
		})
		return names
	}
	if got := buckets(); len(got) != 0 {
		t.Fatalf("order index buckets %q without composite indexes, want none", got)
	}

	if _, err := s.EnsureContainer(bg, orderedDef("c")); err != nil {
		t.Fatal(err)
	}
	if got, want := len(buckets()), 3*4; got != want {
		t.Errorf("%d order index buckets, want %d (v, w, n in 4 partitions)", got, want)
	}
	checkOrderIndexes(t, s, "c")
	for _, order := range []string{"v", "w", "n"} {
		samePages(t, r, s, c, newClock(), store.Query{PartitionKey: "p0", OrderBy: order, Limit: 7})
	}

	def = orderedDef("c")
	def.IndexingPolicy.CompositeIndexes = def.IndexingPolicy.CompositeIndexes[2:]
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatal(err)
	}
	if got, want := len(buckets()), 4; got != want {
		t.Errorf("%d order index buckets after dropping v and w, want %d (n in 4 partitions)", got, want)
	}
	checkOrderIndexes(t, s, "c")
}

// TestIndexedPageCostsLessThanAScan: with the order index, a page of 20
// from a partition of 200 is charged for the 21 documents it loads (the
// page and the one telling a next page exists), not for all 200.
func TestIndexedPageCostsLessThanAScan(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	if _, err := s.EnsureContainer(bg, orderedDef("c")); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	for i := range 200 {
		if _, err := c.Create(bg, "p0", doc("p0", fmt.Sprintf("i%03d", i), "v", (i*37)%200)); err != nil {
			t.Fatal(err)
		}
	}
	q := store.Query{PartitionKey: "p0", OrderBy: "v", Limit: 20}
	indexed, err := c.Query(bg, q)
	if err != nil {
		t.Fatal(err)
	}
	s.opts.scanQueries = true
	scanned, err := c.Query(bg, q)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := indexed.RequestCharge, queryCharge(1, 21, kbOfItems(indexed.Items)); got != want {
		t.Errorf("indexed page = %v RU, want %v (21 documents loaded)", got, want)
	}
	if got, want := scanned.RequestCharge, queryCharge(1, 200, kbOfItems(scanned.Items)); got != want {
		t.Errorf("scanned page = %v RU, want %v (200 documents loaded)", got, want)
	}
}

func kbOfItems(items [][]byte) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	return n
}

// TestOrderIndexesFollowPolicyChangesUnderWrites: composite indexes come
// and go while writes and queries run; every write lands in exactly the
// indexes on disk when it commits, so the indexes end up matching the
// items, and no query fails meanwhile.
func TestOrderIndexesFollowPolicyChangesUnderWrites(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	with, without := orderedDef("c"), orderedDef("c")
	without.IndexingPolicy.CompositeIndexes = nil
	if _, err := s.EnsureContainer(bg, with); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	done := make(chan error, 3)
	for w := range 2 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range 300 {
				pk, id := fmt.Sprintf("p%d", r.IntN(3)), fmt.Sprintf("i%02d", r.IntN(40))
				var err error
				if r.IntN(4) == 0 {
					_, err = c.Delete(bg, pk, id, nil)
				} else {
					_, err = c.Upsert(bg, pk, randomDoc(r, pk, id), nil)
				}
				if err != nil && domain.ErrorCode(err) != domain.ENOTFOUND {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	go func() {
		r := rand.New(rand.NewPCG(2, 9))
		for range 300 {
			q := randomQuery(r)
			q.PartitionKey = fmt.Sprintf("p%d", r.IntN(3))
			if _, err := c.Query(bg, q); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range 20 {
		def := without
		if i%2 == 1 {
			def = with
		}
		if _, err := s.EnsureContainer(bg, def); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	checkOrderIndexes(t, s, "c")
	r := rand.New(rand.NewPCG(4, 9))
	for range 10 {
		q := randomQuery(r)
		q.PartitionKey = fmt.Sprintf("p%d", r.IntN(3))
		samePages(t, r, s, c, newClock(), q)
	}
}
