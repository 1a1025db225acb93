package embedded

import (
	"bytes"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

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

// orderIndexOf returns the index serving ORDER BY prop, or nil.
func (st *containerState) orderIndexOf(prop string) *orderIndex {
	for i := range st.orders {
		if st.orders[i].prop == prop {
			return &st.orders[i]
		}
	}
	return nil
}

// partitionTx is one physical partition's buckets in a transaction.
type partitionTx struct {
	items, feed *bolt.Bucket
	orders      []*bolt.Bucket // parallel to containerState.orders
}

func (st *containerState) partitionTx(tx *bolt.Tx, p int) partitionTx {
	pt := partitionTx{items: tx.Bucket(st.items[p]), feed: tx.Bucket(st.feed[p])}
	for _, oi := range st.orders {
		pt.orders = append(pt.orders, tx.Bucket(oi.buckets[p]))
	}
	return pt
}

// sortKeys returns doc's ORDER BY value for each order index (undefined
// where doc has no such property, or for a nil doc).
func (st *containerState) sortKeys(doc []byte) []sortKey {
	keys := make([]sortKey, len(st.orders))
	if doc == nil || len(st.orders) == 0 {
		return keys
	}
	topLevel(doc, func(key, raw []byte) bool {
		for i := range st.orders {
			if string(key) == st.orders[i].prop {
				keys[i] = newSortKey(raw)
			}
		}
		return true
	})
	return keys
}

// reindex moves item id of pk from its entries for oldDoc (nil: it was
// not stored) to its entries for newDoc (nil: it is being removed).
func (st *containerState) reindex(pt partitionTx, pk, id string, oldDoc, newDoc []byte) error {
	if len(st.orders) == 0 {
		return nil
	}
	var olds, news []sortKey
	if oldDoc != nil {
		olds = st.sortKeys(oldDoc)
	}
	if newDoc != nil {
		news = st.sortKeys(newDoc)
	}
	var kbuf, nbuf []byte
	for i, b := range pt.orders {
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

// syncOrderIndexes makes the file's order indexes those of st: it drops
// the buckets of the properties prev indexed and st does not, and builds
// every index of st whose bucket is missing from the items (a file
// written before order indexes existed, a composite index just added).
func syncOrderIndexes(tx *bolt.Tx, prev, st *containerState) error {
	if prev != nil {
		for _, oi := range prev.orders {
			if st.orderIndexOf(oi.prop) != nil {
				continue
			}
			for _, name := range oi.buckets {
				if err := tx.DeleteBucket(name); err != nil && tx.Bucket(name) != nil {
					return err
				}
			}
		}
	}
	for i, oi := range st.orders {
		for p, name := range oi.buckets {
			if tx.Bucket(name) != nil {
				continue
			}
			if err := buildOrderIndex(tx, st, i, p); err != nil {
				return fmt.Errorf("order index %s of %s: %w", oi.prop, st.name, err)
			}
		}
	}
	return nil
}

// buildOrderIndex fills order index i of partition p from its items.
func buildOrderIndex(tx *bolt.Tx, st *containerState, i, p int) error {
	b, err := tx.CreateBucket(st.orders[i].buckets[p])
	if err != nil {
		return err
	}
	// Keys are put in item order, not index order: a denser fill would
	// not be worth the sort for a one-time build.
	items := tx.Bucket(st.items[p])
	if items == nil {
		return nil
	}
	prop := st.orders[i].prop
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
