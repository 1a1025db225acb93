package api

import (
	"container/list"
	"strings"
	"sync"
	"time"
)

// ReadCache keeps the rendered responses of the hot catalog screens (the
// home page's categories, a category's pages, a product's page) in this
// process, so a popular screen stops costing a read of one partition per
// visit: Cosmos gives one physical partition at most 10,000 RU/s, and a
// document everyone reads concentrates every visit on its partition.
//
// Freshness: each process follows the change feed of the containers the
// screens read (Follow: its own positions, no shared leases, so every
// instance sees every change) and drops the entries a change touches;
// whatever the feed does, an entry is never served older than MaxAge.
// A fill that was reading while a change of its entry arrived is handed
// to the requests that waited for it but not kept, so a change is never
// undone by a read that started before it.
//
// Bounds: at most MaxEntries entries and MaxBytes of bodies, evicting the
// least recently used; a body over an eighth of MaxBytes is not kept.
// Concurrent misses of one key make ONE store read (coalescing). Safe for
// concurrent use. A nil *ReadCache caches nothing.
type ReadCache struct {
	cfg CacheConfig

	mu    sync.Mutex
	bytes int
	lru   *list.List // of *cacheEntry, most recently used first
	// tags holds the entries by tag, then variant: a change drops a tag
	// without looking at the others.
	tags    map[string]map[string]*list.Element
	flights map[cacheKey]*flight
}

// CacheConfig bounds a ReadCache; zero fields take the defaults.
type CacheConfig struct {
	MaxAge     time.Duration // default DefaultCacheMaxAge
	MaxEntries int           // default 4096
	MaxBytes   int           // default 16 MB
	// PollEvery is how often Follow reads the change feed (default 500 ms).
	PollEvery time.Duration
	Now       func() time.Time // default time.Now
}

// DefaultCacheMaxAge is the staleness bound of a cached screen when the
// change feed says nothing (a follower that lags or fails).
const DefaultCacheMaxAge = 5 * time.Second

// cacheKey names one rendered response: tag is what a change invalidates
// ("categories", "category/<id>", "product/<id>"), variant the request's
// parameters within it.
type cacheKey struct{ tag, variant string }

// response is a rendered response: what a hit writes again.
type response struct {
	status int
	header map[string]string // the handler's own headers (Content-Type, ETag, Retry-After)
	body   []byte
}

type cacheEntry struct {
	key    cacheKey
	res    response
	stored time.Time
}

// flight is a fill in progress: the requests that missed the same key
// meanwhile wait for it. stale says a change of its tag arrived while it
// read, so its response is not kept.
type flight struct {
	done    chan struct{}
	started time.Time
	res     response
	stale   bool
}

// NewReadCache returns an empty cache bounded by cfg.
func NewReadCache(cfg CacheConfig) *ReadCache {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultCacheMaxAge
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 4096
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 16 << 20
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 500 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &ReadCache{
		cfg: cfg, lru: list.New(),
		tags: map[string]map[string]*list.Element{}, flights: map[cacheKey]*flight{},
	}
}

// lookup is how a request met the cache.
type lookup int

const (
	missed    lookup = iota // this request read the store (and filled the cache)
	hit                     // served from an entry
	coalesced               // waited for another request's read of the same key
	bypassed                // the entry, or the fill under way, is older than notBefore
)

// get returns k's response: the entry's when one is younger than MaxAge
// (with its age), else the response of the fill under way, else fill's,
// which it runs and keeps when it is a 200. An entry or a fill that
// started reading before notBefore (the client's own last write) is no
// answer for this request: get returns bypassed, reads nothing and leaves
// the entry to the requests it suits, and the caller reads for itself.
func (c *ReadCache) get(k cacheKey, notBefore time.Time, fill func() response) (response, lookup, time.Duration) {
	now := c.cfg.Now()
	c.mu.Lock()
	if el, ok := c.tags[k.tag][k.variant]; ok {
		e := el.Value.(*cacheEntry)
		if age := now.Sub(e.stored); age < c.cfg.MaxAge {
			if e.stored.Before(notBefore) {
				c.mu.Unlock()
				return response{}, bypassed, age
			}
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			return e.res, hit, age
		}
		c.remove(el)
	}
	if f, ok := c.flights[k]; ok {
		c.mu.Unlock()
		if f.started.Before(notBefore) {
			return response{}, bypassed, 0
		}
		<-f.done
		return f.res, coalesced, 0
	}
	f := &flight{done: make(chan struct{}), started: now}
	c.flights[k] = f
	c.mu.Unlock()

	defer func() {
		c.mu.Lock()
		delete(c.flights, k)
		if !f.stale && f.res.status == 200 {
			c.put(k, f.res, now)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	f.res = fill()
	return f.res, missed, 0
}

// put keeps res as k's entry, read at stored; c.mu is held.
func (c *ReadCache) put(k cacheKey, res response, stored time.Time) {
	if len(res.body) > c.cfg.MaxBytes/8 {
		return
	}
	if el, ok := c.tags[k.tag][k.variant]; ok {
		c.remove(el)
	}
	if c.tags[k.tag] == nil {
		c.tags[k.tag] = map[string]*list.Element{}
	}
	c.tags[k.tag][k.variant] = c.lru.PushFront(&cacheEntry{key: k, res: res, stored: stored})
	c.bytes += len(res.body)
	for c.lru.Len() > c.cfg.MaxEntries || c.bytes > c.cfg.MaxBytes {
		c.remove(c.lru.Back())
	}
}

// remove drops one entry; c.mu is held.
func (c *ReadCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.tags[e.key.tag], e.key.variant)
	if len(c.tags[e.key.tag]) == 0 {
		delete(c.tags, e.key.tag)
	}
	c.bytes -= len(e.res.body)
}

// removeAll drops the entries of one tag; c.mu is held.
func (c *ReadCache) removeAll(variants map[string]*list.Element) {
	for _, el := range variants {
		c.remove(el)
	}
}

// Invalidate drops every entry of tag, and of every tag starting with
// tag when it ends in "/" ("category/": every category's pages), and
// marks the fills of those tags under way as stale.
func (c *ReadCache) Invalidate(tag string) {
	if c == nil {
		return
	}
	prefix := strings.HasSuffix(tag, "/")
	match := func(t string) bool { return t == tag || prefix && strings.HasPrefix(t, tag) }
	c.mu.Lock()
	defer c.mu.Unlock()
	if prefix {
		for t, variants := range c.tags {
			if match(t) {
				c.removeAll(variants)
			}
		}
	} else {
		c.removeAll(c.tags[tag])
	}
	for k, f := range c.flights {
		if match(k.tag) {
			f.stale = true
		}
	}
}

// size reports the entries and bytes held.
func (c *ReadCache) size() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
