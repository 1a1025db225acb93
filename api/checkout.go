package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"shop/domain"
	"shop/store"
)

// MaxIdempotencyKey bounds the Idempotency-Key header.
const MaxIdempotencyKey = 255

type checkoutRequest struct {
	ShippingAddress domain.Address `json:"shippingAddress" validate:"required"`
}

// handleCheckout turns the caller's cart into an order. The order, its
// idempotency record and the customerSummary commit in ONE transactional
// batch in the user's orders partition (transactions need one partition
// key). The cart lives in another container, so no transaction can take
// the paid lines out of it in the same commit; instead a pending-checkout
// marker goes on the cart (If-Match) BEFORE the batch, and the paid lines
// are settled after it. A checkout that stops between the two leaves the
// marker, and whoever comes next settles it from the order: the orders
// feed, or the user's next checkout (settlePending). Whatever the user or
// the price fan-out wrote to the cart meanwhile, the paid lines never
// stay to be ordered again.
//
// Cost of the marker: one more cart write per checkout, a replace of the
// cart with If-Match. Measured in X-Request-Charge on the embedded store's
// estimates, the checkout of a 2-line cart went from 27.3 to 32.7 RU
// (+5.4 RU, +20 %); the settle costs what the former reset did.
func handleCheckout(carts *store.Carts, orders *store.Orders, running *inFlight, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		u := userFrom(ctx)
		key := r.Header.Get("Idempotency-Key")
		if !validKey(key) {
			writeProblem(w, r, domain.Errorf(domain.EINVALID, "the Idempotency-Key header must be 1-%d visible ASCII characters other than / \\ ? #", MaxIdempotencyKey))
			return
		}
		req, err := decode[checkoutRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		hash := requestHash(req)

		// A concurrent duplicate in this process waits for nobody: 409.
		if !running.start(u.ID, key) {
			writeProblem(w, r, domain.Errorf(domain.ECONFLICT, "a checkout with this Idempotency-Key is still in progress"))
			return
		}
		defer running.done(u.ID, key)

		// Point read of the key's record: a retry replays the first answer.
		prior, err := orders.Idempotency(ctx, u.ID, key)
		switch {
		case err == nil:
			replay(w, r, orders, prior, hash)
			return
		case !domain.IsCode(err, domain.ENOTFOUND):
			writeProblem(w, r, err)
			return
		}

		t := now()
		id := domain.OrderID(t, randomSuffix())
		o, replaced, err := markCart(ctx, carts, orders, u.ID, func(cart domain.Cart) (domain.Order, error) {
			return domain.NewOrder(id, cart, domain.Customer{Name: u.Name, Email: u.Email}, req.ShippingAddress, key, t)
		}, t)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		placed, err := orders.Place(ctx, o, domain.Idempotency{Key: key, RequestHash: hash, CreatedAt: t.UTC()})
		if err != nil && notCommitted(err) {
			unmarkCart(ctx, carts, orders, u.ID, o.ID, replaced, t)
		}
		if domain.IsCode(err, domain.ECONFLICT) {
			// Another instance committed the same key first: answer as a
			// retry would.
			if prior, rerr := orders.Idempotency(ctx, u.ID, key); rerr == nil {
				replay(w, r, orders, prior, hash)
				return
			}
		}
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if err := settleCart(ctx, carts, placed, t); err != nil {
			loggerFrom(ctx).WarnContext(ctx, "settling the cart after checkout failed; the orders feed or the next checkout settles it",
				"user", u.ID, "order", placed.ID, "err", err)
		}
		w.Header().Set("Location", "/v1/orders/"+placed.ID)
		encode(w, http.StatusCreated, viewOrder(placed))
	}
}

// inFlight holds user+key of the checkouts running in this process, so a
// concurrent duplicate gets 409 instead of racing the batch (which would
// fail as a whole anyway: the idempotency record's id is taken).
type inFlight struct{ m sync.Map }

func (f *inFlight) start(userID, key string) bool {
	_, busy := f.m.LoadOrStore(userID+"\x00"+key, struct{}{})
	return !busy
}

func (f *inFlight) done(userID, key string) { f.m.Delete(userID + "\x00" + key) }

// replay answers a repeated Idempotency-Key: the same body gets the first
// response again, another body is refused (422).
func replay(w http.ResponseWriter, r *http.Request, orders *store.Orders, prior domain.Idempotency, hash string) {
	if prior.RequestHash != hash {
		writeProblem(w, r, domain.Errorf(domain.EUNPROCESSABLE, "this Idempotency-Key was used with a different request body"))
		return
	}
	o, err := orders.Get(r.Context(), prior.UserID, prior.OrderID)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/orders/"+o.ID)
	encode(w, http.StatusCreated, viewOrder(o))
}

// requestHash identifies a checkout body: the SHA-256 of its canonical
// encoding (decoded, then re-encoded), so spacing and key order do not
// make the same request look different.
func requestHash(req checkoutRequest) string {
	b, _ := json.Marshal(req)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validKey checks an Idempotency-Key: it becomes part of a document id
// ("idem-<key>"), so Cosmos's id rules apply to it too.
func validKey(key string) bool {
	if len(key) < 1 || len(key) > MaxIdempotencyKey || domain.ValidateID("key", key) != nil {
		return false
	}
	for i := range len(key) {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// markAttempts bounds the re-reads of a cart that changed between the
// checkout's read and its marker write (If-Match, 412).
const markAttempts = 10

// markCart reads the user's cart, makes the order from it (build), and
// writes the pending-checkout marker (PendingOrderID = the order's id) with If-Match
// on the version read, so the order holds exactly the lines of the cart
// the marker is on. A cart changed in between (412) is read again and the
// order made again. A marker left by an earlier checkout is resolved
// first: its order committed, so its lines are settled; its order is not
// there, so it never committed (or has not yet) and the marker is
// replaced, which is returned as replaced. The order records the marked
// cart's _etag as CartETag.
func markCart(ctx context.Context, carts *store.Carts, orders *store.Orders, userID string, build func(domain.Cart) (domain.Order, error), now time.Time) (domain.Order, string, error) {
	for attempt := 1; ; attempt++ {
		cart, err := carts.Get(ctx, userID)
		if err != nil {
			return domain.Order{}, "", err
		}
		replaced := ""
		if p := cart.PendingOrderID; p != "" {
			settled, err := settlePending(ctx, carts, orders, userID, p, now)
			if err != nil {
				return domain.Order{}, "", err
			}
			if settled {
				continue
			}
			replaced = p
		}
		o, err := build(cart)
		if err != nil {
			return domain.Order{}, "", err
		}
		cart.PendingOrderID = o.ID
		// Point write with If-Match on the version read (optimistic
		// concurrency): a concurrent cart change is a 412, not a lost line.
		marked, err := carts.ReplaceIfMatch(ctx, cart, cart.ETag)
		if domain.IsCode(err, domain.EPRECONDITION) || domain.IsCode(err, domain.ENOTFOUND) {
			if attempt < markAttempts {
				store.MeterFrom(ctx).AddRetry()
				if err := pause(ctx, time.Duration(attempt)*time.Millisecond, err); err != nil {
					return domain.Order{}, "", err
				}
				continue
			}
			return domain.Order{}, "", domain.Errorf(domain.ECONFLICT, "the cart kept changing during checkout; try again")
		}
		if err != nil {
			return domain.Order{}, "", err
		}
		o.CartETag = marked.ETag
		return o, replaced, nil
	}
}

// settlePending resolves the marker of an earlier checkout found on the
// cart: point read of its order by (userId, orderId), 1 RU
// (query-point-reads); if it committed, its lines are settled and it
// reports true. ENOTFOUND means the batch never committed: false.
func settlePending(ctx context.Context, carts *store.Carts, orders *store.Orders, userID, orderID string, now time.Time) (bool, error) {
	prev, err := orders.Get(ctx, userID, orderID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := settleCart(ctx, carts, prev, now); err != nil {
		return false, err
	}
	return true, nil
}

// notCommitted reports whether a failed Place certainly committed nothing:
// the batch was refused as a whole (a taken key, a summary race, a bad or
// too large document). A throttled, unavailable or timed-out call may have
// committed on Cosmos, so its marker stays for the next settler.
func notCommitted(err error) bool {
	switch domain.ErrorCode(err) {
	case domain.ECONFLICT, domain.EPRECONDITION, domain.EINVALID, domain.ETOOLARGE:
		return true
	}
	return false
}

// unmarkCart removes this checkout's marker after its batch was refused
// (best effort: a stale marker is harmless, the next checkout finds no
// order behind it and replaces it). If the marker it had replaced belongs
// to an order that has committed since (two instances racing on the same
// key), that order's own settle found this marker and left the cart
// alone: its lines are settled here instead.
func unmarkCart(ctx context.Context, carts *store.Carts, orders *store.Orders, userID, id, replaced string, now time.Time) {
	var prev domain.Order
	if replaced != "" {
		if o, err := orders.Get(ctx, userID, replaced); err == nil {
			prev = o
		}
	}
	_, err := carts.Update(ctx, userID, "", func(c *domain.Cart) error {
		if c.PendingOrderID != id {
			return errNotMine
		}
		c.PendingOrderID = prev.ID
		if !c.Settle(prev, now) {
			c.Recompute(now)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNotMine) {
		loggerFrom(ctx).WarnContext(ctx, "removing a checkout's marker from the cart failed; the next checkout replaces it",
			"user", userID, "order", id, "err", err)
	}
}

// errNotMine stops a cart write whose marker belongs to another checkout
// (or is gone): there is nothing to write.
var errNotMine = domain.Errorf(domain.ECONFLICT, "the cart's checkout marker is not this order's")

// settleAttempts bounds the tries of the settle after an order was placed
// when the store is throttled or unavailable.
const settleAttempts = 5

// settleCart takes the lines order o paid for out of the user's cart, if
// the cart still carries o's marker (Cart.Settle). It runs the server's
// own read-modify-write without If-Match, retried on 412, so neither a
// concurrent change by the user nor a price refresh by the fan-out stops
// it. The order being placed, a throttled store is retried here too
// (Cosmos: retry a 429 after x-ms-retry-after-ms) rather than leaving the
// settle to the orders feed.
func settleCart(ctx context.Context, carts *store.Carts, o domain.Order, now time.Time) error {
	var err error
	for attempt := 1; attempt <= settleAttempts; attempt++ {
		_, err = carts.Update(ctx, o.UserID, "", func(c *domain.Cart) error {
			if !c.Settle(o, now) {
				return errNotMine
			}
			return nil
		})
		if errors.Is(err, errNotMine) {
			return nil
		}
		if !domain.IsCode(err, domain.EUNAVAILABLE) || attempt == settleAttempts {
			return err
		}
		if err := pause(ctx, 10*time.Millisecond<<attempt, err); err != nil {
			return err
		}
	}
	return err
}

// pause waits d, or longer if err is a throttle asking for more
// (RetryAfter), and returns err if ctx ends first.
func pause(ctx context.Context, d time.Duration, err error) error {
	if e, ok := errors.AsType[*domain.Error](err); ok && e.RetryAfter > d {
		d = e.RetryAfter
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return err
	case <-t.C:
		return nil
	}
}
