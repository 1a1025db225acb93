package embedded

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// compiledQuery is a validated query, its filters compiled once.
type compiledQuery struct {
	store.Query
	filters []filter
	// shapeText is the query but its page size and continuation, as
	// JSON: shape hashes it for the continuation tokens.
	shapeText []byte
	// key is the query's whole text (shape's, unhashed, with the page
	// size and the continuation): its page's name in the memo.
	key   string
	found [][]byte // per filter, the value of the document being matched
}

// row is one matching item: its sort key and enough to resume after it.
// doc aliases the bbolt page until the page is copied out.
type row struct {
	sort sortKey
	raw  []byte // sort value as stored; nil when undefined
	id   []byte
	pk   []byte
	doc  []byte
	// expires is when the item expires (UnixNano; expiresAt).
	expires int64
}

// Query runs a structured query. With a partition key it reads that one
// logical partition, a contiguous key range of one physical partition
// (partition-query-patterns): by walking an order index when one serves its
// ORDER BY (querywalk.go), by a scan and a sort otherwise. Without one it
// fans out to every physical partition, is charged for each, and says so
// (query-avoid-cross-partition).
// Pages are keyset pages: the continuation is the last row's (sort value,
// id, partition key), so pages never overlap or skip even while items are
// written between them.
func (c *Container) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	if err := ctx.Err(); err != nil {
		return store.QueryPage{}, canceled(err)
	}
	st, err := c.s.acquire(c.name)
	if err != nil {
		return store.QueryPage{}, err
	}
	defer st.release()
	run, err := compile(c.name, q)
	if err != nil {
		return store.QueryPage{}, err
	}
	cq := &run // on the stack: nothing keeps it past the query
	var after *row
	if q.Continuation != "" {
		if after, err = c.resume(cq); err != nil {
			return store.QueryPage{}, err
		}
	}
	parts := []int{}
	if q.PartitionKey != "" {
		parts = append(parts, st.partitionFor(q.PartitionKey))
	} else {
		for p := range st.items {
			parts = append(parts, p)
		}
	}
	if err := c.s.admit(st, parts...); err != nil {
		return store.QueryPage{}, err
	}
	now := c.s.opts.Now()
	page := store.QueryPage{CrossPartition: q.PartitionKey == "", PartitionsTouched: len(parts)}
	size, n, loaded := 0, 0, 0
	key := cq.memoKey()
	err = c.s.db.View(func(tx *bolt.Tx) error {
		if !c.s.opts.noQueryMemo {
			if kept, ok := st.memo.get(key, tx.ID(), now); ok {
				page = kept
				return nil
			}
		}
		var rows []row
		var err error
		if index, prefix := c.orderIndexFor(tx, st, cq); index != nil {
			rows, loaded, err = c.walkOrder(tx, st, cq, index, prefix, after, now)
		} else {
			rows, loaded, err = c.scanRows(tx, st, cq, parts, after, now)
		}
		if err != nil {
			return err
		}
		// Copy the page out of the transaction: the rows alias its pages.
		n = min(len(rows), cq.Limit)
		for i := range n {
			var item []byte
			if len(q.Select) > 0 {
				item = project(rows[i].doc, q.Select)
			} else {
				item = bytes.Clone(rows[i].doc)
			}
			size += len(item)
			page.Items = append(page.Items, item)
		}
		if len(rows) > n {
			last := rows[n-1]
			t := token{Kind: tokenQuery, Container: c.name, Shape: cq.shape(), Sort: bytes.Clone(last.raw), ID: string(last.id), PK: string(last.pk)}
			tok, err := encodeToken(c.s.secret, t)
			if err != nil {
				return err
			}
			page.Continuation = tok
		}
		page.RequestCharge = queryCharge(len(parts), loaded, size)
		// The page stands until a write, or until the first of the rows
		// that made it (the one past the page included) expires.
		until := int64(math.MaxInt64)
		for _, r := range rows[:min(len(rows), n+1)] {
			until = min(until, r.expires)
		}
		st.memo.put(key, tx.ID(), until, page)
		return nil
	})
	if err != nil {
		return store.QueryPage{}, storeError(err)
	}
	c.s.charge(st, page.RequestCharge, parts...)
	return page, nil
}

// scanRows returns every row of the partitions after the continuation,
// sorted: the plan when no order index serves the query. The documents it
// counts as loaded are those Cosmos would load: the ones the filters
// match (its range index serves = and ARRAY_CONTAINS), all of them when
// the query has an ORDER BY no index serves (each must be read to be
// sorted), the page otherwise (the matches stream in index order and the
// page stops the stream).
func (c *Container) scanRows(tx *bolt.Tx, st *containerState, cq *compiledQuery, parts []int, after *row, now time.Time) ([]row, int, error) {
	var rows []row
	for _, p := range parts {
		if err := scan(tx.Bucket(st.items[p]), cq.PartitionKey, func(k, v []byte) error {
			h, doc, err := parseHeader(v)
			if err != nil || expired(&st.def, h, now) {
				return err
			}
			if r, ok := cq.match(k, doc); ok && (after == nil || cq.less(after, &r)) {
				r.expires = expiresAt(&st.def, h)
				rows = append(rows, r)
			}
			return nil
		}); err != nil {
			return nil, 0, err
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cq.compare(&a, &b) })
	if cq.OrderBy == "" {
		return rows, min(len(rows), cq.Limit), nil
	}
	return rows, len(rows), nil
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

// shape names the query's shape in a continuation token, so a token
// resumes only the query that made it: computed when a token is made or
// read, not for every query.
func (cq *compiledQuery) shape() string {
	sum := sha256.Sum256(cq.shapeText)
	return hex.EncodeToString(sum[:8])
}

// memoKey names the query's page in the container's memo.
func (cq *compiledQuery) memoKey() string { return cq.key }

// compile validates q and computes its shape: everything but the page size
// and the continuation, so a token only resumes the query that made it.
// A query the store compiled before is taken from compiledQueries: a
// screen runs the same few queries over and over, and compiling one (its
// filter values encoded, its shape marshalled) cost the category page a
// tenth of its CPU.
func compile(container string, q store.Query) (compiledQuery, error) {
	var scratch [256]byte
	text, ok := appendQueryText(scratch[:0], container, q)
	if !ok {
		cq, err := compileQuery(container, q)
		if err != nil {
			return compiledQuery{}, err
		}
		return *cq, nil
	}
	cq, err := compiledQueries.get(text, func() (*compiledQuery, error) {
		base := q
		base.Continuation = ""
		return compileQuery(container, base)
	})
	if err != nil {
		return compiledQuery{}, err
	}
	// The kept query is shared: this run gets its own continuation and
	// its own scratch space for the filters.
	run := *cq
	run.Query.Continuation = q.Continuation
	run.key = cq.key + q.Continuation
	run.found = make([][]byte, len(cq.filters))
	return run, nil
}

// compiledQueries keeps the queries compile compiled, by their text
// (appendQueryText).
var compiledQueries = queryCache{max: 4096}

// queryCache is a bounded map of compiled queries: past max it starts
// over, which a shop's few query shapes never reach, and which keeps a
// client that sends ever new filter values from growing it without
// bound.
type queryCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*compiledQuery
}

// get returns the query of text, compiling it with build the first time.
// text is only read (the lookup converts it without a copy).
func (c *queryCache) get(text []byte, build func() (*compiledQuery, error)) (*compiledQuery, error) {
	c.mu.Lock()
	cq, ok := c.m[string(text)]
	c.mu.Unlock()
	if ok {
		return cq, nil
	}
	cq, err := build()
	if err != nil {
		return nil, err // a query refused is not kept: it is refused again
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = map[string]*compiledQuery{}
	}
	c.m[string(text)] = cq
	return cq, nil
}

// appendQueryText appends q but its continuation to b as one unambiguous
// text (each part length-prefixed), or reports false when a filter value
// is of a type it does not spell (the query is then compiled every time).
func appendQueryText(b []byte, container string, q store.Query) ([]byte, bool) {
	part := func(b []byte, kind byte, s string) []byte {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, kind)
		return append(b, s...)
	}
	num := func(b []byte, kind byte, n int64) []byte {
		b = strconv.AppendInt(b, n, 10)
		return append(b, kind)
	}
	b = part(b, ':', container)
	b = part(b, ':', q.PartitionKey)
	b = part(b, ':', q.OrderBy)
	if q.Desc {
		b = append(b, 'd')
	}
	b = num(b, 'l', int64(q.Limit))
	b = num(b, 'f', int64(len(q.Filters)))
	for _, f := range q.Filters {
		b = part(b, ':', f.Path)
		b = part(b, ':', f.Op)
		switch v := f.Value.(type) {
		case string:
			b = part(b, 's', v)
		case bool:
			b = part(b, 'b', strconv.FormatBool(v))
		case int:
			b = num(b, 'i', int64(v))
		case int64:
			b = num(b, 'i', v)
		default:
			return b, false
		}
	}
	b = num(b, 'p', int64(len(q.Select)))
	for _, s := range q.Select {
		b = part(b, ':', s)
	}
	return b, true
}

// compileQuery is compile without compiledQueries.
func compileQuery(container string, q store.Query) (*compiledQuery, error) {
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
	cq := &compiledQuery{Query: q, found: make([][]byte, len(q.Filters))}
	for _, f := range q.Filters {
		cf, err := compileFilter(f)
		if err != nil {
			return nil, err
		}
		cq.filters = append(cq.filters, cf)
	}
	if q.OrderBy != "" {
		// The port's rule, because the Go SDK has no query plan: the
		// gateway refuses a cross-partition ORDER BY, so it is refused
		// here too rather than working only on the embedded store.
		if q.PartitionKey == "" {
			return nil, domain.Errorf(domain.EINVALID, "order by %q needs a partition key: a cross-partition query cannot be ordered; query without order by and sort in the client", q.OrderBy)
		}
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
	cq.shapeText = shape
	cq.key = string(shape) + "|" + strconv.Itoa(q.Limit) + "|" + q.Continuation
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
	if t.Shape != cq.shape() {
		return nil, invalidToken("it belongs to another query")
	}
	return &row{sort: newSortKey(t.Sort), raw: t.Sort, id: []byte(t.ID), pk: []byte(t.PK)}, nil
}

// match reads only the filtered and sorted properties of doc (the top
// level, undecoded) and applies the filters. An undefined property never
// matches, as in Cosmos SQL (undefined = x is undefined, not true). An
// item without the ORDER BY property does match: Cosmos's ORDER BY returns
// it, its undefined value sorting before every other (sortkey.go).
func (cq *compiledQuery) match(k, doc []byte) (row, bool) {
	clear(cq.found)
	var sortRaw []byte
	ok := topLevel(doc, func(key, raw []byte) bool {
		for i := range cq.filters {
			if string(key) == cq.filters[i].path {
				cq.found[i] = raw
			}
		}
		if string(key) == cq.OrderBy {
			sortRaw = raw
		}
		return true
	})
	if !ok {
		return row{}, false
	}
	for i := range cq.filters {
		if cq.found[i] == nil || !cq.filters[i].matches(cq.found[i]) {
			return row{}, false
		}
	}
	n := int(binary.BigEndian.Uint16(k))
	r := row{doc: doc, raw: sortRaw, pk: k[2 : 2+n], id: k[2+n:]}
	if sortRaw != nil {
		r.sort = newSortKey(sortRaw)
	}
	return r, true
}

// compare orders rows by sort value, then id, then partition key (ids are
// unique only within a partition), all ascending or all descending.
func (cq *compiledQuery) compare(a, b *row) int {
	c := compareSortKeys(a.sort, b.sort)
	if c == 0 {
		c = bytes.Compare(a.id, b.id)
	}
	if c == 0 {
		c = bytes.Compare(a.pk, b.pk)
	}
	if cq.Desc {
		return -c
	}
	return c
}

// less reports whether a comes before b in the query's order.
func (cq *compiledQuery) less(a, b *row) bool { return cq.compare(a, b) < 0 }

// project keeps the selected top-level properties, id always first.
func project(doc []byte, fields []string) []byte {
	values := make([][]byte, len(fields)+1)
	topLevel(doc, func(key, raw []byte) bool {
		if string(key) == "id" {
			values[0] = raw
		}
		for i, f := range fields {
			if string(key) == f && f != "id" {
				values[i+1] = raw
			}
		}
		return true
	})
	var b bytes.Buffer
	b.WriteByte('{')
	for i, raw := range values {
		if raw == nil || (i > 0 && slices.Contains(fields[:i-1], fields[i-1])) {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		name := "id"
		if i > 0 {
			name = fields[i-1]
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}
