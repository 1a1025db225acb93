package embedded

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"shop/domain"
	"shop/store"
)

// compiledQuery is a validated query with its filter values decoded once.
type compiledQuery struct {
	store.Query
	values []any // filter values as JSON decoding yields them
	shape  string
}

// row is one matching item: its sort key and enough to resume after it.
type row struct {
	sort sortKey
	raw  json.RawMessage // sort value as stored; nil when undefined
	id   string
	pk   string
	doc  []byte
	m    map[string]json.RawMessage
}

// Query runs a structured query. With a partition key it scans that one
// logical partition, a contiguous key range of one physical partition
// (query-single-partition). Without one it fans out to every physical
// partition, is charged for each, and says so (query-avoid-cross-partition).
// Pages are keyset pages: the continuation is the last row's (sort value,
// id, partition key), so pages never overlap or skip even while items are
// written between them.
func (c *Container) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	if err := ctx.Err(); err != nil {
		return store.QueryPage{}, canceled(err)
	}
	st, err := c.s.state(c.name)
	if err != nil {
		return store.QueryPage{}, err
	}
	cq, err := compile(c.name, q)
	if err != nil {
		return store.QueryPage{}, err
	}
	var after *row
	if q.Continuation != "" {
		if after, err = c.resume(cq); err != nil {
			return store.QueryPage{}, err
		}
	}
	parts := []int{}
	if q.PartitionKey != "" {
		parts = append(parts, partitionOf(q.PartitionKey, len(st.items)))
	} else {
		for p := range st.items {
			parts = append(parts, p)
		}
	}
	now := c.s.opts.Now()
	var rows []row
	err = c.s.db.View(func(tx *bolt.Tx) error {
		for _, p := range parts {
			if err := scan(tx.Bucket(st.items[p]), q.PartitionKey, func(k, v []byte) error {
				h, doc, err := parseHeader(v)
				if err != nil || expired(&st.def, h, now) {
					return err
				}
				r, ok := cq.match(k, doc)
				if ok && (after == nil || cq.less(after, &r)) {
					r.doc = bytes.Clone(doc)
					rows = append(rows, r)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.QueryPage{}, storeError(err)
	}
	slices.SortFunc(rows, func(a, b row) int { return cq.compare(&a, &b) })
	page := store.QueryPage{CrossPartition: q.PartitionKey == "", PartitionsTouched: len(parts)}
	n := min(len(rows), cq.Limit)
	size := 0
	for i := range n {
		item := rows[i].doc
		if len(q.Select) > 0 {
			item = project(rows[i].m, q.Select)
		}
		size += len(item)
		page.Items = append(page.Items, item)
	}
	if len(rows) > n {
		last := rows[n-1]
		t := token{Kind: tokenQuery, Container: c.name, Shape: cq.shape, Sort: last.raw, ID: last.id, PK: last.pk}
		if page.Continuation, err = encodeToken(c.s.secret, t); err != nil {
			return store.QueryPage{}, err
		}
	}
	page.RequestCharge = queryCharge(len(parts), n, size)
	return page, nil
}

// scan calls fn for every item of the bucket, or of one logical partition
// when pk is set (a prefix scan).
func scan(b *bolt.Bucket, pk string, fn func(k, v []byte) error) error {
	if pk == "" {
		return b.ForEach(fn)
	}
	prefix := partitionPrefix(nil, pk)
	cur := b.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// compile validates q and computes its shape: everything but the page size
// and the continuation, so a token only resumes the query that made it.
func compile(container string, q store.Query) (*compiledQuery, error) {
	if q.PartitionKey != "" {
		if err := validatePK(q.PartitionKey); err != nil {
			return nil, err
		}
	}
	switch {
	case q.Limit == 0:
		q.Limit = store.DefaultPageSize
	case q.Limit < 0 || q.Limit > store.MaxQueryPageSize:
		return nil, domain.Errorf(domain.EINVALID, "query limit %d is not within 1..%d", q.Limit, store.MaxQueryPageSize)
	}
	cq := &compiledQuery{Query: q}
	for _, f := range q.Filters {
		if err := checkProperty("filter", f.Path); err != nil {
			return nil, err
		}
		if f.Op != store.OpEqual && f.Op != store.OpArrayContains {
			return nil, domain.Errorf(domain.EINVALID, "filter on %s: unknown operator %q", f.Path, f.Op)
		}
		raw, err := json.Marshal(f.Value)
		if err != nil {
			return nil, domain.Errorf(domain.EINVALID, "filter on %s: value: %v", f.Path, err)
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		cq.values = append(cq.values, v)
	}
	if q.OrderBy != "" {
		if err := checkProperty("order by", q.OrderBy); err != nil {
			return nil, err
		}
	}
	for _, s := range q.Select {
		if err := checkProperty("select", s); err != nil {
			return nil, err
		}
	}
	shape, _ := json.Marshal(struct {
		C, PK, Order string
		Desc         bool
		F            []store.Filter
		S            []string
	}{container, q.PartitionKey, q.OrderBy, q.Desc, q.Filters, q.Select})
	sum := sha256.Sum256(shape)
	cq.shape = hex.EncodeToString(sum[:8])
	return cq, nil
}

func checkProperty(what, name string) error {
	if name == "" || strings.ContainsAny(name, "/.[]") {
		return domain.Errorf(domain.EINVALID, "%s property %q must be a top-level property name", what, name)
	}
	return nil
}

// resume decodes the continuation into the row the next page starts after.
func (c *Container) resume(cq *compiledQuery) (*row, error) {
	t, err := decodeToken(c.s.secret, cq.Continuation, tokenQuery, c.name)
	if err != nil {
		return nil, err
	}
	if t.Shape != cq.shape {
		return nil, invalidToken("it belongs to another query")
	}
	return &row{sort: newSortKey(t.Sort), raw: t.Sort, id: t.ID, pk: t.PK}, nil
}

// match decodes the top level of doc and applies the filters.
func (cq *compiledQuery) match(k, doc []byte) (row, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil {
		return row{}, false
	}
	for i, f := range cq.Filters {
		raw, ok := m[f.Path]
		if !ok || !matches(raw, f.Op, cq.values[i]) {
			return row{}, false
		}
	}
	r := row{m: m}
	r.pk, r.id = splitItemKey(k)
	if cq.OrderBy != "" {
		if raw, ok := m[cq.OrderBy]; ok {
			r.raw = raw
			r.sort = newSortKey(raw)
		}
	}
	return r, true
}

// matches applies one filter; an undefined property never matches, as in
// Cosmos SQL (undefined = x is undefined, not true).
func matches(raw json.RawMessage, op string, want any) bool {
	var got any
	if json.Unmarshal(raw, &got) != nil {
		return false
	}
	if op == store.OpEqual {
		return equalJSON(got, want)
	}
	arr, ok := got.([]any)
	if !ok {
		return false
	}
	return slices.ContainsFunc(arr, func(e any) bool { return equalJSON(e, want) })
}

// compare orders rows by sort value, then id, then partition key (ids are
// unique only within a partition), all ascending or all descending.
func (cq *compiledQuery) compare(a, b *row) int {
	c := compareSortKeys(a.sort, b.sort)
	if c == 0 {
		c = strings.Compare(a.id, b.id)
	}
	if c == 0 {
		c = strings.Compare(a.pk, b.pk)
	}
	if cq.Desc {
		return -c
	}
	return c
}

// less reports whether a comes before b in the query's order.
func (cq *compiledQuery) less(a, b *row) bool { return cq.compare(a, b) < 0 }

// project keeps the selected top-level properties, id always first.
func project(m map[string]json.RawMessage, fields []string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(name string) {
		raw, ok := m[name]
		if !ok {
			return
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	write("id")
	for i, f := range fields {
		if f != "id" && !slices.Contains(fields[:i], f) {
			write(f)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
