package writes

import (
	"context"
	"errors"

	"shop/domain"
	"shop/store"
)

// This file is the marker's side of the checkout protocol (Checkout): how
// a checkout's marker comes off the cart, by the checkout itself, by the
// orders feed, or by whoever changes or reads the cart next.

// SettleOrder takes the lines order o paid for out of its user's cart, if
// the cart still carries o's marker (domain.Cart.Settle), and returns the
// cart. It is called after the batch by the checkout itself (after its
// answer: settleAfterAnswer), by a cart change or read that finds the
// marker (resolve, Cart), and by the orders feed for every order it
// delivers. Idempotent: once settled, the marker is gone.
// The order's status does not matter (a feed may first deliver an order
// as cancelled): its lines were checked out all the same. A cart that
// expired meanwhile has nothing left to settle.
func (w *Writes) SettleOrder(ctx context.Context, o domain.Order) (domain.Cart, error) {
	return w.settleFrom(ctx, domain.Cart{UserID: o.UserID}, o)
}

// settleFrom is SettleOrder starting from from, the cart as the caller
// read it (with its _etag; without, it reads the cart first).
func (w *Writes) settleFrom(ctx context.Context, from domain.Cart, o domain.Order) (domain.Cart, error) {
	c, err := w.repos.Carts.UpdateExisting(ctx, from, func(c *domain.Cart) error {
		if !c.Settle(o, w.now()) {
			return store.ErrUnchanged
		}
		return nil
	})
	if errors.Is(err, store.ErrUnchanged) || domain.IsCode(err, domain.ENOTFOUND) {
		return c, nil
	}
	return c, err
}

// errCheckoutInProgress is the lost race of a cart change that found a
// checkout still running: it waits (Retry) and looks again.
var errCheckoutInProgress = domain.Errorf(domain.ECONFLICT, "a checkout of this cart is in progress; try again")

// resolve ends, for a cart change, the checkout whose marker it found:
// an order that committed is settled; a voided one is unmarked; one not
// there yet is waited for until domain.MaxCheckoutWait after the marker,
// then voided (its batch can then never commit) and unmarked.
func (w *Writes) resolve(ctx context.Context, userID string, p domain.PendingCheckout) error {
	return store.Retry(ctx, func() error {
		o, voided, err := w.repos.Orders.Lookup(ctx, userID, p.OrderID)
		switch {
		case err == nil && voided:
			w.unmark(ctx, userID, p.OrderID)
			return nil
		case err == nil:
			_, err = w.SettleOrder(ctx, o)
			return err
		case !domain.IsCode(err, domain.ENOTFOUND):
			return err
		case w.now().Before(p.Since.Add(domain.MaxCheckoutWait)):
			// Still running, unless it was refused and unmarked.
			if c, err := w.repos.Carts.Get(ctx, userID); err != nil || !c.IsPending(p.OrderID) {
				return err
			}
			return store.Lost(errCheckoutInProgress)
		}
		err = w.repos.Orders.Void(ctx, userID, p.OrderID, w.now())
		if errors.Is(err, store.ErrOrderExists) {
			// It committed (or another change voided it) meanwhile.
			return store.Lost(err)
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
	cleanUp(ctx, func(ctx context.Context) {
		_, _ = w.repos.Carts.UpdateExisting(ctx, domain.Cart{UserID: userID}, func(c *domain.Cart) error {
			if !c.Unmark(orderID) {
				return store.ErrUnchanged
			}
			return nil
		})
	})
}
