package lru

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func byLen(s string) int { return len(s) }

// keys returns the keys held, most recently used first.
func keys(c *Cache[string, string]) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ks []string
	for el := c.order.Front(); el != nil; el = el.Next() {
		ks = append(ks, el.Value.(*entry[string, string]).key)
	}
	return ks
}

func TestEvictsTheLeastRecentlyUsed(t *testing.T) {
	var evicted []string
	c := New(3, 1<<20, byLen, func(k, v string) { evicted = append(evicted, k+"="+v) })
	c.Put("a", "1")
	c.Put("b", "2")
	c.Put("c", "3")
	c.Get("a")  // a is now the most recently used
	c.Peek("b") // a peek leaves b the least recently used
	c.Put("d", "4")
	if got, want := keys(c), []string{"d", "a", "c"}; !slices.Equal(got, want) {
		t.Errorf("held %v, want %v", got, want)
	}
	if got, want := evicted, []string{"b=2"}; !slices.Equal(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
	if _, ok := c.Get("b"); ok {
		t.Error("b is still served after its eviction")
	}
	if v, ok := c.Get("c"); !ok || v != "3" {
		t.Errorf("Get(c) = %q, %v; want 3, true", v, ok)
	}
}

func TestByteBound(t *testing.T) {
	c := New[string](100, 800, byLen, nil)
	for i := range 10 {
		c.Put(fmt.Sprint(i), strings.Repeat("x", 100))
	}
	if n, b := c.Size(); n != 8 || b != 800 {
		t.Errorf("size %d entries %d bytes, want 8, 800", n, b)
	}
	if got, want := keys(c), []string{"9", "8", "7", "6", "5", "4", "3", "2"}; !slices.Equal(got, want) {
		t.Errorf("held %v, want the newest 8 %v", got, want)
	}
	if c.Put("big", strings.Repeat("x", 101)) { // over an eighth of the bound
		t.Error("a value over an eighth of the bound was kept")
	}
	if n, b := c.Size(); n != 8 || b != 800 {
		t.Errorf("after the big value: size %d entries %d bytes, want 8, 800 (nothing changed)", n, b)
	}
	if !c.Put("fits", strings.Repeat("x", 100)) {
		t.Error("a value of an eighth of the bound was refused")
	}
}

func TestPutReplaces(t *testing.T) {
	var evicted []string
	c := New(2, 1<<20, byLen, func(k, _ string) { evicted = append(evicted, k) })
	c.Put("a", "short")
	c.Put("b", "b")
	c.Put("a", "a longer value")
	if v, _ := c.Peek("a"); v != "a longer value" {
		t.Errorf("a = %q, want the new value", v)
	}
	if n, b := c.Size(); n != 2 || b != len("a longer value")+1 {
		t.Errorf("size %d entries %d bytes, want 2, %d", n, b, len("a longer value")+1)
	}
	if got, want := keys(c), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("held %v, want %v: a replaced value is the most recently used", got, want)
	}
	if len(evicted) != 0 {
		t.Errorf("evicted %v, want none: a replaced value is no eviction", evicted)
	}
	// A value too big to keep leaves the old one.
	c2 := New[string](2, 80, byLen, nil)
	c2.Put("a", "old")
	c2.Put("a", strings.Repeat("x", 11))
	if v, _ := c2.Peek("a"); v != "old" {
		t.Errorf("after a value too big: a = %q, want the old one", v)
	}
}

func TestRemove(t *testing.T) {
	var evicted []string
	c := New(10, 1<<20, byLen, func(k, _ string) { evicted = append(evicted, k) })
	c.Put("a", "123")
	c.Put("b", "45")
	c.Remove("a")
	c.Remove("nothing")
	if _, ok := c.Peek("a"); ok {
		t.Error("a is still held")
	}
	if n, b := c.Size(); n != 1 || b != 2 {
		t.Errorf("size %d entries %d bytes, want 1, 2", n, b)
	}
	if len(evicted) != 0 {
		t.Errorf("evicted %v, want none: a removal is no eviction", evicted)
	}
}

func TestNoEntries(t *testing.T) {
	c := New[string](0, 1<<20, byLen, nil)
	if c.Put("a", "1") {
		t.Error("a cache of 0 entries kept one")
	}
	if n, _ := c.Size(); n != 0 {
		t.Errorf("%d entries, want 0", n)
	}
}

// TestConcurrent: goroutines getting, putting and removing at once (run
// with -race) leave the cache within its bounds, with its byte count the
// sum of what it holds and every value the one put under its key.
func TestConcurrent(t *testing.T) {
	c := New[string](16, 1<<20, byLen, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				k, v := fmt.Sprint(i%32), fmt.Sprint(g%3)
				if got, ok := c.Get(k); ok && !strings.HasPrefix(got, k+"/") {
					t.Errorf("Get(%s) = %q", k, got)
				}
				c.Put(k, k+"/"+v)
				if i%7 == 0 {
					c.Remove(k)
				}
			}
		})
	}
	wg.Wait()
	n, b := c.Size()
	if n > 16 {
		t.Errorf("%d entries, bound 16", n)
	}
	sum := 0
	for _, k := range keys(c) {
		v, _ := c.Peek(k)
		sum += len(v)
	}
	if b != sum {
		t.Errorf("%d bytes counted, %d held", b, sum)
	}
}
