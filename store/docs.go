package store

import (
	"context"
	"encoding/json"

	"shop/domain"
)

// The generic helpers below are the only place the repositories touch
// bytes: every typed repository reads, writes and updates through them.

// ReadDoc point-reads one document and decodes it. The _etag system
// property decodes into the document's Meta, so callers can pass it back
// as If-Match.
func ReadDoc[T any](ctx context.Context, c Container, pk, id string) (T, error) {
	var v T
	r, err := c.Read(ctx, pk, id)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(r.Item, &v); err != nil {
		return v, domain.Errorf(domain.EINTERNAL, "decode %s: %v", id, err)
	}
	return v, nil
}

// decodeItems decodes the items of a query or feed page.
func decodeItems[T any](items [][]byte) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if err := json.Unmarshal(it, &v); err != nil {
			return nil, domain.Errorf(domain.EINTERNAL, "decode item: %v", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// queryPage runs one page of q and decodes its items.
func queryPage[T any](ctx context.Context, c Container, q Query) ([]T, string, error) {
	page, err := c.Query(ctx, q)
	if err != nil {
		return nil, "", err
	}
	items, err := decodeItems[T](page.Items)
	return items, page.Continuation, err
}

func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, domain.Errorf(domain.EINTERNAL, "encode: %v", err)
	}
	return b, nil
}
