package writes

import (
	"context"
	"errors"
	"sync"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// CheckoutRequest is one checkout as the API received it.
type CheckoutRequest struct {
	UserID   string
	Customer domain.Customer
	Address  domain.Address
	// PaymentMethod is the buyer's payment-method token ("pm_card_visa").
	PaymentMethod string
	// Key is the Idempotency-Key, RequestHash identifies the body: the
	// same key with the same body replays the first answer, with another
	// body it is refused (EUNPROCESSABLE).
	Key         string
	RequestHash string
}

// Currency is the currency of every price in the shop.
const Currency = domain.Currency

// Checkout turns the user's cart into an order and carries the order
// through the workflow (domain.Moves) for up to domain.CheckoutBound. It
// answers the order as it then is: placed; in progress (the caller
// answers 202, and the sweeper carries it on); or, for an order that
// ended, the refusal with the order (out of stock, a declined card).
//
// The rule it keeps: a cart's contents are paid at most once, whatever
// the keys, tabs, instances and crashes. Its first write claims the cart
// (claim: a marker, If-Match on the cart version the order is made from),
// so only one checkout can order a given version; its second opens the
// order, pending, in one batch with the key's record (Orders.Open). From
// there on the order's status says everything, and every step is one of
// the workflow's moves (Advance).
//
// A key seen before replays its order as it is now, carrying it on if it
// is still in progress; a key whose order ended rejected or expired is
// free again (Orders.Move), as a refusal that wrote nothing leaves it.
func (w *Writes) Checkout(ctx context.Context, req CheckoutRequest) (domain.Order, error) {
	// A concurrent duplicate in this process waits for nobody: 409. On
	// another instance the same race ends at the claim, and the second
	// request, going round again, replays the first.
	if !w.checkouts.start(req.UserID, req.Key) {
		return domain.Order{}, domain.Errorf(domain.ECONFLICT, "a checkout with this Idempotency-Key is still in progress")
	}
	defer w.checkouts.done(req.UserID, req.Key)
	w.running.Add(1)
	defer w.running.Done()
	o, err := w.begin(ctx, req)
	if err != nil {
		return domain.Order{}, err
	}
	return w.carryOn(ctx, o)
}

// begin replays the key's order, or claims the cart and opens a new one.
func (w *Writes) begin(ctx context.Context, req CheckoutRequest) (domain.Order, error) {
	var o domain.Order
	err := repo.Retry(ctx, func() error {
		// Point read of the key's record: a retry replays its order.
		prior, err := w.repos.Orders.Idempotency(ctx, req.UserID, req.Key)
		switch {
		case err == nil:
			if prior.RequestHash != req.RequestHash {
				return domain.Errorf(domain.EUNPROCESSABLE, "this Idempotency-Key was used with a different request body")
			}
			o, err = w.repos.Orders.Get(ctx, prior.UserID, prior.OrderID)
			return err
		case !domain.IsCode(err, domain.ENOTFOUND):
			return err
		}
		claimed, err := w.claim(ctx, req)
		if err != nil {
			return err
		}
		o, err = w.repos.Orders.Open(ctx, claimed, domain.Idempotency{Key: req.Key, RequestHash: req.RequestHash, CreatedAt: claimed.CreatedAt})
		switch {
		case errors.Is(err, repo.ErrKeyUsed):
			// The same key opened its order first on another instance:
			// go round again, and replay it.
			w.unmark(ctx, claimed.UserID, claimed.ID)
			return repo.Lost(err)
		case errors.Is(err, repo.ErrOrderExists):
			// A cart change found the claim before its order and voided
			// the id (resolve): go round on the cart as it is now.
			return repo.Lost(err)
		}
		if err != nil {
			// The batch may have committed all the same (on Cosmos a
			// timeout says nothing of it): an order at the id carries on.
			// None, the next change of the cart voids the id; a store too
			// unavailable to say leaves it to the key's retry, which
			// replays the order if it was opened.
			if opened, voided, lerr := w.repos.Orders.Lookup(ctx, claimed.UserID, claimed.ID); lerr == nil && !voided {
				o = opened
				return nil
			}
		}
		return err
	})
	return o, err
}

// carryOn advances o for up to domain.CheckoutBound, and answers it. The
// workflow does not stop when the caller does: a buyer who closed the tab
// after "Place order" still gets the order placed (or refused), and its
// units are not held until the sweeper comes by.
func (w *Writes) carryOn(ctx context.Context, o domain.Order) (domain.Order, error) {
	bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.bound)
	defer cancel()
	o, err := w.Advance(bounded, o)
	switch {
	case err != nil && bounded.Err() != nil:
		// Past the bound: the order as it is, still in progress.
		return o, nil
	case err != nil:
		return o, err
	case o.Status == domain.StatusRejected:
		refusal := o.Rejection.Err()
		refusal.OrderID = o.ID
		return o, refusal
	case o.Status == domain.StatusExpired:
		return o, domain.Errorf(domain.ECONFLICT, "the checkout of order %s expired before it was placed; nothing was charged; try again", o.ID)
	}
	return o, nil
}

// claim makes the order from the cart, reads the stock of its lines
// (checkStock) and writes the checkout's marker on the version it was
// made from (If-Match), resolving an earlier checkout's marker first: the
// workflow's first write. It returns the order, pending, with the cart
// version marked. A cart the reads show short is refused with nothing
// written (refuse).
func (w *Writes) claim(ctx context.Context, req CheckoutRequest) (domain.Order, error) {
	var (
		o    domain.Order
		read string // the _etag of the cart the order was made from
	)
	marked, err := w.changeCart(ctx, req.UserID, "", func(c *domain.Cart) error {
		t := w.now()
		var err error
		o, err = domain.NewOrder(domain.OrderID(t, domain.RandomSuffix()), *c, req.Customer, req.Address, req.Key, t)
		if err != nil {
			return err
		}
		read = c.ETag
		for i := range o.Items {
			o.Items[i].Unlimited = !tracked(*c, o.Items[i].ProductID, o.Items[i].SKU)
		}
		if err := w.checkStock(ctx, &o, *c); err != nil {
			return err
		}
		c.MarkPending(o.ID, t)
		return nil
	})
	if domain.IsCode(err, domain.EOUTOFSTOCK) {
		return domain.Order{}, w.refuse(ctx, req.UserID, read, err)
	}
	if err != nil {
		return domain.Order{}, err
	}
	o.CartETag = marked.ETag
	o.PaymentMethod = req.PaymentMethod
	o.Payment = &domain.OrderPayment{AmountCents: o.TotalCents, Currency: Currency}
	return o, nil
}

// refuse answers refusal, checkStock's, if the cart is still the version
// the order was made from (Carts.Unchanged, one point read), and
// otherwise goes round again. The stock's reads came after the cart's, so
// they may have seen the units of another checkout of this cart that
// claimed it meanwhile: naming those lines short is a refusal no shop
// running one checkout after the other gives (that shop answers the
// other's order, then "the cart is empty"; TestShopAgainstModel checks
// it). That checkout's marker changed the cart, and going round finds it.
func (w *Writes) refuse(ctx context.Context, userID, read string, refusal error) error {
	same, err := w.repos.Carts.Unchanged(ctx, userID, read)
	switch {
	case err != nil:
		return err
	case !same:
		return repo.Lost(refusal)
	}
	return refusal
}

// inFlight holds user+key of the checkouts running in this process, so a
// concurrent duplicate gets 409 at once (as the Idempotency-Key draft
// asks) instead of waiting on the claim.
type inFlight struct{ m sync.Map }

func (f *inFlight) start(userID, key string) bool {
	_, busy := f.m.LoadOrStore(userID+"\x00"+key, struct{}{})
	return !busy
}

func (f *inFlight) done(userID, key string) { f.m.Delete(userID + "\x00" + key) }
