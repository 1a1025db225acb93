package embedded

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Order indexes serve ORDER BY the way Cosmos's composite indexes do
// (index-composite): a page walks the index of its logical partition
// in order, from the continuation on, and loads only the documents it
// walks over, instead of loading and sorting the whole partition.
//
// Each composite index of the container (its trailing /id dropped: ties
// are always broken by id) gives order indexes on top-level properties:
//
//   - one on its first property: (name asc, id asc) and (name desc, id
//     desc) are both served by the index on name, walked forward or
//     backward;
//   - for (p1, ..., pn, prop) one on prop under equality on p1..pn, the
//     way Cosmos serves WHERE p1 = x ORDER BY prop from it: its keys
//     start with the values of p1..pn, so the walk only visits the
//     entries of the filtered value.
//
// Physical partition p holds each index in bucket
// "o\x00<container>\x00<p>\x00<p1/.../prop>", of keys orderKey
// (orderkey.go) with empty values. Every write updates them in the
// transaction that writes the item, so they never disagree with the
// items; expired items stay indexed until purged, as they stay stored,
// and the walk skips them.
type orderIndex struct {
	name    string   // eq and prop joined by "/" ("type/createdAt")
	eq      []string // properties pinned by an equality filter, in key order
	prop    string   // the ORDER BY property
	buckets [][]byte // per physical partition
}

func orderBucket(container string, p int, name string) []byte {
	return fmt.Appendf(nil, "o\x00%s\x00%d\x00%s", container, p, name)
}

// newOrderIndexes returns the order indexes a policy's composite indexes
// call for, each once. A composite index with a nested path gives none.
func newOrderIndexes(container string, def store.IndexingPolicy, parts []partition) []orderIndex {
	var out []orderIndex
	add := func(eq []string, prop string) {
		oi := orderIndex{name: strings.Join(append(slices.Clone(eq), prop), "/"), eq: eq, prop: prop}
		if slices.ContainsFunc(out, func(o orderIndex) bool { return o.name == oi.name }) {
			return
		}
		for _, p := range parts {
			oi.buckets = append(oi.buckets, orderBucket(container, p.Bucket, oi.name))
		}
		out = append(out, oi)
	}
	for _, ci := range def.CompositeIndexes {
		var props []string
		for _, cp := range ci {
			path := splitPath(cp.Path)
			if len(path) != 1 || checkProperty("order by", path[0]) != nil {
				props = nil
				break
			}
			props = append(props, path[0])
		}
		if n := len(props); n > 1 && props[n-1] == "id" {
			props = props[:n-1]
		}
		if len(props) == 0 {
			continue
		}
		add(nil, props[0])
		if n := len(props); n > 1 {
			add(props[:n-1], props[n-1])
		}
	}
	return out
}

// orderSet holds a container's current order indexes. Every cached
// definition of the container shares it, and EnsureContainer swaps it
// inside the transaction that builds or drops the buckets: a write that
// resolved the container before the change but commits after it still
// maintains exactly the indexes on disk, since bbolt runs one write
// transaction at a time.
type orderSet struct {
	cur atomic.Pointer[[]orderIndex]
}

func newOrderSet(indexes []orderIndex) *orderSet {
	s := &orderSet{}
	s.cur.Store(&indexes)
	return s
}

func (s *orderSet) load() []orderIndex { return *s.cur.Load() }

func (s *orderSet) store(indexes []orderIndex) { s.cur.Store(&indexes) }

// orderIndexNamed returns the index of that name, or nil.
func orderIndexNamed(indexes []orderIndex, name string) *orderIndex {
	for i := range indexes {
		if indexes[i].name == name {
			return &indexes[i]
		}
	}
	return nil
}

// partitionTx is one physical partition's buckets in a write transaction.
type partitionTx struct {
	tx          *bolt.Tx
	items, feed *bolt.Bucket
	indexes     []orderIndex
	orders      []*bolt.Bucket // parallel to indexes
}

func (st *containerState) partitionTx(tx *bolt.Tx, p int) partitionTx {
	pt := partitionTx{tx: tx, items: tx.Bucket(st.items[p]), feed: tx.Bucket(st.feed[p]), indexes: st.orders.load()}
	for _, oi := range pt.indexes {
		pt.orders = append(pt.orders, tx.Bucket(oi.buckets[p]))
	}
	return pt
}

// indexValues returns doc's values of the properties the indexes key on
// (a property doc lacks is absent: undefined).
func indexValues(indexes []orderIndex, doc []byte) map[string]sortKey {
	vals := map[string]sortKey{}
	topLevel(doc, func(key, raw []byte) bool {
		for i := range indexes {
			if string(key) == indexes[i].prop || slices.Contains(indexes[i].eq, string(key)) {
				vals[string(key)] = newSortKey(raw)
				break
			}
		}
		return true
	})
	return vals
}

// indexKey is the entry of item id of partition pk in index oi.
func (oi *orderIndex) indexKey(buf []byte, pk string, vals map[string]sortKey, id string) []byte {
	buf = partitionPrefix(buf, pk)
	for _, e := range oi.eq {
		buf = appendSortKey(buf, vals[e])
	}
	buf = appendSortKey(buf, vals[oi.prop])
	return append(buf, id...)
}

// reindex moves item id of pk from its entries for oldDoc (nil: it was
// not stored) to its entries for newDoc (nil: it is being removed).
func (pt partitionTx) reindex(pk, id string, oldDoc, newDoc []byte) error {
	if len(pt.indexes) == 0 {
		return nil
	}
	var olds, news map[string]sortKey
	if oldDoc != nil {
		olds = indexValues(pt.indexes, oldDoc)
	}
	if newDoc != nil {
		news = indexValues(pt.indexes, newDoc)
	}
	var kbuf, nbuf []byte
	for i, b := range pt.orders {
		oi := &pt.indexes[i]
		if b == nil {
			return domain.Errorf(domain.EINTERNAL, "order index %s is missing", oi.name)
		}
		kbuf, nbuf = kbuf[:0], nbuf[:0]
		if olds != nil {
			kbuf = oi.indexKey(kbuf, pk, olds, id)
		}
		if news != nil {
			nbuf = oi.indexKey(nbuf, pk, news, id)
		}
		if olds != nil && news != nil && bytes.Equal(kbuf, nbuf) {
			continue
		}
		if olds != nil {
			if err := b.Delete(kbuf); err != nil {
				return err
			}
		}
		if news != nil {
			if err := b.Put(nbuf, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncOrderIndexes makes the file's order indexes of st's container next:
// it drops the buckets of the indexes in prev and not in next, and builds
// every index of next whose bucket is missing from the items (a file
// written before order indexes existed, a composite index just added).
func syncOrderIndexes(tx *bolt.Tx, st *containerState, prev, next []orderIndex) error {
	for _, oi := range prev {
		if orderIndexNamed(next, oi.name) != nil {
			continue
		}
		for _, name := range oi.buckets {
			if tx.Bucket(name) == nil {
				continue
			}
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
	}
	for _, oi := range next {
		for p, name := range oi.buckets {
			if tx.Bucket(name) != nil {
				continue
			}
			if err := buildOrderIndex(tx, st.items[p], name, &oi); err != nil {
				return fmt.Errorf("order index %s of %s: %w", oi.name, st.name, err)
			}
		}
	}
	return nil
}

// buildOrderIndex creates bucket name, index oi of the items of bucket
// itemsName.
func buildOrderIndex(tx *bolt.Tx, itemsName, name []byte, oi *orderIndex) error {
	b, err := tx.CreateBucket(name)
	if err != nil {
		return err
	}
	items := tx.Bucket(itemsName)
	if items == nil {
		return nil
	}
	indexes := []orderIndex{*oi}
	var kbuf []byte
	return items.ForEach(func(k, v []byte) error {
		_, doc, err := parseHeader(v)
		if err != nil {
			return err
		}
		pk, id := splitItemKey(k)
		kbuf = oi.indexKey(kbuf[:0], pk, indexValues(indexes, doc), id)
		return b.Put(kbuf, nil)
	})
}
