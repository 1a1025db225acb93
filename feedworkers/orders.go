package feedworkers

import (
	"context"

	"shop/domain"
)

// settleAttempts bounds the re-reads of a cart that changed between the
// handler's read and its write (412).
const settleAttempts = 10

// OrdersToCarts finishes the checkouts that stopped after committing the
// order but before settling the cart: no transaction spans `orders` and
// `carts`, so checkout writes a marker on the cart (PendingOrderID) before
// the order batch. A cart still marked with this order keeps the paid
// lines: they are taken out (Cart.Settle) with If-Match on the version
// read, and on 412 the cart is read again, so a user's change or a price
// refresh since the checkout is kept, not lost, and does not stop the
// settle. A cart without this order's marker was settled already (by the
// checkout, a replay, or the user's next checkout) or never marked: left
// alone, which makes the handler idempotent. The order's status does not
// matter: latest-version mode may deliver an order first as cancelled,
// and its lines were checked out all the same. Cost: one cart point read
// (1 RU) per delivered order version, and a cart replace only for a
// checkout that did not settle.
func (h *Handlers) OrdersToCarts(ctx context.Context, orders []domain.Order) error {
	for _, o := range orders {
		if err := h.settleCart(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

func (h *Handlers) settleCart(ctx context.Context, o domain.Order) error {
	for attempt := 1; ; attempt++ {
		// Point read by (userId, userId), 1 RU (query-point-reads).
		c, err := h.repos.Carts.Get(ctx, o.UserID)
		if err != nil {
			return err
		}
		if !c.Settle(o, h.now()) {
			return nil
		}
		_, err = h.repos.Carts.ReplaceIfMatch(ctx, c, c.ETag)
		if domain.IsCode(err, domain.EPRECONDITION) && attempt < settleAttempts {
			continue
		}
		if domain.IsCode(err, domain.ENOTFOUND) {
			// The cart expired (ttl) since the read: nothing left to settle.
			return nil
		}
		return err
	}
}

// earlier lists, for each status, the statuses an order can have held
// before it (the status machine only moves forward): the only partitions
// where an older summary of the order can still be.
var earlier = map[string][]string{
	domain.StatusPlaced:    nil,
	domain.StatusShipped:   {domain.StatusPlaced},
	domain.StatusDelivered: {domain.StatusPlaced, domain.StatusShipped},
	domain.StatusCancelled: {domain.StatusPlaced},
}

// OrdersToStatusView keeps exactly one summary of each order in
// ordersByStatus (pk statusDay, "shipped:2026-11-29"). A status change
// moves the summary to another partition, and a partition key never
// changes in place: the summary is written in the new partition and
// deleted in the old ones.
//
// The feed's version of the order only says WHICH order changed: the
// handler point-reads the CURRENT order and applies that. Trade-off: one
// extra read (1 RU) per changed order, in exchange for convergence under
// duplicates and reordering: a late "shipped" version processed after
// "delivered" would otherwise re-create the shipped summary (the guard of
// Put is per partition, and the delivered copy lives in another one).
// With the current order as the truth, every replay writes the same
// partition and deletes the same others. What remains: two workers
// applying the same order at once (only during a lease handover) may
// interleave a stale read's write after a fresh one; the next change of
// that order repairs it.
func (h *Handlers) OrdersToStatusView(ctx context.Context, orders []domain.Order) error {
	seen := map[[2]string]bool{}
	for _, o := range orders {
		key := [2]string{o.UserID, o.ID}
		if seen[key] {
			continue
		}
		seen[key] = true
		cur, err := h.repos.Orders.Get(ctx, o.UserID, o.ID)
		if domain.IsCode(err, domain.ENOTFOUND) {
			continue
		}
		if err != nil {
			return err
		}
		if _, err := h.repos.OrderSummaries.Put(ctx, domain.SummaryOf(cur)); err != nil {
			return err
		}
		for _, s := range earlier[cur.Status] {
			if err := h.repos.OrderSummaries.Delete(ctx, domain.StatusDay(s, cur.CreatedAt), cur.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
