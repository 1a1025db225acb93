package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
)

// cached serves next's responses through c, under the key key gives the
// request (ok false: not cached, next serves it). A hit writes the kept
// status, headers and body and reads nothing, so its cost headers say 0
// operations and 0.00 RU; its Server-Timing says it came from the cache,
// how old it is and the bound (cache;desc="hit, age 1.20 s, max 5.00 s").
// A miss runs next, which pays its read, and says cache;desc="miss"; a
// request that waited for another's read of the same key says
// cache;desc="coalesced" and read nothing. A request whose session token
// says its client wrote after the entry (or the fill under way) started
// reading, within sessionClockSkew, reads for itself and says
// cache;desc="bypass, older than your last write": a client never reads a
// screen older than its own write (session.go). A nil c is next.
func cached(c *ReadCache, key func(r *http.Request) (cacheKey, bool), next http.HandlerFunc) http.HandlerFunc {
	if c == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		k, ok := key(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		var notBefore time.Time
		if wrote := clientWrote(r.Context()); !wrote.IsZero() {
			notBefore = wrote.Add(sessionClockSkew)
		}
		res, how, age := c.get(k, notBefore, func() response {
			w.Header().Set("Server-Timing", `cache;desc="miss"`)
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			return rec.response()
		})
		switch {
		case how == missed:
			return // next wrote the response itself
		case how == bypassed:
			w.Header().Set("Server-Timing", `cache;desc="bypass, older than your last write"`)
			next.ServeHTTP(w, r)
			return
		case res.status == 0 || res.status >= 500:
			// The read this request waited for ended without the page's
			// answer: it panicked, or failed for reasons of its own (its
			// client went away, its partition was throttled). That is no
			// answer for this request, which reads for itself.
			next.ServeHTTP(w, r)
			return
		case how == hit:
			w.Header().Set("Server-Timing", fmt.Sprintf(`cache;desc="hit, age %.2f s, max %.2f s"`,
				age.Seconds(), c.cfg.MaxAge.Seconds()))
		default:
			w.Header().Set("Server-Timing", `cache;desc="coalesced"`)
		}
		h := w.Header()
		for name, v := range res.header {
			h.Set(name, v)
		}
		writeBody(w, res.status, res.header["Content-Type"], res.body)
	}
}

// keptHeaders are the headers of a handler's response a hit writes again;
// the cost headers are the hit's own.
var keptHeaders = []string{"Content-Type", "Etag", "Retry-After"}

// recorder passes a response through to the client and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	header map[string]string
	body   bytes.Buffer
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
		rec.header = map[string]string{}
		for _, name := range keptHeaders {
			if v := rec.Header().Get(name); v != "" {
				rec.header[name] = v
			}
		}
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	rec.body.Write(b) // a copy: the handler's buffer is pooled
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

func (rec *recorder) response() response {
	return response{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// The keys of the cached screens. Each tag is what a change invalidates
// (Changed); the variant is the request's page parameters.

func categoriesKey(*http.Request) (cacheKey, bool) {
	return cacheKey{tag: "categories"}, true
}

// categoryPageKey names the page the parameters mean, not how they are
// spelled (?limit=010 is ?limit=10): else every spelling would be a miss,
// a query on the category's partition, and a client could bypass the
// cache at will. Parameters the handler refuses are not cached.
func categoryPageKey(r *http.Request) (cacheKey, bool) {
	sort, limit, cont, err := categoryPageParams(r)
	if err != nil {
		return cacheKey{}, false
	}
	return cacheKey{
		tag:     "category/" + chi.URLParam(r, "categoryId"),
		variant: sort + "|" + strconv.Itoa(limit) + "|" + cont,
	}, true
}

func productKey(r *http.Request) (cacheKey, bool) {
	return cacheKey{tag: "product/" + chi.URLParam(r, "productId")}, true
}

// changedDoc is what a change says about the cached screens it touches.
type changedDoc struct {
	ID         string `json:"id"`
	CategoryID string `json:"categoryId"`
}

// Changed drops the entries a changed document of container touches:
//   - products: the categories index ("categories") changes the home page
//     and every category's pages (its recount follows every product that
//     joined or left a category, whose summary delete is not on the feed);
//     a product changes its page;
//   - productsByCategory: a summary changes its category's pages.
func (c *ReadCache) Changed(container string, doc []byte) {
	var d changedDoc
	if json.Unmarshal(doc, &d) != nil {
		return
	}
	switch {
	case container == store.ProductsContainer && d.ID == domain.CategoriesID:
		c.Invalidate("categories")
		c.Invalidate("category/")
	case container == store.ProductsContainer:
		c.Invalidate("product/" + d.ID)
	case container == store.ProductsByCategoryContainer:
		c.Invalidate("category/" + d.CategoryID)
	}
}

// Follow follows the change feed of the containers the cached screens
// read (changefeed.Follow: positions of this process alone, so every
// instance drops its own entries) and hands each change to Changed, in
// the background until ctx ends. It returns once the follower is placed:
// every change written after it is seen. st should be the raw store: the
// follower's reads are no request's.
func (c *ReadCache) Follow(ctx context.Context, st store.Store) error {
	for _, name := range []string{store.ProductsContainer, store.ProductsByCategoryContainer} {
		err := changefeed.Follow(ctx, st.Container(name), c.cfg.PollEvery, func(items [][]byte) {
			for _, doc := range items {
				c.Changed(name, doc)
			}
		})
		if err != nil {
			return fmt.Errorf("cache: follow %s: %w", name, err)
		}
	}
	return nil
}
