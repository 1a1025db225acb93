package feedworkers

import (
	"context"

	"github.com/reference-shop/shop/domain"
)

// OrdersCarryOut brings each delivered order's stock, money and cart in
// line with its state (writes.CarryOut): the units of an order that
// failed or was cancelled go back, exactly once, its authorization is
// voided or its capture refunded; a placed order's units are committed
// and its paid lines leave the cart; a shipped one is captured. This is
// the workflow's at-least-once: whoever moved the order did it first, and
// if that stopped half way, this finishes it.
//
// It reads the CURRENT order rather than trusting the feed's version, so
// a late version of an order cannot undo what a newer one did (a late
// "placed" committing units a cancel gave back cannot happen anyway: each
// effect is conditional on what it changes, but the current order also
// saves running a stale state's effects). One point read per order.
func (h *Handlers) OrdersCarryOut(ctx context.Context, orders []domain.Order) error {
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
		if err := h.writes.CarryOut(ctx, cur); err != nil {
			return err
		}
	}
	return nil
}

// OrdersToStatusView keeps exactly one summary of each order in
// ordersByStatus (pk statusDay, "shipped:07:2026-11-29"). A status change
// moves the summary to the same bucket of another status, and a partition
// key never changes in place: the summary is written in the new partition
// and deleted in the old ones (OrderSummaries.Project).
//
// The feed's version of the order only says WHICH order changed: the
// handler point-reads the CURRENT order and applies that. Trade-off: one
// extra read (1 RU) per changed order, in exchange for convergence under
// duplicates and reordering: a late "shipped" version processed after
// "delivered" would otherwise re-create the shipped summary (the guard of
// Put is per partition, and the delivered copy lives in another one).
//
// Two workers may still apply one order at once (two instances during a
// lease handover, or the audit's repair beside the feed): one reads the
// order shipped, the other reads it delivered and projects it, deleting
// the shipped summary, and then the first writes its shipped summary
// after that delete. So after projecting, the handler reads the order
// again and projects once more while it has changed (projectCurrent):
// either the newer version committed before that read, and this handler
// deletes its own stale summary, or after it, and the newer version's
// handler reads it only after this one's writes, so its deletes come
// after them. One point read more per changed order.
func (h *Handlers) OrdersToStatusView(ctx context.Context, orders []domain.Order) error {
	seen := map[[2]string]bool{}
	for _, o := range orders {
		key := [2]string{o.UserID, o.ID}
		if seen[key] {
			continue
		}
		seen[key] = true
		if err := h.projectCurrent(ctx, o.UserID, o.ID); err != nil {
			return err
		}
	}
	return nil
}

// projectCurrent projects the order as it is now, and again as long as a
// read after the projection finds a newer version.
func (h *Handlers) projectCurrent(ctx context.Context, userID, orderID string) error {
	var done int64 = -1
	for {
		cur, err := h.repos.Orders.Get(ctx, userID, orderID)
		if domain.IsCode(err, domain.ENOTFOUND) {
			return nil
		}
		if err != nil || cur.Version == done || cur.InProgress() {
			return err
		}
		if err := h.repos.OrderSummaries.Project(ctx, cur); err != nil {
			return err
		}
		done = cur.Version
	}
}
