package api

import (
	"bytes"
	"hash/maphash"
	"net/http"

	"github.com/reference-shop/shop/api/lru"
	"github.com/reference-shop/shop/store/repo"
)

// renders keeps what the screens rendered of each document they showed,
// by the document's bytes: a view is a function of the document alone, so
// the same bytes render the same JSON, and a screen whose query returns
// documents it has shown before writes their kept renders instead of
// decoding each document and encoding its view again (on a category page
// of 20 products, nine tenths of the handler's CPU). The store read is
// still made, and charged, on every request: what a page lists, and in
// what order, is the store's answer of the moment; only the JSON work is
// saved. A document written again has other bytes (its _etag and _ts at
// least) and is rendered afresh.
//
// An entry is found by a hash of the view's name and the bytes (hash/
// maphash, seeded per process, so nobody can aim a collision at it) and
// holds the bytes themselves, compared in full before its render is used:
// a collision costs a render, never a wrong answer. At most
// rendersEntries renders and rendersBytes of documents and renders,
// the least recently used out first (lru.Cache). Safe for concurrent use.
type renders struct {
	seed maphash.Seed
	lru  *lru.Cache[renderKey, rendered]
}

type renderKey struct {
	view string
	sum  uint64
}

// rendered is one document's bytes and its view's JSON, as encodeTo
// writes it without the final newline, or refused: the screen does not
// show such a document (renderShown).
type rendered struct {
	doc, body []byte
	refused   bool
}

// Bounds of the screens' renders: a few thousand documents of a busy shop.
const (
	rendersEntries = 16384
	rendersBytes   = 32 << 20
)

func newRenders(maxEntries, maxBytes int) *renders {
	return &renders{
		seed: maphash.MakeSeed(),
		lru:  lru.New[renderKey](maxEntries, maxBytes, func(r rendered) int { return len(r.doc) + len(r.body) }, nil),
	}
}

// renderDoc returns the JSON of view (named name) of the document doc, a
// T, kept or made. The caller must not change the result.
func renderDoc[T, V any](c *renders, name string, doc []byte, view func(T) V) ([]byte, error) {
	body, _, err := renderShown(c, name, doc, nil, view)
	return body, err
}

// renderShown is renderDoc for a screen that shows only the documents
// shows accepts (nil: all): ok is false, and body nil, for another, and
// that answer is kept too.
func renderShown[T, V any](c *renders, name string, doc []byte, shows func(T) bool, view func(T) V) (body []byte, ok bool, err error) {
	k := renderKey{name, maphash.Bytes(c.seed, doc)}
	if r, found := c.lru.Get(k); found && bytes.Equal(r.doc, doc) {
		return r.body, !r.refused, nil
	}
	v, err := repo.Decode[T](doc)
	if err != nil {
		return nil, false, err
	}
	if shows != nil && !shows(v) {
		c.lru.Put(k, rendered{doc: doc, refused: true})
		return nil, false, nil
	}
	if body, err = render(view(v)); err != nil {
		return nil, false, err
	}
	body = bytes.TrimSuffix(body, []byte("\n"))
	c.lru.Put(k, rendered{doc: doc, body: body})
	return body, true, nil
}

// writeDoc writes the view of the document doc as encode(w, 200, view(the
// decoded doc)) would, rendered by renderDoc.
func writeDoc[T, V any](w http.ResponseWriter, r *http.Request, c *renders, name string, doc []byte, view func(T) V) {
	body, err := renderDoc(c, name, doc, view)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeRendered(w, body)
}

// writeRendered writes a rendered body, the newline encode ends it with
// added.
func writeRendered(w http.ResponseWriter, body []byte) {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buffers.Put(buf)
		}
	}()
	buf.Write(body)
	buf.WriteByte('\n')
	writeBody(w, http.StatusOK, "application/json", buf.Bytes())
}

// writePage writes p as encode(w, 200, pageOf(views, p.Next)) would, each
// item's view rendered by renderDoc: the same bytes, byte for byte
// (TestRenderedPagesAreTheEncodedPages).
func writePage[T, V any](w http.ResponseWriter, r *http.Request, c *renders, name string, p repo.Page[T], view func(T) V) {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buffers.Put(buf)
		}
	}()
	buf.WriteString(`{"items":[`)
	for i, doc := range p.Items {
		body, err := renderDoc(c, name, doc, view)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(body)
	}
	buf.WriteString(`],"continuation":`)
	if p.Next == "" {
		buf.WriteString("null")
	} else if err := encodeTo(buf, p.Next); err != nil {
		writeEncodeFailure(w)
		return
	} else {
		buf.Truncate(buf.Len() - 1) // encodeTo's newline
	}
	buf.WriteString("}\n")
	writeBody(w, http.StatusOK, "application/json", buf.Bytes())
}
