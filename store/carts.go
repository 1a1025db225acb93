package store

import (
	"context"

	"shop/domain"
)

// Carts is the repository of `carts` (pk /userId, one cart per user with
// id = userId).
type Carts struct{ c Container }

// NewCarts returns the carts repository over s.
func NewCarts(s Store) *Carts { return &Carts{s.Container(CartsContainer)} }

// Get returns the user's cart, or an empty one (with no ETag) if the user
// has none: point read by (userId, userId), 1 RU (query-point-reads).
func (r *Carts) Get(ctx context.Context, userID string) (domain.Cart, error) {
	c, err := ReadDoc[domain.Cart](ctx, r.c, userID, userID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.NewCart(userID), nil
	}
	return c, err
}

// Update is the cart's read-modify-write, creating the cart on first use:
//
//	carts.Update(ctx, userID, ifMatch, func(c *domain.Cart) error { return c.SetQuantity(p, q, now) })
//
// ifMatch is the client's If-Match ("" lets the server retry its own
// races on 412).
func (r *Carts) Update(ctx context.Context, userID, ifMatch string, fn func(*domain.Cart) error) (domain.Cart, error) {
	return update(ctx, r.c, userID, userID, ifMatch, func() domain.Cart { return domain.NewCart(userID) }, fn)
}

// ReplaceIfMatch writes the cart only if it is still at etag, and never
// retries: the feed workers use it to apply a change to the version they
// read, and the orders feed to settle a checkout on the cart version it
// read.
func (r *Carts) ReplaceIfMatch(ctx context.Context, c domain.Cart, etag string) (domain.Cart, error) {
	b, err := encode(c)
	if err != nil {
		return domain.Cart{}, err
	}
	w, err := r.c.Replace(ctx, c.UserID, c.ID, b, &WriteOptions{IfMatch: etag})
	if err != nil {
		return domain.Cart{}, err
	}
	return decodeOne[domain.Cart](w.Item)
}

// WithProduct returns one page of the open carts that hold productID.
// This is the one cross-partition query of the shop: the price fan-out
// runs rarely (a price change) and reads only carts that need the update,
// through ARRAY_CONTAINS on the flat productIds (indexed in migrations).
func (r *Carts) WithProduct(ctx context.Context, productID string, limit int, continuation string) ([]domain.Cart, string, error) {
	return queryPage[domain.Cart](ctx, r.c, Query{
		Filters: []Filter{
			{Path: "type", Op: OpEqual, Value: domain.TypeCart},
			{Path: "productIds", Op: OpArrayContains, Value: productID},
		},
		Limit:        limit,
		Continuation: continuation,
	})
}
