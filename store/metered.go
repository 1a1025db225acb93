package store

import (
	"context"
	"time"
)

// Metered wraps a Store so that every operation adds itself and its
// Request Units to the Meter in the caller's context (if any). Failed calls
// count too: Cosmos charges for them.
func Metered(s Store) Store { return meteredStore{s} }

type meteredStore struct{ Store }

func (s meteredStore) Container(name string) Container {
	return meteredContainer{s.Store.Container(name)}
}

type meteredContainer struct{ c Container }

func record(ctx context.Context, start time.Time, ru float64) {
	MeterFrom(ctx).Add(ru, time.Since(start).Nanoseconds())
}

func (m meteredContainer) Read(ctx context.Context, pk, id string) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.Read(ctx, pk, id)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.ReadIfNoneMatch(ctx, pk, id, etag)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) Create(ctx context.Context, pk string, item []byte) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.Create(ctx, pk, item)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *WriteOptions) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.Replace(ctx, pk, id, item, opts)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) Upsert(ctx context.Context, pk string, item []byte, opts *WriteOptions) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.Upsert(ctx, pk, item, opts)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) Patch(ctx context.Context, pk, id string, ops []PatchOp, opts *PatchOptions) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.Patch(ctx, pk, id, ops, opts)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) Delete(ctx context.Context, pk, id string, opts *WriteOptions) (ItemResponse, error) {
	start := time.Now()
	r, err := m.c.Delete(ctx, pk, id, opts)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) ExecuteBatch(ctx context.Context, pk string, ops []BatchOp) (BatchResponse, error) {
	start := time.Now()
	r, err := m.c.ExecuteBatch(ctx, pk, ops)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) Query(ctx context.Context, q Query) (QueryPage, error) {
	start := time.Now()
	r, err := m.c.Query(ctx, q)
	record(ctx, start, r.RequestCharge)
	return r, err
}

func (m meteredContainer) ReadFeedRanges(ctx context.Context) ([]FeedRange, error) {
	return m.c.ReadFeedRanges(ctx)
}

func (m meteredContainer) ReadChangeFeed(ctx context.Context, r FeedRange, continuation string, maxItems int) (ChangeFeedPage, error) {
	start := time.Now()
	p, err := m.c.ReadChangeFeed(ctx, r, continuation, maxItems)
	record(ctx, start, p.RequestCharge)
	return p, err
}
