package repo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// This file is the one read-modify-write of the shop. Every write that
// depends on what it read (a cart line, a checkout's customerSummary, a
// guarded copy) goes through Retry, so there is one retry policy and one
// backoff: optimistic concurrency with If-Match, no locks.

// MaxUpdateAttempts bounds the optimistic-concurrency attempts of one
// write: enough for 50 writers racing on one cart, finite so a hot
// document cannot hold a request forever.
const MaxUpdateAttempts = 100

// lostRace marks an attempt that lost to a concurrent writer: its If-Match
// no longer matched (412), or the document it meant to create appeared
// (409). Only the attempt knows which of its 412s and 409s are races and
// which are answers, so it says so with Lost.
type lostRace struct{ err error }

func (e *lostRace) Error() string { return e.err.Error() }
func (e *lostRace) Unwrap() error { return e.err }

// Lost marks err as a lost race: Retry runs the attempt again.
func Lost(err error) error { return &lostRace{err} }

// Retry runs attempt until it returns anything but a lost race (see Lost),
// waiting a jittered, growing delay between attempts. An attempt re-reads
// what it depends on each time, so a retry decides on the current
// versions. After MaxUpdateAttempts lost races the write gives up with
// ECONFLICT: the document is too contended to change now.
func Retry(ctx context.Context, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		lr, ok := errors.AsType[*lostRace](err)
		if !ok {
			return err
		}
		if n >= MaxUpdateAttempts {
			return domain.Errorf(domain.ECONFLICT, "gave up after %d concurrent updates; try again (%s)", n, domain.ErrorMessage(lr.err))
		}
		store.MeterFrom(ctx).AddRetry()
		if err := backoff(ctx, n); err != nil {
			return err
		}
	}
}

// backoff waits a jittered, growing delay (at most ~20 ms) before the next
// attempt, or returns the context's error.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(min(attempt, 20))*int64(time.Millisecond)) + 1)
	if err := store.Sleep(ctx, d); err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "gave up after %d concurrent updates: %v", attempt, err)
	}
	return nil
}

// MaxPersistAttempts bounds Persist: the tries of a write that must finish
// while the store is throttled or unavailable.
const MaxPersistAttempts = 5

// Persist runs write until it returns anything but EUNAVAILABLE, at most
// MaxPersistAttempts times, waiting between tries as long as the store
// asked (RetryAfter, Cosmos's x-ms-retry-after-ms) or a doubling delay
// from 20 ms. It is for the writes that must finish once begun, such as
// settling the cart of an order already placed; a request's own writes
// answer 503 with Retry-After instead and leave the retry to the client.
func Persist(ctx context.Context, write func() error) error {
	for n := 1; ; n++ {
		err := write()
		if !domain.IsCode(err, domain.EUNAVAILABLE) || n >= MaxPersistAttempts {
			return err
		}
		d := 10 * time.Millisecond << n
		if e, ok := errors.AsType[*domain.Error](err); ok && e.RetryAfter > d {
			d = e.RetryAfter
		}
		if err := store.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// ErrUnchanged, returned by an update's function, skips the write: the
// document already says what the caller would write. Update then returns
// the document as read, with ErrUnchanged, so a caller can tell.
var ErrUnchanged = errors.New("unchanged")

// Precondition is the client's If-Match on an update, as sent (RFC 9110
// §13.1.1; see etagMatches):
//   - "": none; the server retries its own lost races.
//   - "*" (AnyETag): the document must exist (412 if not); then as "".
//   - entity tags: the document must be at one of those versions, or it
//     is 412 at once, never retried: the client decides again.
type Precondition = string

// Updated says what an update did.
type Updated struct {
	// Created: there was no document, so it was created.
	Created bool
}

// rmw says how update starts and what it may assume.
type rmw[T any] struct {
	// what names the document in a refusal the client reads ("your
	// cart", "product p-0147"); "" names it by its id.
	what    string
	ifMatch Precondition
	// create, when set, makes a missing document: it is then written with
	// Create, and a concurrent creator is a lost race (409).
	create func() T
	// from, when set, is a copy of the document the caller has already
	// read (with its _etag fromETag): the first attempt starts from it
	// instead of reading again.
	from     *T
	fromETag string
}

// name is what a refusal calls the document.
func (o rmw[T]) name(id string) string {
	if o.what != "" {
		return o.what
	}
	return id
}

// update is the read-modify-write of one document: read it, apply fn, and
// write the result with If-Match on the _etag read. A lost race reads the
// current version and applies fn again (Retry).
func update[T any](ctx context.Context, c store.Container, pk, id string, o rmw[T], fn func(*T) error) (T, Updated, error) {
	var out T
	var done Updated
	err := Retry(ctx, func() error {
		v, etag, err := readFor(ctx, c, pk, id, &o)
		missing := domain.IsCode(err, domain.ENOTFOUND)
		switch {
		case missing && o.ifMatch != "":
			return domain.Errorf(domain.EPRECONDITION, "%s does not exist (If-Match %s)", o.name(id), o.ifMatch)
		case missing && o.create != nil:
			v = o.create()
		case err != nil:
			return err
		case o.ifMatch != "" && !etagMatches(o.ifMatch, etag):
			return domain.Errorf(domain.EPRECONDITION, "%s was changed by someone else after you read it: read it again, then retry (If-Match %s)", o.name(id), o.ifMatch)
		}
		if !missing {
			// A newer build wrote it: whatever fn makes of it (a whole
			// copy put over it, too) would downgrade it.
			if err := domain.Writable(v); err != nil {
				return err
			}
		}
		if err := fn(&v); err != nil {
			out = v
			return err
		}
		b, err := encode(v)
		if err != nil {
			return err
		}
		var w store.ItemResponse
		if missing {
			w, err = c.Create(ctx, pk, b)
		} else {
			w, err = c.Replace(ctx, pk, id, b, &store.WriteOptions{IfMatch: etag})
		}
		lost := domain.IsCode(err, domain.EPRECONDITION) || (missing && domain.IsCode(err, domain.ECONFLICT))
		switch {
		case lost && serverRetries(o.ifMatch):
			return Lost(err)
		case err != nil:
			return err
		}
		done.Created = missing
		out, err = Decode[T](w.Item)
		return err
	})
	return out, done, err
}

// readFor returns the document an attempt starts from: o.from the first
// time (then forgotten), a point read after that.
func readFor[T any](ctx context.Context, c store.Container, pk, id string, o *rmw[T]) (T, string, error) {
	if o.from != nil {
		v, etag := *o.from, o.fromETag
		o.from = nil
		return v, etag, nil
	}
	r, err := c.Read(ctx, pk, id)
	if err != nil {
		var zero T
		return zero, "", err
	}
	v, err := Decode[T](r.Item)
	if err != nil {
		return v, "", fmt.Errorf("%s: %w", id, err)
	}
	return v, r.ETag, nil
}

// PutResult says what a guarded put did.
type PutResult struct {
	// Wrote: the document was created or replaced.
	Wrote bool
	// Created: there was no document at (pk, id) before.
	Created bool
}

// putGuarded writes doc at (pk, id) only if the stored copy was made from
// an older source version (the version guard of every copy: an older
// change never overwrites a newer one). It is update with the guard as
// its function, so a replayed change writes nothing and costs one read.
func putGuarded[T any](ctx context.Context, c store.Container, pk, id string, version func(T) int64, doc T) (PutResult, error) {
	var zero T
	_, done, err := update(ctx, c, pk, id, rmw[T]{create: func() T { return zero }}, func(cur *T) error {
		if version(*cur) >= version(doc) {
			return ErrUnchanged
		}
		*cur = doc
		return nil
	})
	if errors.Is(err, ErrUnchanged) {
		return PutResult{}, nil
	}
	if err != nil {
		return PutResult{}, err
	}
	return PutResult{Wrote: true, Created: done.Created}, nil
}
