package repo

import (
	"context"
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
// sent it).
func (r *Inventory) SetStock(ctx context.Context, productID, sku string, n int64, ifMatch Precondition, now time.Time) (domain.Stock, error) {
	s, _, err := update(ctx, r.c, productID, domain.StockIDOf(sku), rmw[domain.Stock]{
		what:    "the stock of " + domain.LineLabel(productID, sku),
		ifMatch: ifMatch,
		create:  func() domain.Stock { return domain.NewStock(productID, sku, 0, now) },
	}, func(s *domain.Stock) error {
		s.Available = n
		s.Version++
		s.LastUpdated = now.UTC()
		return nil
	})
	return s, err
}

// CreateStock creates the stock document of a new product.
func (r *Inventory) CreateStock(ctx context.Context, s domain.Stock) (domain.Stock, error) {
	return CreateDoc(ctx, r.c, s.ProductID, s)
}

// Reserve takes res.Quantity units of res.ProductID for its order in ONE
// transactional batch in the product's partition: the create of the
// reservation, and a patch of the stock (available −q, version +1) under
// the condition available >= q. One conditional write, no read-modify-
// write loop: of two checkouts racing for the last unit one batch
// commits, the other's condition fails. ErrShort when the stock cannot
// serve; ErrUntracked when the product has no stock; a reservation that
// exists already (a retry of the same order, or a second worker) takes
// nothing again: held or committed it is the take, released it is
// ErrReleased (the order's units were given back, or refused for good
// before this take: Release).
func (r *Inventory) Reserve(ctx context.Context, res domain.Reservation) error {
	doc, err := encode(res)
	if err != nil {
		return err
	}
	out, err := r.c.ExecuteBatch(ctx, res.ProductID, []store.BatchOp{
		{Kind: store.BatchCreate, Item: doc},
		{Kind: store.BatchPatch, ID: domain.StockIDOf(res.SKU), Patch: stockChange(-res.Quantity, res.CreatedAt),
			Condition: store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: res.Quantity}}},
	})
	switch failed := firstFailed(out); {
	case err == nil:
		return nil
	case failed == 0 && domain.IsCode(err, domain.ECONFLICT):
		prior, err := ReadDoc[domain.Reservation](ctx, r.c, res.ProductID, res.ID)
		if err == nil && prior.State == domain.ReservationReleased {
			return ErrReleased
		}
		return err
	case failed == 1 && domain.IsCode(err, domain.EPRECONDITION):
		return ErrShort
	case failed == 1 && domain.IsCode(err, domain.ENOTFOUND):
		return ErrUntracked
	}
	return err
}

// Release puts the units of the order's reservation of the variant sku of
// productID back in stock, exactly once: ONE batch of a patch of the reservation (state
// released) under the condition that it is not released yet, and a patch
// of the stock (available +q). A reservation already released is nothing
// to do. One never made is created released, with nothing to give back:
// a worker still taking the order's units (a checkout that lost its race
// to the sweeper) then finds its take refused (Reserve: ErrReleased), so
// no unit is ever held for an order that ended.
func (r *Inventory) Release(ctx context.Context, productID, sku, orderID string, now time.Time) error {
	return Retry(ctx, func() error {
		res, err := ReadDoc[domain.Reservation](ctx, r.c, productID, domain.ReservationID(orderID, sku))
		switch {
		case domain.IsCode(err, domain.ENOTFOUND):
			ttl := ReleasedTTL
			tomb := domain.Reservation{
				Meta:      domain.Meta{ID: domain.ReservationID(orderID, sku), Type: domain.TypeReservation, SchemaVersion: domain.SchemaVersion, TTL: &ttl},
				ProductID: productID, SKU: sku, OrderID: orderID, State: domain.ReservationReleased, CreatedAt: now.UTC(),
			}
			_, err := CreateDoc(ctx, r.c, productID, tomb)
			if domain.IsCode(err, domain.ECONFLICT) {
				return Lost(err) // a take went in first: release it
			}
			return err
		case err != nil:
			return err
		case res.State == domain.ReservationReleased:
			return nil
		}
		_, err = r.c.ExecuteBatch(ctx, productID, []store.BatchOp{
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
	})
}

// Commit marks the order's reservation of the variant sku of productID
// committed: its order
// sold its units (domain.StockSold), and the reservation's state follows
// the order's, as the audit checks. One conditional patch (state held →
// committed); anything else is nothing to do.
func (r *Inventory) Commit(ctx context.Context, productID, sku, orderID string) error {
	_, err := r.c.Patch(ctx, productID, domain.ReservationID(orderID, sku),
		[]store.PatchOp{{Op: store.PatchSet, Path: "/state", Value: domain.ReservationCommitted}},
		&store.PatchOptions{Condition: store.Condition{{Path: "state", Op: store.OpEqual, Value: domain.ReservationHeld}}})
	if domain.IsCode(err, domain.EPRECONDITION) || domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
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
