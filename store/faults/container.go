package faults

import (
	"cmp"
	"context"

	"github.com/reference-shop/shop/store"
)

// container injects the store's faults into one container's calls. A
// faulted call never reaches the wrapped container: nothing is written.
type container struct {
	f    *Store
	name string
	c    store.Container
}

var _ store.Container = (*container)(nil)

func (c *container) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpRead, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.Read(ctx, pk, id)
}

func (c *container) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpRead, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.ReadIfNoneMatch(ctx, pk, id, etag)
}

func (c *container) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpCreate, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.Create(ctx, pk, item)
}

func (c *container) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpReplace, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.Replace(ctx, pk, id, item, opts)
}

func (c *container) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpUpsert, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.Upsert(ctx, pk, item, opts)
}

func (c *container) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpPatch, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.Patch(ctx, pk, id, ops, opts)
}

func (c *container) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := c.f.inject(ctx, OpDelete, c.name); err != nil {
		return store.ItemResponse{}, err
	}
	return c.c.Delete(ctx, pk, id, opts)
}

func (c *container) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	if err := c.f.inject(ctx, OpBatch, c.name); err != nil {
		return store.BatchResponse{}, err
	}
	return c.c.ExecuteBatch(ctx, pk, ops)
}

func (c *container) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	if err := c.f.inject(ctx, OpQuery, c.name); err != nil {
		return store.QueryPage{}, err
	}
	if n := c.f.cfg.ShortPages; n > 0 && q.PartitionKey == "" && c.f.on.Load() {
		// The page size is not part of a continuation's query, so every
		// page may be asked for with the shorter one.
		if limit := cmp.Or(q.Limit, store.DefaultPageSize); limit > n {
			q.Limit = n
		}
	}
	return c.c.Query(ctx, q)
}

func (c *container) ReadFeedRanges(ctx context.Context) ([]store.FeedRange, error) {
	if err := c.f.inject(ctx, OpReadFeedRanges, c.name); err != nil {
		return nil, err
	}
	return c.c.ReadFeedRanges(ctx)
}

func (c *container) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	if err := c.f.inject(ctx, OpReadChangeFeed, c.name); err != nil {
		return store.ChangeFeedPage{}, err
	}
	return c.c.ReadChangeFeed(ctx, r, continuation, maxItems)
}
