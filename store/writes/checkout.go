package writes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

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

// Checkout turns the user's cart into an order. The rule it keeps: a
// cart's contents are paid at most once, whatever the keys, tabs,
// instances and crashes, and a checkout and the cart's other changes
// behave as if one ran after the other.
//
// No transaction spans `carts` and `orders`, so the checkout writes a
// marker on the cart first (If-Match on the version it orders), then the
// order batch in `orders` (the order, the key's record, the
// customerSummary), then settles the paid lines out of the cart. The
// marker is what makes the pair safe. Only one checkout can mark a given
// version of the cart, and nobody changes what a marked cart holds: a
// cart change (another checkout, a PUT, a DELETE) that finds a marker
// first resolves it (resolve): it settles the order if it committed, and
// otherwise waits for it, up to domain.MaxCheckoutWait after the marker,
// and then voids the order's id, so that a checkout that died, or is
// stuck, can never commit after the cart has moved on.
//
// Before it writes anything the checkout reads each line's stock
// (checkStock): a cart those reads show short is refused then, with no
// unit taken and no marker, which keeps a refusal cheap and harmless to
// other buyers however often it is repeated. What the caller waits for
// is that round of reads, then three writes in sequence: the marker, the
// units (reserve), the order batch. The settle comes after the answer
// (settleAfterAnswer): the order is committed by then, and the marker
// makes any reader of the cart settle it first, so nobody sees the paid
// lines again. The units wait for the marker, though they are in another
// container: units taken at once with a marker that then loses its race
// (the cart changed since it was read) would be held, for a moment, from
// another checkout, which a shop running one checkout after the other
// never refuses.
func (w *Writes) Checkout(ctx context.Context, req CheckoutRequest) (domain.Order, error) {
	// A concurrent duplicate in this process waits for nobody: 409. On
	// another instance the same race ends at the marker, and the second
	// request, going round again, replays the first.
	if !w.checkouts.start(req.UserID, req.Key) {
		return domain.Order{}, domain.Errorf(domain.ECONFLICT, "a checkout with this Idempotency-Key is still in progress")
	}
	defer w.checkouts.done(req.UserID, req.Key)

	var placed domain.Order
	err := store.Retry(ctx, func() error {
		// Point read of the key's record: a retry replays the first answer.
		prior, err := w.repos.Orders.Idempotency(ctx, req.UserID, req.Key)
		switch {
		case err == nil:
			placed, err = w.replay(ctx, prior, req.RequestHash)
			return err
		case !domain.IsCode(err, domain.ENOTFOUND):
			return err
		}
		o, marked, take, err := w.mark(ctx, req)
		if err != nil {
			return err
		}
		if err := w.reserve(ctx, o, take); err != nil {
			w.unmark(ctx, o.UserID, o.ID)
			return err
		}
		placed, err = w.place(ctx, o, marked, req)
		return err
	})
	return placed, err
}

// mark makes the order from the cart, reads the stock of its lines
// (checkStock) and writes the checkout's marker on the version it was
// made from (If-Match), resolving another checkout's marker first. It
// returns the order, the cart as marked and the lines to take. A cart the
// reads show short is refused with nothing written (refuse).
func (w *Writes) mark(ctx context.Context, req CheckoutRequest) (domain.Order, domain.Cart, []stockLine, error) {
	var (
		o    domain.Order
		take []stockLine
		read string // the _etag of the cart the order was made from
	)
	marked, err := w.changeCart(ctx, req.UserID, "", func(c *domain.Cart) error {
		t := w.now()
		var err error
		o, err = domain.NewOrder(domain.OrderID(t, randomSuffix()), *c, req.Customer, req.Address, req.Key, t)
		if err != nil {
			return err
		}
		read = c.ETag
		if take, err = w.checkStock(ctx, o, *c); err != nil {
			return err
		}
		c.MarkPending(o.ID, t)
		return nil
	})
	if domain.IsCode(err, domain.EOUTOFSTOCK) {
		return domain.Order{}, domain.Cart{}, nil, w.refuse(ctx, req.UserID, read, err)
	}
	if err != nil {
		return domain.Order{}, domain.Cart{}, nil, err
	}
	o.CartETag = marked.ETag
	return o, marked, take, nil
}

// refuse answers refusal, checkStock's, if the cart is still the version
// the order was made from (Carts.Unchanged, one point read), and
// otherwise goes round again. The stock's reads came after the cart's, so
// they may have seen the units of another checkout of this cart that
// marked it meanwhile: naming those lines short is a refusal no shop
// running one checkout after the other gives (that shop answers the
// other's order, then "the cart is empty"; TestShopAgainstModel checks
// it). That checkout's marker changed the cart, and going round finds it.
func (w *Writes) refuse(ctx context.Context, userID, read string, refusal error) error {
	same, err := w.repos.Carts.Unchanged(ctx, userID, read)
	switch {
	case err != nil:
		return err
	case !same:
		return store.Lost(refusal)
	}
	return refusal
}

// place commits the marked checkout's batch; the cart is settled after
// the answer (settleAfterAnswer).
func (w *Writes) place(ctx context.Context, o domain.Order, marked domain.Cart, req CheckoutRequest) (domain.Order, error) {
	placed, err := w.repos.Orders.Place(ctx, o, domain.Idempotency{Key: req.Key, RequestHash: req.RequestHash, CreatedAt: o.CreatedAt})
	switch {
	case err == nil:
		w.settleAfterAnswer(ctx, marked, placed)
		return placed, nil
	case errors.Is(err, store.ErrKeyUsed):
		// The same key committed first on another instance: go round
		// again, and replay it.
		w.abandon(ctx, o)
		return domain.Order{}, store.Lost(err)
	case errors.Is(err, store.ErrOrderExists):
		// A cart change voided the order's id: nothing was charged, and
		// the cart is as it was.
		w.abandon(ctx, o)
		return domain.Order{}, err
	}
	// Anything else may have committed (on Cosmos an unavailable or
	// timed-out batch may still have), or may not: settleOrVoid finds out.
	return w.settleOrVoid(ctx, o, err)
}

// settleAfterAnswer takes the lines placed paid for out of the cart once
// the caller has its answer, in the background: the order stands
// whatever happens now, so the settle is no part of the answer, and the
// checkout's caller does not wait for a third write. Nobody sees the
// paid lines meanwhile: every reader and writer of the cart that finds
// the marker settles it first (Cart, changeCart), which costs that one
// reader the order's point read and the settle. The settle starts from
// marked, the cart as the marker left it, so it is one write unless the
// cart changed since. It rides out a throttled store (Persist); if it
// still fails, or the process stops first, the marker stays, and the
// orders feed (OrdersToCarts) or the next cart change settles it.
//
// It runs on ctx's values (its trace) without its cancellation, bounded
// by cleanupTimeout, and on a Meter of its own: the answer's cost headers
// are written by then.
func (w *Writes) settleAfterAnswer(ctx context.Context, marked domain.Cart, placed domain.Order) {
	ctx, _ = store.WithMeter(context.WithoutCancel(ctx))
	w.background.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
		defer cancel()
		from := marked
		_ = store.Persist(ctx, func() error {
			// Only the first try starts from the marked cart: a failed
			// write may still have gone in, so a try again reads anew.
			start := from
			from = domain.Cart{UserID: marked.UserID}
			_, err := w.settleFrom(ctx, start, placed)
			return err
		})
	})
}

// settleOrVoid ends a checkout whose batch failed without saying that it
// did not commit. Voiding its order id settles the question at once: if
// the void goes in, the batch never will (nothing was charged, and the
// cause is answered); if the id is taken, the order committed, and it is
// settled and answered. A store too unavailable for either leaves the
// marker to the next cart change.
func (w *Writes) settleOrVoid(ctx context.Context, o domain.Order, cause error) (domain.Order, error) {
	if ctx.Err() != nil {
		// The caller is gone: the answer is the cause whatever the store
		// says, and the clean-up goes on without it.
		cleanUp(ctx, func(ctx context.Context) { _, _ = w.voidOrSettle(ctx, o, cause) })
		return domain.Order{}, cause
	}
	return w.voidOrSettle(ctx, o, cause)
}

// voidOrSettle is settleOrVoid's work.
func (w *Writes) voidOrSettle(ctx context.Context, o domain.Order, cause error) (domain.Order, error) {
	err := store.Persist(ctx, func() error { return w.repos.Orders.Void(ctx, o.UserID, o.ID, w.now()) })
	switch {
	case err == nil:
		w.abandon(ctx, o)
		return domain.Order{}, cause
	case !errors.Is(err, store.ErrOrderExists):
		return domain.Order{}, cause
	}
	placed, voided, err := w.repos.Orders.Lookup(ctx, o.UserID, o.ID)
	if err != nil || voided {
		return domain.Order{}, cause
	}
	_, _ = w.SettleOrder(ctx, placed)
	return placed, nil
}

// cleanupTimeout bounds a checkout's clean-up once its caller is gone.
const cleanupTimeout = 5 * time.Second

// cleanUp runs f, a checkout's clean-up (the void of its order id, the
// return of its units, its marker off the cart), on ctx while the caller
// still waits. Once ctx has ended (the client gave up, or the request's
// deadline passed) f runs detached from it, in the background, bounded by
// cleanupTimeout: the answer does not wait on the store, and the units do
// not stay held until the reaper.
func cleanUp(ctx context.Context, f func(ctx context.Context)) {
	if ctx.Err() == nil {
		f(ctx)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		f(ctx)
	}()
}

// abandon undoes a checkout whose order will never commit: its units go
// back to stock and its marker comes off the cart.
func (w *Writes) abandon(ctx context.Context, o domain.Order) {
	w.release(ctx, o)
	w.unmark(ctx, o.UserID, o.ID)
}

// replay answers a repeated Idempotency-Key: the same body gets the first
// order again, another body is refused.
func (w *Writes) replay(ctx context.Context, prior domain.Idempotency, hash string) (domain.Order, error) {
	if prior.RequestHash != hash {
		return domain.Order{}, domain.Errorf(domain.EUNPROCESSABLE, "this Idempotency-Key was used with a different request body")
	}
	return w.repos.Orders.Get(ctx, prior.UserID, prior.OrderID)
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// inFlight holds user+key of the checkouts running in this process, so a
// concurrent duplicate gets 409 at once (as the Idempotency-Key draft
// asks) instead of waiting on the marker.
type inFlight struct{ m sync.Map }

func (f *inFlight) start(userID, key string) bool {
	_, busy := f.m.LoadOrStore(userID+"\x00"+key, struct{}{})
	return !busy
}

func (f *inFlight) done(userID, key string) { f.m.Delete(userID + "\x00" + key) }
