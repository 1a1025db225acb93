package repo

import (
	"context"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Carts is the repository of `carts` (pk /userId, one cart per user with
// id = userId).
type Carts struct{ c store.Container }

// NewCarts returns the carts repository over s.
func NewCarts(s store.Store) *Carts { return &Carts{s.Container(store.CartsContainer)} }

// Get returns the user's cart, or an empty one (with no ETag) if the user
// has none: point read by (userId, userId), 1 RU (query-point-reads).
func (r *Carts) Get(ctx context.Context, userID string) (domain.Cart, error) {
	c, err := ReadDoc[domain.Cart](ctx, r.c, userID, userID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.NewCart(userID), nil
	}
	return c, err
}

// Read is Get's one point read without the decoding: the cart as stored
// and its ETag, or an empty cart's document (with no ETag) if the user has
// none.
func (r *Carts) Read(ctx context.Context, userID string) ([]byte, string, error) {
	it, err := r.c.Read(ctx, userID, userID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		doc, err := encode(domain.NewCart(userID))
		return doc, "", err
	}
	return it.Item, it.ETag, err
}

// Unchanged reports whether the user's cart is still at version etag: a
// point read with If-None-Match, charged as a read, which does not send
// the cart back when it is (Container.ReadIfNoneMatch). A cart gone
// since has changed.
func (r *Carts) Unchanged(ctx context.Context, userID, etag string) (bool, error) {
	it, err := r.c.ReadIfNoneMatch(ctx, userID, userID, etag)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return false, nil
	}
	return it.NotModified, err
}

// Update is the cart's read-modify-write (see update), creating the cart
// on first use:
//
//	carts.Update(ctx, userID, ifMatch, func(c *domain.Cart) error { return c.SetQuantity(p, "", q, now) })
//
// ifMatch is the client's If-Match (see Precondition). fn may return
// ErrUnchanged to write nothing.
func (r *Carts) Update(ctx context.Context, userID string, ifMatch Precondition, fn func(*domain.Cart) error) (domain.Cart, error) {
	c, _, err := update(ctx, r.c, userID, userID, rmw[domain.Cart]{what: "your cart", ifMatch: ifMatch, create: func() domain.Cart { return domain.NewCart(userID) }}, fn)
	return c, err
}

// UpdateExisting is Update for the server's own writes to a cart that
// should exist (settling a checkout, refreshing a line): a missing cart
// (expired by its TTL) is ENOTFOUND, never created. from, when it has an
// _etag, is the cart as the caller already read it, and the first attempt
// starts from it instead of reading again. from is the caller's and stays
// as it was: fn changes a copy of its lines (a cart passed again, by a
// caller that tries once more, must not hold what an earlier try did).
func (r *Carts) UpdateExisting(ctx context.Context, from domain.Cart, fn func(*domain.Cart) error) (domain.Cart, error) {
	o := rmw[domain.Cart]{}
	if from.ETag != "" {
		from.Items = slices.Clone(from.Items)
		from.ProductIDs = slices.Clone(from.ProductIDs)
		o.from, o.fromETag = &from, from.ETag
	}
	c, _, err := update(ctx, r.c, from.UserID, from.UserID, o, fn)
	return c, err
}

// WithProduct returns one page of the open carts that hold productID.
// This is the one cross-partition query of the shop: the price fan-out
// runs rarely (a price change) and reads only carts that need the update,
// through ARRAY_CONTAINS on the flat productIds (indexed in migrations).
func (r *Carts) WithProduct(ctx context.Context, productID string, limit int, continuation string) ([]domain.Cart, string, error) {
	return queryPage[domain.Cart](ctx, r.c, store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeCart},
			{Path: "productIds", Op: store.OpArrayContains, Value: productID},
		},
		Limit:        limit,
		Continuation: continuation,
	})
}
