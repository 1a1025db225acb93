package storetest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/storetest"
)

// TestRunWithADeclaredGap runs the whole contract on a target that
// reports no charges, as the vNext emulator does, with that gap declared:
// every test runs and passes but for the charge checks. (Without the
// declaration the same target fails: the zero Options hold it to them.)
func TestRunWithADeclaredGap(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return uncharged{s}
	}, storetest.Options{Lacks: map[storetest.Capability]string{storetest.Charges: "this target reports none"}})
}

// uncharged is a store whose calls report no Request Units. It keeps the
// embedded store's hooks, so that the throttle and split tests run on it.
type uncharged struct{ store.Store }

func (s uncharged) SetThroughput(ru float64) { s.Store.(storetest.Throttler).SetThroughput(ru) }

func (s uncharged) SplitPartition(ctx context.Context, container string, r store.FeedRange) ([]store.FeedRange, error) {
	return s.Store.(storetest.Splitter).SplitPartition(ctx, container, r)
}

func (s uncharged) Container(name string) store.Container {
	return unchargedContainer{s.Store.Container(name)}
}

type unchargedContainer struct{ store.Container }

func (c unchargedContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	return free(c.Container.Read(ctx, pk, id))
}

func (c unchargedContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	return free(c.Container.ReadIfNoneMatch(ctx, pk, id, etag))
}

func (c unchargedContainer) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	return free(c.Container.Create(ctx, pk, item))
}

func (c unchargedContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	return free(c.Container.Replace(ctx, pk, id, item, opts))
}

func (c unchargedContainer) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	return free(c.Container.Upsert(ctx, pk, item, opts))
}

func (c unchargedContainer) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	return free(c.Container.Patch(ctx, pk, id, ops, opts))
}

func (c unchargedContainer) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	return free(c.Container.Delete(ctx, pk, id, opts))
}

func (c unchargedContainer) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	r, err := c.Container.ExecuteBatch(ctx, pk, ops)
	r.RequestCharge = 0
	return r, err
}

func (c unchargedContainer) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	p, err := c.Container.Query(ctx, q)
	p.RequestCharge = 0
	return p, err
}

func (c unchargedContainer) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	p, err := c.Container.ReadChangeFeed(ctx, r, continuation, maxItems)
	p.RequestCharge = 0
	return p, err
}

func free(r store.ItemResponse, err error) (store.ItemResponse, error) {
	r.RequestCharge = 0
	return r, err
}
