package embedded

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/store"
)

// queryMemo keeps the pages a container's queries returned, each with the
// snapshot it was read at (the bbolt transaction id of a read: the last
// write committed before it), so the same query on an unchanged container
// returns its kept page instead of walking the index and matching every
// document again. A query is still a store call, admitted by the
// throughput model and charged what it was charged when it ran (the page
// is the same, so are the documents it loaded): only the CPU is saved. On
// a category page of 20 products that is most of the store's share
// (docs/performance.md, "Every screen against a bare handler").
//
// A kept page answers a query at snapshot s only if no transaction has
// written the container since the page's snapshot e: every write puts its
// own transaction id in wrote (wrote), before it commits, so wrote <= e
// says no write, committed or under way, is newer than the page. A write
// under way makes the page unusable a little early (a read at the old
// snapshot walks again), never late. A page is also good only until the
// first of its documents expires (TTL): expired documents vanish without
// a write. The container's definition lives in its containerState, and a
// new definition or a split starts a new state with an empty memo.
//
// At most memoPages pages and memoBytes of items per container; past
// either it starts again from empty (a rare event on a workload that
// repeats its queries, the only one a memo helps). Safe for concurrent
// use.
type queryMemo struct {
	wrote atomic.Int64

	mu    sync.Mutex
	bytes int
	pages map[string]memoPage
}

// memoPage is a query's page: its items are copied out on every use, so
// callers may keep or change them as they may a walked page's.
type memoPage struct {
	snapshot int
	until    int64 // UnixNano when its first document expires (math.MaxInt64: none)
	page     store.QueryPage
}

const (
	memoPages = 1024
	memoBytes = 8 << 20
)

// wroteAt records that transaction txid writes the container.
func (m *queryMemo) wroteAt(txid int) {
	for {
		old := m.wrote.Load()
		if int64(txid) <= old || m.wrote.CompareAndSwap(old, int64(txid)) {
			return
		}
	}
}

// get returns key's page if it is still the answer at snapshot and now.
func (m *queryMemo) get(key string, snapshot int, now time.Time) (store.QueryPage, bool) {
	m.mu.Lock()
	p, ok := m.pages[key]
	m.mu.Unlock()
	if !ok || p.snapshot > snapshot || m.wrote.Load() > int64(p.snapshot) || now.UnixNano() >= p.until {
		return store.QueryPage{}, false
	}
	// Shared, not copied: QueryPage.Items are read-only to every caller
	// (store/port.go), and a page of a category is a few KB a request
	// would otherwise copy and collect.
	return p.page, true
}

// cloneItems copies items into one new array: two allocations, not one
// per item.
func cloneItems(items [][]byte) [][]byte {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(items))
	for i, it := range items {
		buf = append(buf, it...)
		out[i] = buf[len(buf)-len(it) : len(buf) : len(buf)]
	}
	return out
}

// put keeps page as key's answer at snapshot until until (UnixNano).
func (m *queryMemo) put(key string, snapshot int, until int64, page store.QueryPage) {
	size := len(key)
	kept := page
	kept.Items = cloneItems(page.Items)
	for _, it := range page.Items {
		size += len(it)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.pages[key]; ok {
		m.bytes -= pageBytes(key, old.page)
	}
	if m.pages == nil || len(m.pages) >= memoPages || m.bytes+size > memoBytes {
		m.pages, m.bytes = map[string]memoPage{}, 0
	}
	m.pages[key] = memoPage{snapshot: snapshot, until: until, page: kept}
	m.bytes += size
}

func pageBytes(key string, p store.QueryPage) int {
	n := len(key)
	for _, it := range p.Items {
		n += len(it)
	}
	return n
}

// expiresAt is when an item of header h expires (UnixNano), math.MaxInt64
// if never: expired's rule.
func expiresAt(def *store.ContainerDef, h header) int64 {
	if def.DefaultTTL == nil {
		return math.MaxInt64
	}
	ttl := int64(*def.DefaultTTL)
	if h.ttl != noTTL {
		ttl = h.ttl
	}
	if ttl < 0 {
		return math.MaxInt64
	}
	return h.written + ttl*int64(time.Second)
}
