package writes

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/store/repo"
)

// CarryOut brings the order's stock, money and cart in line with its
// state (domain.States): the units sold are committed, returned ones
// released, the money captured, or voided and refunded; the cart of an
// order that rests loses its marker, and the paid lines with it unless
// the order failed. It is called by whoever moves an order, and by the
// orders feed for every order it delivers, read afresh: every effect is
// conditional or keyed, so running it twice, or on two workers at once,
// changes nothing more. An order in progress asks for nothing yet: its
// checkout, or the sweeper, moves it on first.
//
// An order that sold its units settles its cart at once with its stock
// and money: the units were taken at the reserve, and a reservation's
// commit neither takes nor returns any, so no read of the stock or the
// cart depends on which comes first; writes made at once the store
// commits together (the embedded store's group commit: one fsync for
// the cart and the reservations of a checkout of several lines, where
// the cart had one of its own). An order that returns its units keeps
// the order: the units are back before the cart is free, so the buyer's
// next checkout of it, which reads the stock, finds them.
func (w *Writes) CarryOut(ctx context.Context, o domain.Order) error {
	st, ok := domain.StateOf(o.Status)
	if !ok || st.InProgress {
		return nil
	}
	if st.Stock != domain.StockSold {
		if err := w.settleStockAndMoney(ctx, o, st); err != nil {
			return err
		}
		_, err := w.SettleOrder(ctx, o)
		return err
	}
	var g errgroup.Group
	g.Go(func() error { return w.settleStockAndMoney(ctx, o, st) })
	g.Go(func() error {
		_, err := w.SettleOrder(ctx, o)
		return err
	})
	return g.Wait()
}

// settleStockAndMoney is CarryOut's stock, then its money.
func (w *Writes) settleStockAndMoney(ctx context.Context, o domain.Order, st domain.State) error {
	if err := w.SettleStock(ctx, o); err != nil {
		return err
	}
	switch st.Money {
	case domain.MoneyCharged:
		return w.capture(ctx, o)
	case domain.MoneyReturned:
		return w.returnMoney(ctx, o)
	}
	return nil
}

// SettleStock brings the order's reservations in line with its state:
// committed once it sold its units, released (exactly once) once it
// returned them; an order in progress is left alone.
func (w *Writes) SettleStock(ctx context.Context, o domain.Order) error {
	st, _ := domain.StateOf(o.Status)
	switch {
	case st.InProgress:
		return nil
	case st.Stock == domain.StockSold:
		return w.eachLine(o, func(l domain.OrderLine) error {
			return w.repos.Inventory.Commit(ctx, l.ProductID, l.SKU, o.ID, l.StockShards)
		})
	case st.Stock == domain.StockReturned:
		return w.eachLine(o, func(l domain.OrderLine) error {
			return w.repos.Inventory.Release(ctx, l.ProductID, l.SKU, o.ID, l.StockShards, w.now())
		})
	}
	return nil
}

// eachLine runs f for each line of o that took units (not a legacy
// product's), reserveConcurrency at once: each line's stock is its own
// partition.
func (w *Writes) eachLine(o domain.Order, f func(domain.OrderLine) error) error {
	var g errgroup.Group
	g.SetLimit(reserveConcurrency)
	for _, l := range o.Items {
		if l.Unlimited {
			continue // a legacy product: no reservation
		}
		g.Go(func() error { return f(l) })
	}
	return g.Wait()
}

// capture charges the order's authorization (key: the capture step).
func (w *Writes) capture(ctx context.Context, o domain.Order) error {
	if o.Payment == nil || o.Payment.ID == "" {
		return nil // an order from before payments: nothing to capture
	}
	p, err := w.pay.Capture(ctx, o.Payment.ID, payments.Key(o.ID, payments.StepCapture))
	if errors.Is(err, payments.ErrState) && (p.Status == payments.Captured || p.Status == payments.Refunded) {
		return nil
	}
	return err
}

// returnMoney leaves nothing of the order's payment live: an
// authorization is voided, a capture refunded. An order that never
// reached reserved never asked the provider. One that did but recorded no
// payment (it expired while its authorization was on the way) asks again
// with the authorize step's key, which answers the payment that call
// made, if it went in, and returns that one; a late original call then
// finds it voided too.
func (w *Writes) returnMoney(ctx context.Context, o domain.Order) error {
	if !o.Passed(domain.StatusReserved) {
		return nil
	}
	id := ""
	if o.Payment != nil {
		id = o.Payment.ID
	}
	if id == "" {
		p, err := w.pay.Authorize(ctx, authorization(o))
		switch {
		case errors.Is(err, payments.ErrUnknownMethod):
			return nil
		case err != nil:
			return err
		case p.Status == payments.Declined:
			return nil
		}
		id = p.ID
	}
	p, err := w.pay.Void(ctx, id, payments.Key(o.ID, payments.StepVoid))
	switch {
	case errors.Is(err, payments.ErrState) && p.Status == payments.Captured:
		_, err = w.pay.Refund(ctx, id, payments.Key(o.ID, payments.StepRefund))
		return err
	case errors.Is(err, payments.ErrState):
		return nil // declined, voided or refunded: nothing live
	}
	return err
}

// SettleOrder brings the user's cart in line with order o, if the cart
// still carries o's marker: an order that stands (or was cancelled since:
// its lines were checked out all the same) takes its paid lines out of
// the cart (domain.Cart.Settle); one that failed leaves the lines and
// only the marker goes. An order in progress leaves the cart as it is.
// Idempotent: once settled, the marker is gone; a cart that expired
// meanwhile has nothing left to settle.
func (w *Writes) SettleOrder(ctx context.Context, o domain.Order) (domain.Cart, error) {
	return w.settleFrom(ctx, domain.Cart{UserID: o.UserID}, o)
}

// settleFrom is SettleOrder starting from from, the cart as the caller
// read it (with its _etag; without, it reads the cart first).
func (w *Writes) settleFrom(ctx context.Context, from domain.Cart, o domain.Order) (domain.Cart, error) {
	if o.InProgress() {
		return from, nil
	}
	failed := o.Status == domain.StatusRejected || o.Status == domain.StatusExpired
	c, err := w.repos.Carts.UpdateExisting(ctx, from, func(c *domain.Cart) error {
		if failed && c.Unmark(o.ID) || !failed && c.Settle(o, w.now()) {
			return nil
		}
		return repo.ErrUnchanged
	})
	if errors.Is(err, repo.ErrUnchanged) || domain.IsCode(err, domain.ENOTFOUND) {
		return c, nil
	}
	return c, err
}
