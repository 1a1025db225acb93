package store

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
)

// MaxPatience is how many times a Patient store sends one call again
// after a throttle before it gives the throttle to its caller.
const MaxPatience = 20

// Patient wraps s so that a call the store throttled (EUNAVAILABLE with
// RetryAfter: a 429, the operation not carried out) is sent again after
// the wait the store asked for, up to MaxPatience times, as the Cosmos SDK
// retries a 429 itself, when the caller's context asks for it
// (WithPatience). Any other error, an unavailable store or a timeout (no
// RetryAfter: the operation may have been carried out), goes back at
// once, and so does every throttle of a caller that did not ask.
//
// Patience is the caller's choice, not the store's, so one set of
// repositories serves everyone (repo.New wraps its store in Patient). The
// feed workers ask: a batch that meets a throttle half way would
// otherwise be applied again from its first item, each version-guarded
// write it already made read again first; where those reads alone spend a
// partition's share of a second, no attempt got further than the one
// before and the lease never moved (docs/reliability.md, known limits).
// Waiting at the call instead keeps what the batch has done and goes on
// at the throttle's pace. A request does not ask: it answers 503 with
// Retry-After and its client decides.
func Patient(s Store) Store { return patientStore{s} }

type patientStore struct{ Store }

func (s patientStore) Container(name string) Container {
	return patientContainer{s.Store.Container(name)}
}

type patientContainer struct{ c Container }

var _ Container = patientContainer{}

type patienceKey struct{}

// WithPatience returns ctx marked so that a Patient store waits out the
// throttles of the calls made under it.
func WithPatience(ctx context.Context) context.Context {
	return context.WithValue(ctx, patienceKey{}, true)
}

// patiently runs call, again after each throttle's wait if ctx asks for
// patience.
func patiently[T any](ctx context.Context, call func() (T, error)) (T, error) {
	if ctx.Value(patienceKey{}) == nil {
		return call()
	}
	for attempt := 1; ; attempt++ {
		v, err := call()
		e, ok := errors.AsType[*domain.Error](err)
		if !ok || e.Code != domain.EUNAVAILABLE || e.RetryAfter <= 0 || attempt > MaxPatience {
			return v, err
		}
		if Sleep(ctx, e.RetryAfter) != nil {
			return v, err
		}
	}
}

func (p patientContainer) Read(ctx context.Context, pk, id string) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.Read(ctx, pk, id) })
}

func (p patientContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.ReadIfNoneMatch(ctx, pk, id, etag) })
}

func (p patientContainer) Create(ctx context.Context, pk string, item []byte) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.Create(ctx, pk, item) })
}

func (p patientContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *WriteOptions) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.Replace(ctx, pk, id, item, opts) })
}

func (p patientContainer) Upsert(ctx context.Context, pk string, item []byte, opts *WriteOptions) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.Upsert(ctx, pk, item, opts) })
}

func (p patientContainer) Patch(ctx context.Context, pk, id string, ops []PatchOp, opts *PatchOptions) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.Patch(ctx, pk, id, ops, opts) })
}

func (p patientContainer) Delete(ctx context.Context, pk, id string, opts *WriteOptions) (ItemResponse, error) {
	return patiently(ctx, func() (ItemResponse, error) { return p.c.Delete(ctx, pk, id, opts) })
}

func (p patientContainer) ExecuteBatch(ctx context.Context, pk string, ops []BatchOp) (BatchResponse, error) {
	return patiently(ctx, func() (BatchResponse, error) { return p.c.ExecuteBatch(ctx, pk, ops) })
}

func (p patientContainer) Query(ctx context.Context, q Query) (QueryPage, error) {
	return patiently(ctx, func() (QueryPage, error) { return p.c.Query(ctx, q) })
}

func (p patientContainer) ReadFeedRanges(ctx context.Context) ([]FeedRange, error) {
	return patiently(ctx, func() ([]FeedRange, error) { return p.c.ReadFeedRanges(ctx) })
}

func (p patientContainer) ReadChangeFeed(ctx context.Context, r FeedRange, continuation string, maxItems int) (ChangeFeedPage, error) {
	return patiently(ctx, func() (ChangeFeedPage, error) { return p.c.ReadChangeFeed(ctx, r, continuation, maxItems) })
}

// Sleep waits d or until ctx ends, and then returns ctx's error: the one
// pause of every retry and pacing loop.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
