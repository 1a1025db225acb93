package embedded

import (
	"bytes"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// orderIndexFor returns the order index bucket that serves cq and the
// prefix of the entries to walk, or nil when the query takes the scan. A
// single-partition query walks an index on its ORDER BY property whose
// equality properties its filters all pin (the one pinning the most, as
// it walks the fewest entries); a cross-partition query scans, since an
// index orders each logical partition on its own. So does a query that
// sees an index declared but not yet built in its snapshot
// (EnsureContainer adding it meanwhile).
func (c *Container) orderIndexFor(tx *bolt.Tx, st *containerState, cq *compiledQuery) (*bolt.Bucket, []byte) {
	if c.s.opts.scanQueries || cq.PartitionKey == "" || cq.OrderBy == "" {
		return nil, nil
	}
	var best *orderIndex
	var prefix []byte
	for _, oi := range st.orders.load() {
		if oi.prop != cq.OrderBy || (best != nil && len(best.eq) >= len(oi.eq)) {
			continue
		}
		if p, ok := cq.pinned(oi.eq); ok {
			best, prefix = &oi, p
		}
	}
	if best == nil {
		return nil, nil
	}
	b := tx.Bucket(best.buckets[st.partitionFor(cq.PartitionKey)])
	if b == nil {
		return nil, nil
	}
	return b, append(partitionPrefix(nil, cq.PartitionKey), prefix...)
}

// pinned returns the encoded values an equality filter of cq gives each
// of props, or false if one has none. Only scalar values pin: for them
// filter equality (by value: 3 equals 3.0) is equality of encodings;
// arrays and objects compare by their JSON text in the index.
func (cq *compiledQuery) pinned(props []string) ([]byte, bool) {
	var out []byte
	for _, prop := range props {
		i := slices.IndexFunc(cq.filters, func(f filter) bool {
			if f.path != prop || f.op != store.OpEqual {
				return false
			}
			switch newSortKey(f.raw).rank {
			case rankNull, rankBool, rankNumber, rankString:
				return true
			}
			return false
		})
		if i < 0 {
			return nil, false
		}
		out = appendSortKey(out, newSortKey(cq.filters[i].raw))
	}
	return out, true
}

// walkOrder returns the rows of cq's page in query order by walking the
// entries of an order index under prefix (the query's logical partition
// and pinned values) from the continuation (after) on, forward for
// ascending and backward for descending, and how many documents it
// loaded. It stops once it holds Limit+1 rows (one more than the page, to
// know whether another page follows), so a page loads about Limit
// documents however large the partition is. Expired items and those the
// filters reject are skipped (and were loaded). A prefix pins a value cut
// to its first bytes (orderkey.go) only loosely: the filters, applied to
// every item loaded, reject the other values sharing those bytes.
func (c *Container) walkOrder(tx *bolt.Tx, st *containerState, cq *compiledQuery, index *bolt.Bucket, prefix []byte, after *row, now time.Time) ([]row, int, error) {
	p := st.partitionFor(cq.PartitionKey)
	items := tx.Bucket(st.items[p]).Cursor()
	cur := index.Cursor()
	itemPrefix := partitionPrefix(nil, cq.PartitionKey)
	next := cur.Next
	if cq.Desc {
		next = cur.Prev
	}
	var rows []row
	loaded := 0
	ikey := slices.Clone(itemPrefix)
	// load reads the item an entry names and keeps it if it is live,
	// matches, and comes after the continuation.
	load := func(id []byte) (row, bool, error) {
		ikey = append(ikey[:len(itemPrefix)], id...)
		k, v := items.Seek(ikey)
		if !bytes.Equal(k, ikey) {
			return row{}, false, domain.Errorf(domain.EINTERNAL, "order index on %s names item %s, which is not stored", cq.OrderBy, id)
		}
		loaded++
		h, doc, err := parseHeader(v)
		if err != nil || expired(&st.def, h, now) {
			return row{}, false, err
		}
		r, ok := cq.match(k, doc)
		r.expires = expiresAt(&st.def, h)
		return r, ok && (after == nil || cq.less(after, &r)), nil
	}
	k := seekOrder(cur, prefix, cq.Desc, after)
	for k != nil && bytes.HasPrefix(k, prefix) && len(rows) <= cq.Limit {
		n := sortKeyLen(k[len(prefix):])
		if n < 0 {
			return nil, loaded, domain.Errorf(domain.EINTERNAL, "order index on %s has a malformed entry", cq.OrderBy)
		}
		value := k[:len(prefix)+n]
		if !truncated(value) {
			r, ok, err := load(k[len(value):])
			if err != nil {
				return nil, loaded, err
			}
			if ok {
				rows = append(rows, r)
			}
			k, _ = next()
			continue
		}
		// Values cut to the same bytes tie in the index (in id order):
		// load the whole run and sort it by the real values.
		var run []row
		for ; k != nil && bytes.HasPrefix(k, value); k, _ = next() {
			r, ok, err := load(k[len(value):])
			if err != nil {
				return nil, loaded, err
			}
			if ok {
				run = append(run, r)
			}
		}
		slices.SortFunc(run, func(a, b row) int { return cq.compare(&a, &b) })
		rows = append(rows, run...)
	}
	return rows, loaded, nil
}

// seekOrder positions cur on the first entry of the walk: the first of
// the partition, or the first after the continuation's own entry. A
// continuation whose value was cut resumes at its run's edge, since a run
// is sorted only once loaded (the caller skips what it already returned).
func seekOrder(cur *bolt.Cursor, prefix []byte, desc bool, after *row) []byte {
	from := slices.Clone(prefix)
	switch {
	case after == nil && !desc:
	case after == nil:
		from = append(from, 0xFF) // above every rank byte: the partition's end
	default:
		from = appendSortKey(from, after.sort)
		switch {
		case !truncated(from):
			from = append(from, after.id...)
		case desc:
			from[len(from)-1] = escAfter // the end of the run
		}
	}
	k, _ := cur.Seek(from)
	switch {
	case !desc && after != nil && bytes.Equal(k, from):
		k, _ = cur.Next() // the continuation's own entry: returned already
	case !desc:
	case k == nil:
		k, _ = cur.Last()
	default:
		k, _ = cur.Prev() // the last entry before from
	}
	return k
}
