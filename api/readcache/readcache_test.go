package readcache

import (
	"fmt"
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

// size reports the entries and bytes held.
func (c *Cache) size() (entries, bytes int) { return c.lru.Size() }

func ok(body string) func() Response {
	return func() Response { return Response{Status: 200, Body: []byte(body)} }
}

func TestReadCacheHitsUntilMaxAge(t *testing.T) {
	clk := &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	c := New(Config{MaxAge: 5 * time.Second, Now: clk.Now})
	k := Key{Tag: "categories"}
	if _, how, _ := c.Get(k, time.Time{}, ok("v1")); how != Missed {
		t.Fatalf("first get: %v, want a miss", how)
	}
	clk.advance(4999 * time.Millisecond)
	res, how, age := c.Get(k, time.Time{}, ok("v2"))
	if how != Hit || string(res.Body) != "v1" || age != 4999*time.Millisecond {
		t.Errorf("get before max age = %q, %v, age %v; want v1, a hit, 4.999s", res.Body, how, age)
	}
	clk.advance(time.Millisecond)
	if res, how, _ := c.Get(k, time.Time{}, ok("v2")); how != Missed || string(res.Body) != "v2" {
		t.Errorf("get at max age = %q, %v; want a new read (v2)", res.Body, how)
	}
}

func TestReadCacheKeepsOnly200(t *testing.T) {
	c := New(Config{})
	k := Key{Tag: "product/p-1"}
	c.Get(k, time.Time{}, func() Response { return Response{Status: 503, Body: []byte("throttled")} })
	if _, how, _ := c.Get(k, time.Time{}, ok("v1")); how != Missed {
		t.Errorf("after a 503: %v, want a miss (a failure is never kept)", how)
	}
	if _, how, _ := c.Get(k, time.Time{}, ok("v2")); how != Hit {
		t.Errorf("after a 200: %v, want a hit", how)
	}
}

// TestReadCacheCoalescesMisses: 50 requests missing the same key at once
// make ONE read, and all get its response.
func TestReadCacheCoalescesMisses(t *testing.T) {
	c := New(Config{})
	k := Key{Tag: "category/books", Variant: "name|20|"}
	release := make(chan struct{})
	var reads atomic.Int32
	fill := func() Response {
		reads.Add(1)
		<-release
		return Response{Status: 200, Body: []byte("page")}
	}
	const n = 50
	var wg sync.WaitGroup
	hows := make(chan Lookup, n)
	for range n {
		wg.Go(func() {
			res, how, _ := c.Get(k, time.Time{}, fill)
			if string(res.Body) != "page" {
				t.Errorf("got %q, want the one read's page", res.Body)
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
	count := map[Lookup]int{}
	for h := range hows {
		count[h]++
	}
	if got := reads.Load(); got != 1 {
		t.Errorf("%d reads for %d concurrent misses, want 1", got, n)
	}
	if count[Missed] != 1 || count[Missed]+count[Coalesced]+count[Hit] != n {
		t.Errorf("lookups %v, want one miss and the rest coalesced or hits", count)
	}
}

func TestReadCacheBounds(t *testing.T) {
	body := func(n int) func() Response {
		return func() Response { return Response{Status: 200, Body: []byte(strings.Repeat("x", n))} }
	}
	t.Run("Entries", func(t *testing.T) {
		c := New(Config{MaxEntries: 2})
		a, b, d := Key{Tag: "a"}, Key{Tag: "b"}, Key{Tag: "d"}
		c.Get(a, time.Time{}, body(10))
		c.Get(b, time.Time{}, body(10))
		c.Get(a, time.Time{}, body(10)) // a is now the most recently used
		c.Get(d, time.Time{}, body(10))
		if _, how, _ := c.Get(b, time.Time{}, body(10)); how != Missed {
			t.Error("b kept: the least recently used must go first")
		}
		if n, _ := c.size(); n != 2 {
			t.Errorf("%d entries, bound 2", n)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		c := New(Config{MaxBytes: 800})
		for i := range 10 {
			c.Get(Key{Tag: fmt.Sprint(i)}, time.Time{}, body(100))
		}
		if n, b := c.size(); n != 8 || b != 800 {
			t.Errorf("size %d entries %d bytes, want 8, 800", n, b)
		}
		big := Key{Tag: "big"}
		c.Get(big, time.Time{}, body(101)) // over an eighth of the bound
		if _, how, _ := c.Get(big, time.Time{}, body(101)); how != Missed {
			t.Error("a body over an eighth of the bound was kept")
		}
	})
}

func TestReadCacheInvalidate(t *testing.T) {
	c := New(Config{})
	keys := []Key{
		{Tag: "categories"},
		{Tag: "category/books", Variant: "name||"}, {Tag: "category/books", Variant: "price|5|"},
		{Tag: "category/games", Variant: "name||"},
		{Tag: "product/p-1"}, {Tag: "product/p-10"},
	}
	kept := func() map[Key]bool {
		m := map[Key]bool{}
		for _, k := range keys {
			c.mu.Lock()
			_, ok := c.lru.Peek(k)
			tagged := c.tags[k.Tag][k.Variant]
			c.mu.Unlock()
			if tagged != ok {
				t.Errorf("%v: held %v, tagged %v", k, ok, tagged)
			}
			m[k] = ok
		}
		return m
	}
	fillAll := func() {
		for _, k := range keys {
			c.Get(k, time.Time{}, ok(k.Tag))
		}
	}
	for _, tc := range []struct {
		tag  string
		gone []Key
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
		k := Key{Tag: "product/p-2"}
		res, how, _ := c.Get(k, time.Time{}, func() Response {
			// The document changes while the page reads it: what this
			// read got may be the version before the change.
			c.Invalidate("product/p-2")
			return Response{Status: 200, Body: []byte("old")}
		})
		if how != Missed || string(res.Body) != "old" {
			t.Fatalf("get = %q, %v", res.Body, how)
		}
		if res, how, _ := c.Get(k, time.Time{}, ok("new")); how != Missed || string(res.Body) != "new" {
			t.Errorf("after a change during the read: %q, %v; want a new read", res.Body, how)
		}
	})
	t.Run("Changed", func(t *testing.T) {
		for _, tc := range []struct {
			container, doc string
			gone           []Key
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
