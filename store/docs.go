package store

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

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

// MaxUpdateAttempts bounds the optimistic-concurrency retries of update:
// enough for 50 writers racing on one cart, finite so a hot document
// cannot hold a request forever.
const MaxUpdateAttempts = 100

// update is the read-modify-write of STYLE.md: read the document, apply
// fn, write it back with If-Match on the _etag just read (optimistic
// concurrency, no locks). Two callers:
//   - ifMatch names versions: the client said which version it changed;
//     if the document is at none of them it is 412 at once, no retry.
//   - ifMatch == "" or "*": the server retries its own read-modify-write
//     when a concurrent writer won the race (412), with jittered backoff;
//     with "*" a missing document is a 412.
//
// With create set, a missing document starts as create() and is written
// with Create (a concurrent creator makes it a 409, which retries too).
func update[T any](ctx context.Context, c Container, pk, id, ifMatch string, create func() T, fn func(*T) error) (T, error) {
	var zero T
	for attempt := 1; ; attempt++ {
		r, err := c.Read(ctx, pk, id)
		missing := domain.IsCode(err, domain.ENOTFOUND)
		if err != nil && !(missing && create != nil) {
			return zero, err
		}
		var v T
		if missing {
			if ifMatch != "" {
				return zero, domain.Errorf(domain.EPRECONDITION, "%s has changed: it no longer exists", id)
			}
			v = create()
		} else {
			if ifMatch != "" && !etagMatches(ifMatch, r.ETag) {
				return zero, domain.Errorf(domain.EPRECONDITION, "%s has changed since you read it (If-Match %s)", id, ifMatch)
			}
			if err := json.Unmarshal(r.Item, &v); err != nil {
				return zero, domain.Errorf(domain.EINTERNAL, "decode %s: %v", id, err)
			}
		}
		if err := fn(&v); err != nil {
			return zero, err
		}
		b, err := encode(v)
		if err != nil {
			return zero, err
		}
		var w ItemResponse
		if missing {
			w, err = c.Create(ctx, pk, b)
		} else {
			w, err = c.Replace(ctx, pk, id, b, &WriteOptions{IfMatch: r.ETag})
		}
		lost := domain.IsCode(err, domain.EPRECONDITION) || (missing && domain.IsCode(err, domain.ECONFLICT))
		if lost && serverRetries(ifMatch) && attempt < MaxUpdateAttempts {
			MeterFrom(ctx).AddRetry()
			if err := backoff(ctx, attempt); err != nil {
				return zero, err
			}
			continue
		}
		if err != nil {
			return zero, err
		}
		var out T
		if err := json.Unmarshal(w.Item, &out); err != nil {
			return zero, domain.Errorf(domain.EINTERNAL, "decode %s: %v", id, err)
		}
		return out, nil
	}
}

// backoff waits a jittered, growing delay (at most ~20 ms) before the next
// optimistic-concurrency attempt, or returns the context's error.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(min(attempt, 20))*int64(time.Millisecond)) + 1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return domain.Errorf(domain.EUNAVAILABLE, "gave up after %d concurrent updates: %v", attempt, ctx.Err())
	case <-t.C:
		return nil
	}
}
