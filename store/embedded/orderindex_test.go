package embedded

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// orderedDef declares composite indexes on v, w and n (v and n ascending,
// w descending), on v under equality on kind, on w under equality on n
// and on w under equality on v (of every type, cut long strings too): the
// order indexes v, w, n, kind, kind/v, n/w and v/w. The nested path gives
// none.
func orderedDef(name string) store.ContainerDef {
	return store.ContainerDef{ID: name, PartitionKeyPath: "/pk", DefaultTTL: ttlOf(-1),
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}, CompositeIndexes: [][]store.CompositePath{
			{{Path: "/v", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
			{{Path: "/w", Order: "descending"}, {Path: "/id", Order: "descending"}},
			{{Path: "/n", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
			{{Path: "/n", Order: "descending"}, {Path: "/id", Order: "descending"}},
			{{Path: "/kind", Order: "ascending"}, {Path: "/v", Order: "ascending"}},
			{{Path: "/n", Order: "ascending"}, {Path: "/w", Order: "descending"}, {Path: "/id", Order: "descending"}},
			{{Path: "/v", Order: "ascending"}, {Path: "/w", Order: "ascending"}},
			{{Path: "/a/b", Order: "ascending"}, {Path: "/v", Order: "ascending"}},
		}}}
}

func TestOrderIndexesOfPolicy(t *testing.T) {
	composite := func(paths ...string) []store.CompositePath {
		var out []store.CompositePath
		for _, p := range paths {
			out = append(out, store.CompositePath{Path: p, Order: "ascending"})
		}
		return out
	}
	tests := []struct {
		name       string
		composites [][]store.CompositePath
		want       []string
	}{
		{"none", nil, nil},
		{"order and id", [][]store.CompositePath{composite("/name", "/id"), composite("/priceCents", "/id")}, []string{"name", "priceCents"}},
		{"both directions, one index", [][]store.CompositePath{composite("/createdAt", "/id"), composite("/createdAt")}, []string{"createdAt"}},
		{"equality then order", [][]store.CompositePath{composite("/type", "/createdAt"), composite("/createdAt", "/id")}, []string{"type", "type/createdAt", "createdAt"}},
		{"two equalities", [][]store.CompositePath{composite("/a", "/b", "/c", "/id")}, []string{"a", "a/b/c"}},
		{"nested path ignored", [][]store.CompositePath{composite("/a/b", "/c"), composite("/c", "/a/b")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, oi := range newOrderIndexes("c", store.IndexingPolicy{CompositeIndexes: tt.composites}, equalPartitions(1)) {
				got = append(got, oi.name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order indexes (-want +got):\n%s", diff)
			}
		})
	}
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
					vals := map[string]sortKey{}
					topLevel(doc, func(key, raw []byte) bool {
						if string(key) == oi.prop || slices.Contains(oi.eq, string(key)) {
							vals[string(key)] = newSortKey(raw)
						}
						return true
					})
					want = append(want, string(oi.indexKey(nil, pk, vals, id)))
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
	if got, want := len(buckets()), 7*4; got != want {
		t.Errorf("%d order index buckets, want %d (v, w, n, kind, kind/v, n/w, v/w in 4 partitions)", got, want)
	}
	checkOrderIndexes(t, s, "c")
	for _, order := range []string{"v", "w", "n"} {
		samePages(t, r, s, c, newClock(), store.Query{PartitionKey: "p0", OrderBy: order, Limit: 7})
	}

	def = orderedDef("c")
	def.IndexingPolicy.CompositeIndexes = def.IndexingPolicy.CompositeIndexes[2:4]
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatal(err)
	}
	if got, want := len(buckets()), 4; got != want {
		t.Errorf("%d order index buckets after keeping only n's, want %d (n in 4 partitions)", got, want)
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
	s.opts.scanQueries, s.opts.noQueryMemo = true, true
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

// TestEqualityIndexWalksOnlyTheFilteredValue: WHERE kind = "a" ORDER BY v
// walks the index kind/v, so the half of the partition of kind "b", sorted
// in between, is never loaded.
func TestEqualityIndexWalksOnlyTheFilteredValue(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	if _, err := s.EnsureContainer(bg, orderedDef("c")); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	for i := range 200 {
		if _, err := c.Create(bg, "p0", doc("p0", fmt.Sprintf("i%03d", i), "v", i, "kind", []string{"a", "b"}[i%2])); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		filter store.Filter
		docs   int
	}{
		{"pinned by the filter", store.Filter{Path: "kind", Op: store.OpEqual, Value: "a"}, 21},
		{"not a property the index pins", store.Filter{Path: "pk", Op: store.OpEqual, Value: "p0"}, 21},
		{"pinned value matches nothing", store.Filter{Path: "kind", Op: store.OpEqual, Value: "z"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := c.Query(bg, store.Query{PartitionKey: "p0", Filters: []store.Filter{tt.filter}, OrderBy: "v", Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.RequestCharge, queryCharge(1, tt.docs, kbOfItems(p.Items)); got != want {
				t.Errorf("page = %v RU, want %v (%d documents loaded)", got, want, tt.docs)
			}
		})
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
