package repo

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Inventory is the repository of `inventory` (pk /productId): each
// product's stock document and the reservations of the checkouts that
// took units of it, in the product's own logical partition, so that a
// take and its reservation commit in ONE transactional batch.
type Inventory struct{ c store.Container }

// NewInventory returns the inventory repository over s.
func NewInventory(s store.Store) *Inventory { return &Inventory{s.Container(store.InventoryContainer)} }

// ErrUntracked: the product has no stock document. Products created
// before the shop tracked stock sell without a limit; every product
// created since has one (0 units unless the admin says otherwise),
// written just after the product, whose availability status marks it
// tracked: a checkout refuses such a product without stock as short
// (writes.checkStock) rather than selling it without a limit.
var ErrUntracked = domain.Errorf(domain.ENOTFOUND, "the product's stock is not tracked")

// ReleasedTTL is how long a released reservation is kept (it answers a
// late retry of its order) before it expires.
const ReleasedTTL = 7 * 24 * 3600

// ErrShort: the stock had fewer units than the checkout asked for.
var ErrShort = domain.Errorf(domain.EPRECONDITION, "not enough in stock")

// ErrReleased: the order's reservation of the product was released
// already, so its units cannot be taken again.
var ErrReleased = domain.Errorf(domain.ECONFLICT, "the order's units of this product were given back")

// Stock returns the stock of the variant sku of the product ("" for a
// product without variants): a point read. ErrUntracked if it has none.
func (r *Inventory) Stock(ctx context.Context, productID, sku string) (domain.Stock, error) {
	s, err := ReadDoc[domain.Stock](ctx, r.c, productID, domain.StockIDOf(sku))
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.Stock{}, ErrUntracked
	}
	return s, err
}

// SetStock sets the units available (the admin's count), creating the
// stock document on first use: the stock's read-modify-write, so a count
// and concurrent takes never overwrite each other (ifMatch as the client
// sent it). ECONFLICT for a stock split into shards, and for one merged
// back whose units are still on their way home (merging).
func (r *Inventory) SetStock(ctx context.Context, productID, sku string, n int64, ifMatch Precondition, now time.Time) (domain.Stock, error) {
	s, _, err := update(ctx, r.c, productID, domain.StockIDOf(sku), rmw[domain.Stock]{
		what:    "the stock of " + domain.LineLabel(productID, sku),
		ifMatch: ifMatch,
		create:  func() domain.Stock { return domain.NewStock(productID, sku, 0, now) },
	}, func(s *domain.Stock) error {
		if s.Active() > 1 {
			return domain.Errorf(domain.ECONFLICT, "the stock of %s is split into %d shards: merge it into one (PUT its stock/shards with {\"shards\": 1}) before counting it", domain.LineLabel(productID, sku), s.Active())
		}
		if s.Made() > 1 {
			if err := r.merging(ctx, productID, sku); err != nil {
				return err
			}
		}
		s.Available = n
		s.Version++
		s.LastUpdated = now.UTC()
		return nil
	})
	return s, err
}

// merging is ECONFLICT while the stock, merged back into one shard
// (SetShards), still has units in a retired shard or in flight between
// shards: a merge's transfers, or the inventory feed's drain, are moving
// them home, and a count set on shard 0 now would have them come on top
// of it (units the admin did not count, sold all the same). Once every
// further shard reads empty, with nothing in flight, only units given
// back after the count (a late release) can reach them, as they reach a
// stock never split. SetStock asks it of a stock ever split: one point
// read per shard.
func (r *Inventory) merging(ctx context.Context, productID, sku string) error {
	all, err := r.Shards(ctx, productID, sku)
	if err != nil {
		return err
	}
	for k, s := range all {
		if s.Sending != 0 || k > 0 && s.Available != 0 {
			return domain.Errorf(domain.ECONFLICT, "the stock of %s is still being merged into one shard (units on their way home): count it again in a moment", domain.LineLabel(productID, sku))
		}
	}
	return nil
}

// CreateStock creates the stock document of a new product.
func (r *Inventory) CreateStock(ctx context.Context, s domain.Stock) (domain.Stock, error) {
	return CreateDoc(ctx, r.c, s.ProductID, s)
}

// Reserve takes res.Quantity units of the variant res.SKU of
// res.ProductID for its order: ONE transactional batch in the partition
// of the shard it takes from, the create of the reservation and a patch
// of the shard's stock (available −q, version +1) under the condition
// available >= q. One conditional write, no read-modify-write loop: of
// two checkouts racing for the last unit one batch commits, the other's
// condition fails.
//
// shards is the order line's OrderLine.StockShards: the take starts on
// domain.StartShard of it (the home document for a stock never split).
// Short there, it reads every shard and moves on to one with enough,
// leaving a marker where it was short (domain/shards.go); if none has
// enough but together they do, it gathers the units where it stands
// (roomFor). A line whose order saw the stock unsplit (shards <= 1)
// never moves on, it only gathers: so no marker is ever in its way, and
// its commit needs no read (Commit). It answers ErrShort when the shards
// together had fewer than res.Quantity, or when the units gathered were
// taken meanwhile; ErrUntracked when the product has no stock. A
// reservation that exists already (a retry of the same order, or a
// second worker) takes nothing again: held or committed it is the take,
// moved it is followed, released it is ErrReleased (the order's units
// were given back, or refused for good before this take: Release).
func (r *Inventory) Reserve(ctx context.Context, res domain.Reservation, shards int) error {
	product := res.ProductID
	cur := domain.StartShard(res.OrderID, product, res.SKU, shards)
	visited := map[int]bool{}
	gathered, delivered := false, false
	for range domain.MaxStockShards + 2 {
		visited[cur] = true
		prior, err := r.reserveAt(ctx, res.At(cur))
		switch {
		case prior != nil:
			next, err := follow(*prior)
			if err != nil || next < 0 {
				return err
			}
			cur = next
			continue
		case err == nil:
			return nil
		case errors.Is(err, ErrUntracked) && cur == 0:
			return err
		case !errors.Is(err, ErrShort) && !errors.Is(err, ErrUntracked):
			return err
		}
		next, all, err := r.roomFor(ctx, product, res.SKU, res.Quantity, cur, visited, shards > 1, !gathered, res.CreatedAt)
		if errors.Is(err, ErrShort) && !delivered {
			// Units in flight between shards may serve it: deliver them
			// (a mover that died leaves them to the feed, seconds away),
			// then take again here, once.
			delivered = true
			n, err := r.deliverInFlight(ctx, all, res.CreatedAt)
			if err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			return ErrShort
		}
		if err != nil {
			return err
		}
		if next == cur {
			gathered = true // units moved here for it: take again, once
			continue
		}
		marker := res.At(cur).Moved(next, res.CreatedAt)
		if _, err := CreateDoc(ctx, r.c, marker.ProductID, marker); domain.IsCode(err, domain.ECONFLICT) {
			// Another attempt of this take got here first: go its way.
			prior, err := ReadDoc[domain.Reservation](ctx, r.c, marker.ProductID, marker.ID)
			if err != nil {
				return err
			}
			if next, err = follow(prior); err != nil || next < 0 {
				return err
			}
		} else if err != nil {
			return err
		}
		cur = next
	}
	return ErrShort // a chain longer than the shards: cannot happen
}

// reserveAt is the take's batch on the shard res is placed on
// (Reservation.At). A reservation there already is answered as prior.
func (r *Inventory) reserveAt(ctx context.Context, res domain.Reservation) (prior *domain.Reservation, err error) {
	doc, err := encode(res)
	if err != nil {
		return nil, err
	}
	out, err := r.c.ExecuteBatch(ctx, res.ProductID, []store.BatchOp{
		{Kind: store.BatchCreate, Item: doc},
		{Kind: store.BatchPatch, ID: domain.StockIDOf(res.SKU), Patch: stockChange(-res.Quantity, res.CreatedAt),
			Condition: store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: res.Quantity}}},
	})
	switch failed := firstFailed(out); {
	case err == nil:
		return nil, nil
	case failed == 0 && domain.IsCode(err, domain.ECONFLICT):
		p, err := ReadDoc[domain.Reservation](ctx, r.c, res.ProductID, res.ID)
		if err != nil {
			return nil, err
		}
		return &p, nil
	case failed == 1 && domain.IsCode(err, domain.EPRECONDITION):
		return nil, ErrShort
	case failed == 1 && domain.IsCode(err, domain.ENOTFOUND):
		return nil, ErrUntracked
	}
	return nil, err
}

// follow reads a reservation found where a take or a release looked:
// the shard the take went on to (moved), or −1 with the answer: nil for a
// take that stands (held, committed), ErrReleased for one given back.
func follow(r domain.Reservation) (int, error) {
	switch {
	case r.State == domain.ReservationMoved && r.MovedTo != nil:
		return *r.MovedTo, nil
	case r.State == domain.ReservationReleased:
		return -1, ErrReleased
	}
	return -1, nil
}

// Release puts the units of the order's reservation of the variant sku
// of productID back in the shard they came from, exactly once (shards as
// Reserve: the chain of the take is followed from its start). At the
// end of the chain, ONE batch of a patch of the reservation (state
// released) under the condition that it is not released yet, and a patch
// of that shard's stock (available +q). A reservation already released
// is nothing to do. One never made is created released, with nothing to
// give back: a worker still taking the order's units (a checkout that
// lost its race to the sweeper) then finds its take refused (Reserve:
// ErrReleased), so no unit is ever held for an order that ended.
func (r *Inventory) Release(ctx context.Context, productID, sku, orderID string, shards int, now time.Time) error {
	return Retry(ctx, func() error {
		cur := domain.StartShard(orderID, productID, sku, shards)
		for range domain.MaxStockShards + 1 {
			key := domain.ShardKey(productID, cur)
			res, err := ReadDoc[domain.Reservation](ctx, r.c, key, domain.ReservationID(orderID, sku))
			switch {
			case domain.IsCode(err, domain.ENOTFOUND):
				ttl := ReleasedTTL
				tomb := domain.Reservation{
					Meta:      domain.Meta{ID: domain.ReservationID(orderID, sku), Type: domain.TypeReservation, SchemaVersion: domain.SchemaVersion, TTL: &ttl},
					ProductID: key, SKU: sku, OrderID: orderID, State: domain.ReservationReleased, CreatedAt: now.UTC(), Shard: cur,
				}
				_, err := CreateDoc(ctx, r.c, key, tomb)
				if domain.IsCode(err, domain.ECONFLICT) {
					return Lost(err) // a take went in first: release it
				}
				return err
			case err != nil:
				return err
			case res.State == domain.ReservationReleased:
				return nil
			case res.State == domain.ReservationMoved && res.MovedTo != nil:
				cur = *res.MovedTo
				continue
			}
			_, err = r.c.ExecuteBatch(ctx, key, []store.BatchOp{
				{Kind: store.BatchPatch, ID: res.ID, Patch: []store.PatchOp{
					{Op: store.PatchSet, Path: "/state", Value: domain.ReservationReleased},
					{Op: store.PatchSet, Path: "/ttl", Value: ReleasedTTL},
				},
					Condition: store.Condition{{Path: "state", Op: store.OpNotEqual, Value: domain.ReservationReleased}}},
				{Kind: store.BatchPatch, ID: domain.StockIDOf(sku), Patch: stockChange(res.Quantity, now)},
			})
			if domain.IsCode(err, domain.EPRECONDITION) {
				// Released meanwhile by another settler.
				return nil
			}
			return err
		}
		return nil
	})
}

// Commit marks the order's reservation of the variant sku of productID
// committed (shards as Reserve): its order sold its units
// (domain.StockSold), and the reservation's state follows the order's,
// as the audit checks. One conditional patch (state held → committed) at
// the end of the take's chain; anything else is nothing to do. A line
// whose order saw the stock unsplit has no chain (Reserve), so a refused
// patch there is the answer, with no read.
func (r *Inventory) Commit(ctx context.Context, productID, sku, orderID string, shards int) error {
	cur := domain.StartShard(orderID, productID, sku, shards)
	for range domain.MaxStockShards + 1 {
		key, id := domain.ShardKey(productID, cur), domain.ReservationID(orderID, sku)
		_, err := r.c.Patch(ctx, key, id,
			[]store.PatchOp{{Op: store.PatchSet, Path: "/state", Value: domain.ReservationCommitted}},
			&store.PatchOptions{Condition: store.Condition{{Path: "state", Op: store.OpEqual, Value: domain.ReservationHeld}}})
		switch {
		case domain.IsCode(err, domain.ENOTFOUND), domain.IsCode(err, domain.EPRECONDITION) && shards <= 1:
			return nil
		case !domain.IsCode(err, domain.EPRECONDITION):
			return err
		}
		res, err := ReadDoc[domain.Reservation](ctx, r.c, key, id)
		if err != nil || res.State != domain.ReservationMoved || res.MovedTo == nil {
			return err
		}
		cur = *res.MovedTo
	}
	return nil
}

// Held returns one page of the reservations still held, across every
// product (a cross-partition query): what the tests and an operator read
// to see the units that orders in progress hold.
func (r *Inventory) Held(ctx context.Context, limit int, continuation string) ([]domain.Reservation, string, error) {
	return queryPage[domain.Reservation](ctx, r.c, store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeReservation},
			{Path: "state", Op: store.OpEqual, Value: domain.ReservationHeld},
		},
		Limit:        limit,
		Continuation: continuation,
	})
}

// stockChange is the patch of a take (delta < 0) or a return (delta > 0).
func stockChange(delta int64, now time.Time) []store.PatchOp {
	return []store.PatchOp{
		{Op: store.PatchIncrement, Path: "/available", Value: delta},
		{Op: store.PatchIncrement, Path: "/version", Value: 1},
		{Op: store.PatchSet, Path: "/lastUpdated", Value: now.UTC()},
	}
}
