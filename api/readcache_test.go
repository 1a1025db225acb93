package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a test clock the cache reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func ok(body string) func() response {
	return func() response { return response{status: 200, body: []byte(body)} }
}

func TestReadCacheHitsUntilMaxAge(t *testing.T) {
	clk := &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	c := NewReadCache(CacheConfig{MaxAge: 5 * time.Second, Now: clk.Now})
	k := cacheKey{tag: "categories"}
	if _, how, _ := c.get(k, time.Time{}, ok("v1")); how != missed {
		t.Fatalf("first get: %v, want a miss", how)
	}
	clk.advance(4999 * time.Millisecond)
	res, how, age := c.get(k, time.Time{}, ok("v2"))
	if how != hit || string(res.body) != "v1" || age != 4999*time.Millisecond {
		t.Errorf("get before max age = %q, %v, age %v; want v1, a hit, 4.999s", res.body, how, age)
	}
	clk.advance(time.Millisecond)
	if res, how, _ := c.get(k, time.Time{}, ok("v2")); how != missed || string(res.body) != "v2" {
		t.Errorf("get at max age = %q, %v; want a new read (v2)", res.body, how)
	}
}

func TestReadCacheKeepsOnly200(t *testing.T) {
	c := NewReadCache(CacheConfig{})
	k := cacheKey{tag: "product/p-1"}
	c.get(k, time.Time{}, func() response { return response{status: 503, body: []byte("throttled")} })
	if _, how, _ := c.get(k, time.Time{}, ok("v1")); how != missed {
		t.Errorf("after a 503: %v, want a miss (a failure is never kept)", how)
	}
	if _, how, _ := c.get(k, time.Time{}, ok("v2")); how != hit {
		t.Errorf("after a 200: %v, want a hit", how)
	}
}

// TestReadCacheCoalescesMisses: 50 requests missing the same key at once
// make ONE read, and all get its response.
func TestReadCacheCoalescesMisses(t *testing.T) {
	c := NewReadCache(CacheConfig{})
	k := cacheKey{tag: "category/books", variant: "name|20|"}
	release := make(chan struct{})
	var reads atomic.Int32
	fill := func() response {
		reads.Add(1)
		<-release
		return response{status: 200, body: []byte("page")}
	}
	const n = 50
	var wg sync.WaitGroup
	hows := make(chan lookup, n)
	for range n {
		wg.Go(func() {
			res, how, _ := c.get(k, time.Time{}, fill)
			if string(res.body) != "page" {
				t.Errorf("got %q, want the one read's page", res.body)
			}
			hows <- how
		})
	}
	// Every request is either the reader or waiting for it, or will hit.
	for reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	close(hows)
	count := map[lookup]int{}
	for h := range hows {
		count[h]++
	}
	if got := reads.Load(); got != 1 {
		t.Errorf("%d reads for %d concurrent misses, want 1", got, n)
	}
	if count[missed] != 1 || count[missed]+count[coalesced]+count[hit] != n {
		t.Errorf("lookups %v, want one miss and the rest coalesced or hits", count)
	}
}

func TestReadCacheBounds(t *testing.T) {
	body := func(n int) func() response {
		return func() response { return response{status: 200, body: []byte(strings.Repeat("x", n))} }
	}
	t.Run("Entries", func(t *testing.T) {
		c := NewReadCache(CacheConfig{MaxEntries: 2})
		a, b, d := cacheKey{tag: "a"}, cacheKey{tag: "b"}, cacheKey{tag: "d"}
		c.get(a, time.Time{}, body(10))
		c.get(b, time.Time{}, body(10))
		c.get(a, time.Time{}, body(10)) // a is now the most recently used
		c.get(d, time.Time{}, body(10))
		if _, how, _ := c.get(b, time.Time{}, body(10)); how != missed {
			t.Error("b kept: the least recently used must go first")
		}
		if n, _ := c.size(); n != 2 {
			t.Errorf("%d entries, bound 2", n)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		c := NewReadCache(CacheConfig{MaxBytes: 800})
		for i := range 10 {
			c.get(cacheKey{tag: fmt.Sprint(i)}, time.Time{}, body(100))
		}
		if n, b := c.size(); n != 8 || b != 800 {
			t.Errorf("size %d entries %d bytes, want 8, 800", n, b)
		}
		big := cacheKey{tag: "big"}
		c.get(big, time.Time{}, body(101)) // over an eighth of the bound
		if _, how, _ := c.get(big, time.Time{}, body(101)); how != missed {
			t.Error("a body over an eighth of the bound was kept")
		}
	})
}

func TestReadCacheInvalidate(t *testing.T) {
	c := NewReadCache(CacheConfig{})
	keys := []cacheKey{
		{tag: "categories"},
		{tag: "category/books", variant: "name||"}, {tag: "category/books", variant: "price|5|"},
		{tag: "category/games", variant: "name||"},
		{tag: "product/p-1"}, {tag: "product/p-10"},
	}
	kept := func() map[cacheKey]bool {
		m := map[cacheKey]bool{}
		for _, k := range keys {
			c.mu.Lock()
			_, ok := c.tags[k.tag][k.variant]
			c.mu.Unlock()
			m[k] = ok
		}
		return m
	}
	fillAll := func() {
		for _, k := range keys {
			c.get(k, time.Time{}, ok(k.tag))
		}
	}
	for _, tc := range []struct {
		tag  string
		gone []cacheKey
	}{
		{"product/p-1", keys[4:5]},
		{"category/books", keys[1:3]},
		{"category/", keys[1:4]},
		{"categories", keys[0:1]},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			fillAll()
			c.Invalidate(tc.tag)
			for k, ok := range kept() {
				gone := false
				for _, g := range tc.gone {
					gone = gone || g == k
				}
				if ok == gone {
					t.Errorf("after Invalidate(%q): %v kept %v, want %v", tc.tag, k, ok, !gone)
				}
			}
		})
	}
	t.Run("ReadUnderWayIsNotKept", func(t *testing.T) {
		k := cacheKey{tag: "product/p-2"}
		res, how, _ := c.get(k, time.Time{}, func() response {
			// The document changes while the page reads it: what this
			// read got may be the version before the change.
			c.Invalidate("product/p-2")
			return response{status: 200, body: []byte("old")}
		})
		if how != missed || string(res.body) != "old" {
			t.Fatalf("get = %q, %v", res.body, how)
		}
		if res, how, _ := c.get(k, time.Time{}, ok("new")); how != missed || string(res.body) != "new" {
			t.Errorf("after a change during the read: %q, %v; want a new read", res.body, how)
		}
	})
	t.Run("Changed", func(t *testing.T) {
		for _, tc := range []struct {
			container, doc string
			gone           []cacheKey
		}{
			{"products", `{"id":"p-1","categoryId":"books"}`, keys[4:5]},
			{"products", `{"id":"categories","items":[]}`, keys[0:4]},
			{"productsByCategory", `{"id":"p-1","categoryId":"games"}`, keys[3:4]},
			{"orders", `{"id":"p-1","categoryId":"games"}`, nil},
		} {
			fillAll()
			c.Changed(tc.container, []byte(tc.doc))
			for k, ok := range kept() {
				gone := false
				for _, g := range tc.gone {
					gone = gone || g == k
				}
				if ok == gone {
					t.Errorf("after a change in %s %s: %v kept %v, want %v", tc.container, tc.doc, k, ok, !gone)
				}
			}
		}
	})
}

// TestCachedWaiterReadsItselfAfterAFailedRead: a request that waited for
// another's read of the same page gets that answer only when it is the
// page's (a 200, or a 404 that any read would give). A read that failed
// for its own reasons (its client went away, the partition was
// throttled) is no answer for the others: each reads for itself.
func TestCachedWaiterReadsItselfAfterAFailedRead(t *testing.T) {
	c := NewReadCache(CacheConfig{})
	release := make(chan struct{})
	var calls atomic.Int32
	h := cached(c, categoriesKey, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-release
			http.Error(w, "the reader's own failure", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "categories")
	})
	first := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/v1/categories", nil))
		first <- rec.Code
	}()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan *httptest.ResponseRecorder)
	go func() {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/v1/categories", nil))
		second <- rec
	}()
	// The second request is waiting for the first's read.
	time.Sleep(20 * time.Millisecond)
	close(release)
	if got := <-first; got != http.StatusServiceUnavailable {
		t.Fatalf("first: status %d, want its own 503", got)
	}
	rec := <-second
	if rec.Code != http.StatusOK || rec.Body.String() != "categories" {
		t.Errorf("second: %d %q, want its own read's 200 \"categories\"", rec.Code, rec.Body)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("%d reads, want 2 (the failed one and the waiter's own)", got)
	}
}
