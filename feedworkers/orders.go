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
		if err := h.repos.OrderSummaries.Project(ctx, cur); err != nil {
			return err
		}
	}
	return nil
}
