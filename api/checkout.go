package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/writes"
)

// MaxIdempotencyKey bounds the Idempotency-Key header.
const MaxIdempotencyKey = 255

type checkoutRequest struct {
	ShippingAddress domain.Address `json:"shippingAddress" validate:"required"`
	// PaymentMethod is a payment-method token (Stripe's test tokens, or
	// one Stripe.js made in the browser): card numbers never reach the
	// shop.
	PaymentMethod string `json:"paymentMethod" validate:"required,paymentmethod"`
}

// handleCheckout turns the caller's cart into an order and carries it
// through the workflow (writes.Checkout: one cart pays once, whatever the
// keys, tabs or instances). 201 with the order once it is placed; 202
// with the order as it is when the workflow has not ended within
// domain.CheckoutBound (Location names it: poll it); a declined card is
// the 402 problem, a short line the 409 out-of-stock one. A repeated
// Idempotency-Key with the same body answers its order again, as it is
// now.
func handleCheckout(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := userFrom(r.Context())
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
		o, err := ws.Checkout(r.Context(), writes.CheckoutRequest{
			UserID:        u.ID,
			Customer:      domain.Customer{Name: u.Name, Email: u.Email},
			Address:       req.ShippingAddress,
			PaymentMethod: req.PaymentMethod,
			Key:           key,
			RequestHash:   requestHash(req),
		})
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		w.Header().Set("Location", "/v1/orders/"+o.ID)
		if o.InProgress() {
			encode(w, http.StatusAccepted, viewOrder(o))
			return
		}
		encode(w, http.StatusCreated, viewOrder(o))
	}
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
