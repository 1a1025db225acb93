package writes

import (
	"context"
	"errors"
	"sync"

	"shop/domain"
	"shop/store"
)

// CheckoutRequest is one checkout as the API received it.
type CheckoutRequest struct {
	UserID   string
	Customer domain.Customer
	Address  domain.Address
	// Key is the Idempotency-Key, RequestHash identifies the body: the
	// same key with the same body replays the first answer, with another
	// body it is refused (EUNPROCESSABLE).
	Key         string
	RequestHash string
}

// maxCheckoutRounds bounds how many orders of the same cart one checkout
// may find already paid before giving up: each round settles one, so the
// bound is only ever reached by a cart checked out in a tight loop.
const maxCheckoutRounds = 10

// Checkout turns the user's cart into an order. The rule it keeps: a
// cart's contents are paid at most once, whatever the keys, tabs,
// instances and crashes; concurrent checkouts of one cart behave as if
// one ran after the other.
//
// No transaction spans `carts` and `orders`, so the rule is enforced in
// the orders partition: the order is created under the id the cart named
// for its next order (Cart.NextOrderID), in ONE batch with the key's
// idempotency record and the customerSummary. Two checkouts that read the
// same cart both create that id, and only one commits; the other finds
// the order (store.ErrOrderExists), settles its lines out of the cart and
// starts again from the cart that is left, which is what it would have
// seen had it come second. A checkout that stops after its batch leaves
// the cart naming the paid order, so whoever comes next (the orders feed,
// or the next checkout, at its batch) settles it the same way.
//
// The cart is not written before the batch: the guard costs no request
// unit of its own.
func (w *Writes) Checkout(ctx context.Context, req CheckoutRequest) (domain.Order, error) {
	// A concurrent duplicate in this process waits for nobody: 409. On
	// another instance the same race ends at the batch (ErrKeyUsed) and
	// replays.
	if !w.checkouts.start(req.UserID, req.Key) {
		return domain.Order{}, domain.Errorf(domain.ECONFLICT, "a checkout with this Idempotency-Key is still in progress")
	}
	defer w.checkouts.done(req.UserID, req.Key)

	for range maxCheckoutRounds {
		// Point read of the key's record: a retry replays the first answer.
		prior, err := w.repos.Orders.Idempotency(ctx, req.UserID, req.Key)
		switch {
		case err == nil:
			return w.replay(ctx, prior, req.RequestHash)
		case !domain.IsCode(err, domain.ENOTFOUND):
			return domain.Order{}, err
		}
		cart, err := w.cartWithNextOrderID(ctx, req.UserID)
		if err != nil {
			return domain.Order{}, err
		}
		t := w.now()
		o, err := domain.NewOrder(cart.NextOrderID, cart, req.Customer, req.Address, req.Key, t)
		if err != nil {
			return domain.Order{}, err
		}
		placed, err := w.repos.Orders.Place(ctx, o, domain.Idempotency{Key: req.Key, RequestHash: req.RequestHash, CreatedAt: t.UTC()})
		switch {
		case errors.Is(err, store.ErrKeyUsed):
			// The same key committed first on another instance: the next
			// round replays it.
			continue
		case errors.Is(err, store.ErrOrderExists):
			// These contents were paid by another checkout: settle them
			// and look at what is left.
			paid, err := w.repos.Orders.Get(ctx, req.UserID, o.ID)
			if err != nil {
				return domain.Order{}, err
			}
			if err := w.SettleOrder(ctx, paid); err != nil {
				return domain.Order{}, err
			}
			continue
		case err != nil:
			return domain.Order{}, err
		}
		// The order stands whatever happens now. The settle rides out a
		// throttled store (Persist) so that the cart the user sees next
		// no longer holds what was paid; if it still fails, the orders
		// feed or the next checkout settles it.
		_ = store.Persist(ctx, func() error { return w.SettleOrder(ctx, placed) })
		return placed, nil
	}
	return domain.Order{}, domain.Errorf(domain.ECONFLICT, "the cart kept being checked out by other requests; try again")
}

// cartWithNextOrderID reads the user's cart. A cart written before carts
// named their next order gets an id first (one cart write, once).
func (w *Writes) cartWithNextOrderID(ctx context.Context, userID string) (domain.Cart, error) {
	cart, err := w.repos.Carts.Get(ctx, userID)
	if err != nil || cart.NextOrderID != "" || cart.ETag == "" {
		return cart, err
	}
	return w.repos.Carts.UpdateExisting(ctx, cart, func(c *domain.Cart) error {
		if c.NextOrderID != "" {
			return store.ErrUnchanged
		}
		c.NextOrderID = domain.NewOrderID()
		return nil
	})
}

// replay answers a repeated Idempotency-Key: the same body gets the first
// order again, another body is refused.
func (w *Writes) replay(ctx context.Context, prior domain.Idempotency, hash string) (domain.Order, error) {
	if prior.RequestHash != hash {
		return domain.Order{}, domain.Errorf(domain.EUNPROCESSABLE, "this Idempotency-Key was used with a different request body")
	}
	return w.repos.Orders.Get(ctx, prior.UserID, prior.OrderID)
}

// SettleOrder takes the lines order o paid for out of its user's cart, if
// the cart still names o as its next order (domain.Cart.Settle); called
// after the batch by the checkout itself, by a checkout that finds the
// order already paid, and by the orders feed for every order it delivers.
// Idempotent: once settled, the cart names another order. The order's
// status does not matter (a feed may first deliver an order as
// cancelled): its lines were checked out all the same. A cart that
// expired meanwhile has nothing left to settle.
func (w *Writes) SettleOrder(ctx context.Context, o domain.Order) error {
	_, err := w.repos.Carts.UpdateExisting(ctx, domain.Cart{UserID: o.UserID}, func(c *domain.Cart) error {
		if !c.Settle(o, w.now()) {
			return store.ErrUnchanged
		}
		return nil
	})
	if errors.Is(err, store.ErrUnchanged) || domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
}

// inFlight holds user+key of the checkouts running in this process, so a
// concurrent duplicate gets 409 at once (as the Idempotency-Key draft
// asks) instead of racing the batch.
type inFlight struct{ m sync.Map }

func (f *inFlight) start(userID, key string) bool {
	_, busy := f.m.LoadOrStore(userID+"\x00"+key, struct{}{})
	return !busy
}

func (f *inFlight) done(userID, key string) { f.m.Delete(userID + "\x00" + key) }
