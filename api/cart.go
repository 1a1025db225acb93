package api

import (
	"context"
	"net/http"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// handleCartGet is the cart screen: ONE point read in carts by (userId,
// userId); the lines carry name and price copies (model-denormalize-reads).
func handleCartGet(ws *writes.Writes, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, etag, err := ws.CartDoc(r.Context(), userFrom(r.Context()).ID)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, etag)
		writeDoc(w, r, rs, "cart", doc, viewCart)
	}
}

type cartItemRequest struct {
	Quantity int `json:"quantity" validate:"required,min=1,max=99"`
}

// cartLineWrite is the write behind a cart line route:
// writes.SetCartLine (the PUT: the line holds quantity) or
// writes.AddCartLine (the POST, the storefront's "Add to cart": the line
// grows by quantity).
type cartLineWrite func(ctx context.Context, userID, productID, sku string, quantity int, ifMatch repo.Precondition) (domain.Cart, error)

// handleCartLine writes one line of the caller's cart, the product's
// variant ?sku= (none for a product without variants): with the client's
// If-Match a stale cart is 412; without it the server retries its own
// lost races.
func handleCartLine(write cartLineWrite) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, sku, err := lineParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[cartItemRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		c, err := write(r.Context(), userFrom(r.Context()).ID, id, sku, req.Quantity, ifMatch(r))
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
func handleCartDelete(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, sku, err := lineParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		c, err := ws.RemoveCartLine(r.Context(), userFrom(r.Context()).ID, id, sku, ifMatch(r))
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, c.ETag)
		encode(w, http.StatusOK, viewCart(c))
	}
}

// lineParams reads the {productId} and the ?sku= that name a cart line
// or a stock.
func lineParams(r *http.Request) (productID, sku string, err error) {
	if productID, err = pathProductID(r); err != nil {
		return "", "", err
	}
	sku, err = skuParam(r)
	return productID, sku, err
}
