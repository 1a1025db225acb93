package writes

import (
	"context"
	"errors"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// This file is the claim's side of the checkout (claim): how a change or
// a read of the cart treats the marker of the checkout that claimed it.

// errCheckoutInProgress is the lost race of a cart change that found a
// checkout still in progress: it waits (Retry) and looks again, and
// after Retry's last try answers this conflict.
var errCheckoutInProgress = domain.Errorf(domain.ECONFLICT, "a checkout of this cart is in progress; try again")

// resolve ends, for a cart change, the claim it found on the cart, by
// what stands at the claim's order id: an order in progress is waited
// for (its checkout, or the sweeper, ends it within
// domain.CheckoutExpiry); one that rests is settled (SettleOrder); a void
// is unmarked. No order yet means the claim's checkout has not opened it:
// the change voids the id (Orders.Void), so the order can never be
// opened after the cart moved on, and the checkout, finding its id taken,
// goes round on the changed cart. Nothing here waits on a clock.
func (w *Writes) resolve(ctx context.Context, userID string, p domain.PendingCheckout) error {
	return repo.Retry(ctx, func() error {
		o, voided, err := w.repos.Orders.Lookup(ctx, userID, p.OrderID)
		switch {
		case err == nil && voided:
			w.unmark(ctx, userID, p.OrderID)
			return nil
		case err == nil && o.InProgress():
			return repo.Lost(errCheckoutInProgress)
		case err == nil:
			_, err = w.SettleOrder(ctx, o)
			return err
		case !domain.IsCode(err, domain.ENOTFOUND):
			return err
		}
		err = w.repos.Orders.Void(ctx, userID, p.OrderID, w.now())
		if errors.Is(err, repo.ErrOrderExists) {
			// The order was opened (or another change voided it)
			// meanwhile: look again.
			return repo.Lost(err)
		}
		if err != nil {
			return err
		}
		w.unmark(ctx, userID, p.OrderID)
		return nil
	})
}

// unmark removes the marker of the checkout of orderID, if it is still
// there. Best effort: a marker left behind is resolved by the next
// change of the cart.
func (w *Writes) unmark(ctx context.Context, userID, orderID string) {
	_, _ = w.repos.Carts.UpdateExisting(ctx, domain.Cart{UserID: userID}, func(c *domain.Cart) error {
		if !c.Unmark(orderID) {
			return repo.ErrUnchanged
		}
		return nil
	})
}
