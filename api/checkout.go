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
// key); the cart is reset afterwards with If-Match on the version read.
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

		cart, err := carts.Get(ctx, u.ID)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		t := now()
		o, err := domain.NewOrder(domain.OrderID(t, randomSuffix()), cart,
			domain.Customer{Name: u.Name, Email: u.Email}, req.ShippingAddress, key, t)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		placed, err := orders.Place(ctx, o, domain.Idempotency{Key: key, RequestHash: hash, CreatedAt: t.UTC()})
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
		if err := resetCart(ctx, carts, cart, t); err != nil && !domain.IsCode(err, domain.EPRECONDITION) {
			loggerFrom(ctx).WarnContext(ctx, "cart reset after checkout failed; the orders feed retries it",
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

// resetAttempts bounds the tries of the cart reset after an order was
// placed when the store is throttled or unavailable.
const resetAttempts = 5

// resetCart empties the cart an order was made from. Its _etag may have
// moved without the user: a feed worker refreshing a line's price writes
// the cart too. So the guard is the lines, not the _etag: the same
// products and quantities are reset (a retried read-modify-write); a cart
// the user changed since is left alone (EPRECONDITION). The order is
// already placed, so a throttled store is retried here (Cosmos: retry a
// 429 after x-ms-retry-after-ms) rather than leaving the paid lines for
// the user's next checkout.
func resetCart(ctx context.Context, carts *store.Carts, from domain.Cart, now time.Time) error {
	var err error
	for attempt := 1; attempt <= resetAttempts; attempt++ {
		_, err = carts.Update(ctx, from.UserID, "", func(c *domain.Cart) error {
			if !sameLines(*c, from) {
				return domain.Errorf(domain.EPRECONDITION, "the cart changed since the checkout read it")
			}
			c.Reset(now)
			return nil
		})
		if !domain.IsCode(err, domain.EUNAVAILABLE) || attempt == resetAttempts {
			return err
		}
		wait := 10 * time.Millisecond << attempt
		if e, ok := errors.AsType[*domain.Error](err); ok && e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
	return err
}

// sameLines reports whether two versions of a cart hold the same products
// in the same quantities, whatever their prices.
func sameLines(a, b domain.Cart) bool {
	if len(a.Items) != len(b.Items) {
		return false
	}
	for _, l := range a.Items {
		m, ok := b.Line(l.ProductID)
		if !ok || m.Quantity != l.Quantity {
			return false
		}
	}
	return true
}
