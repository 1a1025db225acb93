package repo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The generic helpers below are the only place the repositories touch
// bytes: every typed repository reads, writes and updates through them,
// and so do the change-feed processor's own documents
// (feedworkers/changefeed/docs.go).

// Decode is the one decoding of a stored document, and so the read path
// of schema versioning: a document of an older schemaVersion comes out
// upgraded in memory (domain.Upgrade), and is stored so the next time a
// write changes it. A document that does not decode is EINTERNAL: the
// shop wrote it, so it is our bug or corrupt data, never the caller's
// input.
func Decode[T any](item []byte) (T, error) {
	var v T
	if err := json.Unmarshal(item, &v); err != nil {
		return v, domain.Errorf(domain.EINTERNAL, "decode: %v", err)
	}
	domain.Upgrade(&v)
	return v, nil
}

// ReadDoc point-reads one document and decodes it. The _etag system
// property decodes into the document's Meta, so callers can pass it back
// as If-Match.
func ReadDoc[T any](ctx context.Context, c store.Container, pk, id string) (T, error) {
	r, err := c.Read(ctx, pk, id)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := Decode[T](r.Item)
	if err != nil {
		return v, fmt.Errorf("%s: %w", id, err)
	}
	return v, nil
}

// CreateDoc stores v as a new document (ECONFLICT if its id is taken in
// pk) and returns it as stored, with its _etag.
func CreateDoc[T any](ctx context.Context, c store.Container, pk string, v T) (T, error) {
	return writeDoc(v, func(b []byte) (store.ItemResponse, error) { return c.Create(ctx, pk, b) })
}

// ReplaceDoc overwrites the document id with v (ENOTFOUND if missing,
// EPRECONDITION if opts.IfMatch is set and stale) and returns it as
// stored.
func ReplaceDoc[T any](ctx context.Context, c store.Container, pk, id string, v T, opts *store.WriteOptions) (T, error) {
	return writeDoc(v, func(b []byte) (store.ItemResponse, error) { return c.Replace(ctx, pk, id, b, opts) })
}

// UpsertDoc creates or replaces the document v and returns it as stored;
// opts.IfMatch guards only the replace (see Container.Upsert).
func UpsertDoc[T any](ctx context.Context, c store.Container, pk string, v T, opts *store.WriteOptions) (T, error) {
	return writeDoc(v, func(b []byte) (store.ItemResponse, error) { return c.Upsert(ctx, pk, b, opts) })
}

func writeDoc[T any](v T, write func([]byte) (store.ItemResponse, error)) (T, error) {
	var zero T
	b, err := encode(v)
	if err != nil {
		return zero, err
	}
	w, err := write(b)
	if err != nil {
		return zero, err
	}
	return Decode[T](w.Item)
}

// decodeItems decodes the items of a query or feed page.
func decodeItems[T any](items [][]byte) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		v, err := Decode[T](it)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Page is one page of a query's documents as the store returned them,
// not yet decoded, and the continuation of the next page ("" on the
// last). A screen that keeps what it rendered of each document's bytes
// (api/renders.go) decodes only the documents it has not seen; every
// other caller calls Decode.
type Page[T any] struct {
	Items [][]byte
	Next  string
}

// Decode returns the page's documents.
func (p Page[T]) Decode() ([]T, error) { return decodeItems[T](p.Items) }

// rawPage runs one page of q and leaves its items as they are.
func rawPage[T any](ctx context.Context, c store.Container, q store.Query) (Page[T], error) {
	page, err := c.Query(ctx, q)
	if err != nil {
		return Page[T]{}, err
	}
	return Page[T]{Items: page.Items, Next: page.Continuation}, nil
}

// queryPage runs one page of q and decodes its items.
func queryPage[T any](ctx context.Context, c store.Container, q store.Query) ([]T, string, error) {
	page, err := c.Query(ctx, q)
	if err != nil {
		return nil, "", err
	}
	items, err := decodeItems[T](page.Items)
	return items, page.Continuation, err
}

// encode is the one encoding of a document the shop writes, and so the
// write path of schema versioning: a document a newer build wrote is
// never written back by this one (domain.Writable).
func encode(v any) ([]byte, error) {
	if err := domain.Writable(v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, domain.Errorf(domain.EINTERNAL, "encode: %v", err)
	}
	return b, nil
}
