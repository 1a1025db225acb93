// Package readcache keeps the rendered responses of the hot catalog
// screens in this process and drops them as the change feed says their
// documents change. The handlers consult it through api.ReadCache;
// cmd/shop builds it, starts its Follow and hands it to the API.
package readcache

import (
	"strings"
	"sync"
	"time"

	"github.com/reference-shop/shop/api/lru"
)

// Cache keeps the rendered responses of the hot catalog screens (the
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
// least recently used (lru.Cache); a body over an eighth of MaxBytes is
// not kept. Concurrent misses of one key make ONE store read
// (coalescing). Safe for concurrent use. A nil *Cache caches nothing.
type Cache struct {
	cfg Config

	// mu is held for every call of lru, so the entries, their tags and
	// the fills under way change together.
	mu  sync.Mutex
	lru *lru.Cache[Key, entry]
	// tags holds the variants kept of each tag: a change drops a tag
	// without looking at the others.
	tags    map[string]map[string]bool
	flights map[Key]*flight
}

// Config bounds a Cache; zero fields take the defaults.
type Config struct {
	MaxAge     time.Duration // default DefaultMaxAge
	MaxEntries int           // default 4096
	MaxBytes   int           // default 16 MB
	// PollEvery is how often Follow reads the change feed (default 500 ms).
	PollEvery time.Duration
	Now       func() time.Time // default time.Now
}

// DefaultMaxAge is the staleness bound of a cached screen when the
// change feed says nothing (a follower that lags or fails).
const DefaultMaxAge = 5 * time.Second

// Key names one rendered response: Tag is what a change invalidates
// ("categories", "category/<id>", "product/<id>"), Variant the request's
// parameters within it.
type Key struct{ Tag, Variant string }

// Response is a rendered response: what a hit writes again.
type Response struct {
	Status int
	Header map[string]string // the handler's own headers (Content-Type, ETag, Retry-After)
	Body   []byte
}

type entry struct {
	res    Response
	stored time.Time
}

// flight is a fill in progress: the requests that missed the same key
// meanwhile wait for it. stale says a change of its tag arrived while it
// read, so its response is not kept.
type flight struct {
	done    chan struct{}
	started time.Time
	res     Response
	stale   bool
}

// New returns an empty cache bounded by cfg.
func New(cfg Config) *Cache {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
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
	c := &Cache{cfg: cfg, tags: map[string]map[string]bool{}, flights: map[Key]*flight{}}
	c.lru = lru.New(cfg.MaxEntries, cfg.MaxBytes,
		func(e entry) int { return len(e.res.Body) },
		func(k Key, _ entry) { c.untag(k) }) // evicted by a Put, made with c.mu held
	return c
}

// MaxAge is the oldest an entry is served.
func (c *Cache) MaxAge() time.Duration { return c.cfg.MaxAge }

// Lookup is how a request met the cache.
type Lookup int

const (
	Missed    Lookup = iota // this request read the store (and filled the cache)
	Hit                     // served from an entry
	Coalesced               // waited for another request's read of the same key
	Bypassed                // the entry, or the fill under way, is older than notBefore
)

// Get returns k's response: the entry's when one is younger than MaxAge
// (with its age), else the response of the fill under way, else fill's,
// which it runs and keeps when it is a 200. An entry or a fill that
// started reading before notBefore (the client's own last write) is no
// answer for this request: Get returns Bypassed, reads nothing and leaves
// the entry to the requests it suits, and the caller reads for itself.
func (c *Cache) Get(k Key, notBefore time.Time, fill func() Response) (Response, Lookup, time.Duration) {
	now := c.cfg.Now()
	c.mu.Lock()
	if e, ok := c.lru.Peek(k); ok {
		if age := now.Sub(e.stored); age < c.cfg.MaxAge {
			if e.stored.Before(notBefore) {
				c.mu.Unlock()
				return Response{}, Bypassed, age
			}
			c.lru.Get(k) // now the most recently used
			c.mu.Unlock()
			return e.res, Hit, age
		}
		c.remove(k)
	}
	if f, ok := c.flights[k]; ok {
		c.mu.Unlock()
		if f.started.Before(notBefore) {
			return Response{}, Bypassed, 0
		}
		<-f.done
		return f.res, Coalesced, 0
	}
	f := &flight{done: make(chan struct{}), started: now}
	c.flights[k] = f
	c.mu.Unlock()

	defer func() {
		c.mu.Lock()
		delete(c.flights, k)
		if !f.stale && f.res.Status == 200 && c.lru.Put(k, entry{res: f.res, stored: now}) {
			c.tag(k)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	f.res = fill()
	return f.res, Missed, 0
}

// tag and untag keep c.tags the keys c.lru holds; c.mu is held.
func (c *Cache) tag(k Key) {
	if c.tags[k.Tag] == nil {
		c.tags[k.Tag] = map[string]bool{}
	}
	c.tags[k.Tag][k.Variant] = true
}

func (c *Cache) untag(k Key) {
	delete(c.tags[k.Tag], k.Variant)
	if len(c.tags[k.Tag]) == 0 {
		delete(c.tags, k.Tag)
	}
}

// remove drops one entry; c.mu is held.
func (c *Cache) remove(k Key) {
	c.lru.Remove(k)
	c.untag(k)
}

// removeAll drops the entries of one tag; c.mu is held.
func (c *Cache) removeAll(tag string) {
	for variant := range c.tags[tag] {
		c.remove(Key{tag, variant})
	}
}

// Invalidate drops every entry of tag, and of every tag starting with
// tag when it ends in "/" ("category/": every category's pages), and
// marks the fills of those tags under way as stale.
func (c *Cache) Invalidate(tag string) {
	if c == nil {
		return
	}
	prefix := strings.HasSuffix(tag, "/")
	match := func(t string) bool { return t == tag || prefix && strings.HasPrefix(t, tag) }
	c.mu.Lock()
	defer c.mu.Unlock()
	if prefix {
		for t := range c.tags {
			if match(t) {
				c.removeAll(t)
			}
		}
	} else {
		c.removeAll(tag)
	}
	for k, f := range c.flights {
		if match(k.Tag) {
			f.stale = true
		}
	}
}
