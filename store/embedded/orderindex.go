package embedded

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"shop/domain"
	"shop/store"
)

// Order indexes serve ORDER BY the way Cosmos's composite indexes do
// (query-order-by-index): a page walks the index of its logical partition
// in order, from the continuation on, and loads only the documents it
// walks over, instead of loading and sorting the whole partition.
//
// A container has one order index per distinct top-level first path of
// its composite indexes: (name asc, id asc) and (name desc, id desc) are
// both served by the index on name, walked forward or backward, since
// ties are always broken by id. Each physical partition p holds the
// index on property prop in bucket "o\x00<container>\x00<p>\x00<prop>",
// of keys orderKey (orderkey.go) with empty values. Every write updates
// it in the transaction that writes the item, so it never disagrees with
// the items; expired items stay indexed until purged, as they stay
// stored, and the walk skips them.
type orderIndex struct {
	prop    string
	buckets [][]byte // per physical partition
}

func orderBucket(container string, p int, prop string) []byte {
	return fmt.Appendf(nil, "o\x00%s\x00%d\x00%s", container, p, prop)
}

// orderProps returns the properties a policy's composite indexes order
// by first: the top-level ones, each once.
func orderProps(p store.IndexingPolicy) []string {
	var props []string
	for _, ci := range p.CompositeIndexes {
		if len(ci) == 0 {
			continue
		}
		path := splitPath(ci[0].Path)
		if len(path) != 1 || checkProperty("order by", path[0]) != nil || slices.Contains(props, path[0]) {
			continue
		}
		props = append(props, path[0])
	}
	return props
}

func newOrderIndexes(container string, def store.IndexingPolicy, partitions int) []orderIndex {
	var out []orderIndex
	for _, prop := range orderProps(def) {
		oi := orderIndex{prop: prop}
		for p := range partitions {
			oi.buckets = append(oi.buckets, orderBucket(container, p, prop))
		}
		out = append(out, oi)
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

// orderIndexOf returns the index serving ORDER BY prop, or nil.
func orderIndexOf(indexes []orderIndex, prop string) *orderIndex {
	for i := range indexes {
		if indexes[i].prop == prop {
			return &indexes[i]
		}
	}
	return nil
}

// partitionTx is one physical partition's buckets in a write transaction.
type partitionTx struct {
	items, feed *bolt.Bucket
	indexes     []orderIndex
	orders      []*bolt.Bucket // parallel to indexes
}

func (st *containerState) partitionTx(tx *bolt.Tx, p int) partitionTx {
	pt := partitionTx{items: tx.Bucket(st.items[p]), feed: tx.Bucket(st.feed[p]), indexes: st.orders.load()}
	for _, oi := range pt.indexes {
		pt.orders = append(pt.orders, tx.Bucket(oi.buckets[p]))
	}
	return pt
}

// sortKeys returns doc's ORDER BY value for each index (undefined where
// doc has no such property).
func sortKeys(indexes []orderIndex, doc []byte) []sortKey {
	keys := make([]sortKey, len(indexes))
	topLevel(doc, func(key, raw []byte) bool {
		for i := range indexes {
			if string(key) == indexes[i].prop {
				keys[i] = newSortKey(raw)
			}
		}
		return true
	})
	return keys
}

// reindex moves item id of pk from its entries for oldDoc (nil: it was
// not stored) to its entries for newDoc (nil: it is being removed).
func (pt partitionTx) reindex(pk, id string, oldDoc, newDoc []byte) error {
	if len(pt.indexes) == 0 {
		return nil
	}
	var olds, news []sortKey
	if oldDoc != nil {
		olds = sortKeys(pt.indexes, oldDoc)
	}
	if newDoc != nil {
		news = sortKeys(pt.indexes, newDoc)
	}
	var kbuf, nbuf []byte
	for i, b := range pt.orders {
		if b == nil {
			return domain.Errorf(domain.EINTERNAL, "order index %s is missing", pt.indexes[i].prop)
		}
		kbuf, nbuf = kbuf[:0], nbuf[:0]
		if olds != nil {
			kbuf = orderKey(kbuf, pk, olds[i], []byte(id))
		}
		if news != nil {
			nbuf = orderKey(nbuf, pk, news[i], []byte(id))
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
		if orderIndexOf(next, oi.prop) != nil {
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
			if err := buildOrderIndex(tx, st.items[p], name, oi.prop); err != nil {
				return fmt.Errorf("order index %s of %s: %w", oi.prop, st.name, err)
			}
		}
	}
	return nil
}

// buildOrderIndex creates bucket name, the index on prop of the items of
// bucket itemsName.
func buildOrderIndex(tx *bolt.Tx, itemsName, name []byte, prop string) error {
	b, err := tx.CreateBucket(name)
	if err != nil {
		return err
	}
	items := tx.Bucket(itemsName)
	if items == nil {
		return nil
	}
	var kbuf []byte
	return items.ForEach(func(k, v []byte) error {
		_, doc, err := parseHeader(v)
		if err != nil {
			return err
		}
		var sk sortKey
		topLevel(doc, func(key, raw []byte) bool {
			if string(key) == prop {
				sk = newSortKey(raw)
			}
			return true
		})
		pk, id := splitItemKey(k)
		kbuf = orderKey(kbuf[:0], pk, sk, []byte(id))
		return b.Put(kbuf, nil)
	})
}
