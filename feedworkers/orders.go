package feedworkers

import (
	"context"

	"shop/domain"
)

// OrdersToCarts finishes the checkouts that stopped after committing the
// order but before settling the cart (writes.SettleOrder): a cart still
// marked with the order gives up the paid lines; any other cart was
// settled already, which makes the handler idempotent.
// Cost: one cart point read per delivered order version, and a cart
// replace only for a checkout that did not settle.
func (h *Handlers) OrdersToCarts(ctx context.Context, orders []domain.Order) error {
	for _, o := range orders {
		if _, err := h.writes.SettleOrder(ctx, o); err != nil {
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
		if err != nil || cur.Version == done {
			return err
		}
		if err := h.repos.OrderSummaries.Project(ctx, cur); err != nil {
			return err
		}
		done = cur.Version
	}
}
