package scale

import (
	"context"
	"maps"
	"sync"

	"github.com/reference-shop/shop/store"
)

// tally wraps a store and adds up, per container, the store operations
// and Request Units of every call, so that one request's cost can be
// split by the container it lands in (the provisioned throughput and the
// physical partitions are per container). Change-feed reads are left out:
// they are the processors' polling, paid per poll and not per request.
type tally struct {
	store.Store
	mu   sync.Mutex
	cost map[string]containerCost
}

// containerCost is what the calls on one container cost.
type containerCost struct {
	Ops float64 `json:"ops"`
	RU  float64 `json:"ru"`
}

func newTally(s store.Store) *tally {
	return &tally{Store: s, cost: map[string]containerCost{}}
}

func (t *tally) Container(name string) store.Container {
	return tallied{Container: t.Store.Container(name), name: name, t: t}
}

func (t *tally) add(name string, ru float64) {
	t.mu.Lock()
	c := t.cost[name]
	c.Ops++
	c.RU += ru
	t.cost[name] = c
	t.mu.Unlock()
}

// snapshot returns the totals so far.
func (t *tally) snapshot() map[string]containerCost {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.cost)
}

// since is what was spent between two snapshots, per container.
func since(before, after map[string]containerCost) map[string]containerCost {
	d := map[string]containerCost{}
	for name, a := range after {
		b := before[name]
		if a.Ops != b.Ops {
			d[name] = containerCost{Ops: a.Ops - b.Ops, RU: a.RU - b.RU}
		}
	}
	return d
}

// tallied is one container of the tally; the methods that cost Request
// Units report them (failed calls too: Cosmos charges for them).
type tallied struct {
	store.Container
	name string
	t    *tally
}

func (c tallied) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	r, err := c.Container.Read(ctx, pk, id)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	r, err := c.Container.ReadIfNoneMatch(ctx, pk, id, etag)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	r, err := c.Container.Create(ctx, pk, item)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Replace(ctx, pk, id, item, opts)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Upsert(ctx, pk, item, opts)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	r, err := c.Container.Patch(ctx, pk, id, ops, opts)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Delete(ctx, pk, id, opts)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	r, err := c.Container.ExecuteBatch(ctx, pk, ops)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}

func (c tallied) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	r, err := c.Container.Query(ctx, q)
	c.t.add(c.name, r.RequestCharge)
	return r, err
}
