// Package lru is the one least-recently-used cache under the shop's
// caches (the read cache of the hot screens, api/readcache; the product
// page's renders, api): a map bounded by its entries and by the bytes of
// its values, the least recently used out first.
package lru

import (
	"container/list"
	"sync"
)

// Cache holds at most maxEntries values and maxBytes of them (as size
// measures a value), evicting the least recently used. A value over an
// eighth of maxBytes is not kept: it would push out many others. Safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	maxEntries, maxBytes int
	size                 func(V) int
	evicted              func(K, V)

	mu    sync.Mutex
	bytes int
	order *list.List // of *entry[K, V], most recently used first
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	size int
}

// New returns an empty cache bounded by maxEntries and maxBytes. size
// measures a value's bytes. evicted, when not nil, is called for each
// entry the bounds push out (not for Remove, nor for a value Put
// replaces), with the cache's lock held: it must not call the cache.
func New[K comparable, V any](maxEntries, maxBytes int, size func(V) int, evicted func(K, V)) *Cache[K, V] {
	return &Cache[K, V]{
		maxEntries: maxEntries, maxBytes: maxBytes, size: size, evicted: evicted,
		order: list.New(), items: make(map[K]*list.Element),
	}
}

// Get returns k's value and makes it the most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).val, true
}

// Peek returns k's value and leaves the order as it is.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	return el.Value.(*entry[K, V]).val, true
}

// Put keeps v as k's value, replacing the one it had, as the most
// recently used, and evicts the least recently used entries until the
// cache is within its bounds again. It reports false, and changes
// nothing, when v is over an eighth of maxBytes or maxEntries is under 1.
func (c *Cache[K, V]) Put(k K, v V) bool {
	n := c.size(v)
	if c.maxEntries < 1 || n > c.maxBytes/8 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		e := el.Value.(*entry[K, V])
		c.bytes += n - e.size
		e.val, e.size = v, n
		c.order.MoveToFront(el)
	} else {
		c.items[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, size: n})
		c.bytes += n
	}
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		e := c.remove(c.order.Back())
		if c.evicted != nil {
			c.evicted(e.key, e.val)
		}
	}
	return true
}

// Remove drops k's entry, if any.
func (c *Cache[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.remove(el)
	}
}

// remove drops one entry; c.mu is held.
func (c *Cache[K, V]) remove(el *list.Element) *entry[K, V] {
	e := c.order.Remove(el).(*entry[K, V])
	delete(c.items, e.key)
	c.bytes -= e.size
	return e
}

// Size reports the entries and bytes held.
func (c *Cache[K, V]) Size() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
