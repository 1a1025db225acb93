package embedded

import (
	"bytes"
	"encoding/json"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
)

// Unique keys (Cosmos unique key policy): each set of paths must hold a
// distinct combination of values within one logical partition; a missing
// property counts as null. Checked by scanning the partition, which is
// small in this store's uses.

// uniqueValues returns, per unique key set, the doc's values as JSON.
func (st *containerState) uniqueValues(m map[string]any) []string {
	if len(st.uniq) == 0 {
		return nil
	}
	out := make([]string, len(st.uniq))
	for i, set := range st.uniq {
		vals := make([]any, len(set))
		for j, path := range set {
			vals[j], _ = lookup(m, path)
		}
		b, _ := json.Marshal(vals)
		out[i] = string(b)
	}
	return out
}

// checkUnique refuses w if another live item of its logical partition has
// the same values for one of the unique key sets.
func (c *Container) checkUnique(items *bolt.Bucket, st *containerState, pk string, w pending) error {
	if len(st.uniq) == 0 {
		return nil
	}
	now := c.s.opts.Now()
	prefix := partitionPrefix(nil, pk)
	cur := items.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		if bytes.Equal(k, w.key) {
			continue
		}
		h, doc, err := parseHeader(v)
		if err != nil {
			return err
		}
		if expired(&st.def, h, now) {
			continue
		}
		m, err := decodeDoc(doc)
		if err != nil {
			return err
		}
		for i, got := range st.uniqueValues(m) {
			if got == w.uniq[i] {
				_, id := splitItemKey(k)
				return domain.Errorf(domain.ECONFLICT, "unique key (%s) value %s is already used by item %s in partition %s",
					strings.Join(st.def.UniqueKeys[i], ", "), got, id, pk)
			}
		}
	}
	return nil
}
