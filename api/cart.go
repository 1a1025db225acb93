package api

import (
	"net/http"
	"time"

	"shop/domain"
	"shop/store"
)

// handleCartGet is the cart screen: ONE point read in carts by (userId,
// userId); the lines carry name and price copies (model-denormalize-reads).
func handleCartGet(carts *store.Carts) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := carts.Get(r.Context(), userFrom(r.Context()).ID)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, c.ETag)
		encode(w, http.StatusOK, viewCart(c))
	}
}

type cartItemRequest struct {
	Quantity int `json:"quantity" validate:"required,min=1,max=99"`
}

// handleCartPut sets a line's quantity. It reads the product once for the
// name and price copies, then runs the cart's read-modify-write: with the
// client's If-Match a stale cart is 412; without it the server retries its
// own lost races.
func handleCartPut(products *store.Products, carts *store.Carts, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "productId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[cartItemRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		p, err := products.Get(r.Context(), id)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		c, err := carts.Update(r.Context(), userFrom(r.Context()).ID, ifMatch(r), func(c *domain.Cart) error {
			return c.SetQuantity(p, req.Quantity, now())
		})
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, c.ETag)
		encode(w, http.StatusOK, viewCart(c))
	}
}

// handleCartDelete removes a line and answers the cart; removing a line
// that is not there answers the cart too (DELETE is idempotent).
func handleCartDelete(carts *store.Carts, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "productId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		c, err := carts.Update(r.Context(), userFrom(r.Context()).ID, ifMatch(r), func(c *domain.Cart) error {
			c.RemoveLine(id, now())
			return nil
		})
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, c.ETag)
		encode(w, http.StatusOK, viewCart(c))
	}
}
