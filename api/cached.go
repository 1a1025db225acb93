package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/reference-shop/shop/api/readcache"
)

// ReadCache is what the cached screens ask of a read cache: readcache.Cache,
// which cmd/shop builds, keeps fresh from the change feed and hands over
// in Deps.Cache.
type ReadCache interface {
	// Get returns k's response: an entry younger than MaxAge (a hit, with
	// its age), the response of another request's read of k under way
	// (coalesced), or fill's (a miss). An entry or a read under way that
	// started before notBefore is no answer (bypassed): the caller reads
	// for itself.
	Get(k readcache.Key, notBefore time.Time, fill func() readcache.Response) (readcache.Response, readcache.Lookup, time.Duration)
	// MaxAge is the oldest an entry is served.
	MaxAge() time.Duration
}

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
func cached(c ReadCache, key func(r *http.Request) (readcache.Key, bool), next http.HandlerFunc) http.HandlerFunc {
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
		res, how, age := c.Get(k, notBefore, func() readcache.Response {
			w.Header().Set("Server-Timing", `cache;desc="miss"`)
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			return rec.response()
		})
		switch {
		case how == readcache.Missed:
			return // next wrote the response itself
		case how == readcache.Bypassed:
			w.Header().Set("Server-Timing", `cache;desc="bypass, older than your last write"`)
			next.ServeHTTP(w, r)
			return
		case res.Status == 0 || res.Status >= 500:
			// The read this request waited for ended without the page's
			// answer: it panicked, or failed for reasons of its own (its
			// client went away, its partition was throttled). That is no
			// answer for this request, which reads for itself.
			next.ServeHTTP(w, r)
			return
		case how == readcache.Hit:
			w.Header().Set("Server-Timing", fmt.Sprintf(`cache;desc="hit, age %.2f s, max %.2f s"`,
				age.Seconds(), c.MaxAge().Seconds()))
		default:
			w.Header().Set("Server-Timing", `cache;desc="coalesced"`)
		}
		h := w.Header()
		for name, v := range res.Header {
			h.Set(name, v)
		}
		writeBody(w, res.Status, res.Header["Content-Type"], res.Body)
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

func (rec *recorder) response() readcache.Response {
	return readcache.Response{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
}

// The keys of the cached screens. Each tag is what a change invalidates
// (readcache.Cache.Changed); the variant is the request's page parameters.

func categoriesKey(*http.Request) (readcache.Key, bool) {
	return readcache.Key{Tag: "categories"}, true
}

// categoryPageKey names the page the parameters mean, not how they are
// spelled (?limit=010 is ?limit=10): else every spelling would be a miss,
// a query on the category's partition, and a client could bypass the
// cache at will. Parameters the handler refuses are not cached.
func categoryPageKey(r *http.Request) (readcache.Key, bool) {
	sort, facets, limit, cont, err := categoryPageParams(r)
	if err != nil {
		return readcache.Key{}, false
	}
	return readcache.Key{
		Tag:     "category/" + chi.URLParam(r, "categoryId"),
		Variant: sort + "|" + strconv.Itoa(limit) + "|" + cont + "|" + strings.Join(facets, ","),
	}, true
}

func productKey(r *http.Request) (readcache.Key, bool) {
	return readcache.Key{Tag: "product/" + chi.URLParam(r, "productId")}, true
}
