package api

import "github.com/reference-shop/shop/api/lru"

// renderCache keeps the product page's rendered body of each product for
// the _etag it was rendered from. The page still makes its one point read
// (its charge is the page's cost, and the read says which _etag is
// current), sent with If-None-Match: the cached _etag. When it is still
// the stored one the store sends no document (Cosmos answers 304) and the
// page writes the cached bytes instead of decoding the document and
// encoding the view again: the view is a function of the document alone,
// and every write of a document changes its _etag.
//
// It holds at most maxEntries products and maxBytes of bodies, evicting
// the least recently used (lru.Cache); a product holds one entry, its
// newest render. Safe for concurrent use. A nil *renderCache caches
// nothing.
type renderCache struct {
	lru *lru.Cache[string, renderEntry] // by product id
}

// renderEntry is one product's body, rendered from the document whose
// _etag is etag (also the page's ETag header).
type renderEntry struct {
	etag string
	body []byte
}

// Bounds of the product page's cache: the whole catalog of a small shop,
// a few MB at most.
const (
	renderCacheEntries = 4096
	renderCacheBytes   = 8 << 20
)

func newRenderCache(maxEntries, maxBytes int) *renderCache {
	return &renderCache{lru.New[string](maxEntries, maxBytes, func(e renderEntry) int { return len(e.body) }, nil)}
}

// latest returns product id's newest render and the _etag it was
// rendered from ("" and nil when there is none). The page reads the
// product with that _etag as If-None-Match and writes body when the store
// says it is still current.
func (c *renderCache) latest(id string) (etag string, body []byte) {
	if c == nil {
		return "", nil
	}
	e, _ := c.lru.Get(id)
	return e.etag, e.body
}

// put keeps body as product id's render of _etag etag, replacing an older
// one. A body over an eighth of maxBytes is not kept. The caller must not
// change body afterwards.
func (c *renderCache) put(id, etag string, body []byte) {
	if c == nil || etag == "" {
		return
	}
	c.lru.Put(id, renderEntry{etag, body})
}

// size reports the entries and bytes held.
func (c *renderCache) size() (entries, bytes int) { return c.lru.Size() }
