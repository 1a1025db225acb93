// Package writes holds the shop's write protocols: each method is one
// write a user or a feed worker makes that spans more than one document,
// or that reads before it writes (catalog.go), from its reads to the
// copies it settles. The HTTP handlers and the change-feed workers both
// call it, so each protocol is written once, and a handler only decodes,
// calls one method and encodes.
//
// Every read-modify-write beneath it goes through the repositories and
// repo.Retry: one retry policy, one backoff, If-Match everywhere.
package writes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/store/repo"
)

// Writes runs the write protocols over the repositories.
type Writes struct {
	repos     *repo.Set
	pay       payments.Provider
	now       func() time.Time
	checkouts inFlight
	// running counts the checkouts under way, which carry their order on
	// after their caller has gone (carryOn); Wait waits for them.
	running sync.WaitGroup
	// bound is how long a checkout carries its order on before it answers
	// (domain.CheckoutBound; tests shorten it).
	bound time.Duration
	// shardCounts holds the shard counts of split stocks (shardCount).
	shardCounts sync.Map
}

// New returns the write protocols over repos and the payment provider
// pay; now is the clock of every lastUpdated and createdAt they write
// (nil: time.Now). Without a provider (nil) every payment step fails
// EUNAVAILABLE: the protocols that touch no money still work.
func New(repos *repo.Set, pay payments.Provider, now func() time.Time) *Writes {
	if now == nil {
		now = time.Now
	}
	if pay == nil {
		pay = noProvider{}
	}
	return &Writes{repos: repos, pay: pay, now: now, bound: domain.CheckoutBound}
}

// Repos returns the repositories the protocols write through: the
// process's one Set, which its readers share.
func (w *Writes) Repos() *repo.Set { return w.repos }

// Wait waits until no checkout is under way, or ctx ends (its error). A
// checkout carries its order on for up to domain.CheckoutBound after its
// caller stopped waiting (a client gone, a server past its shutdown
// grace); a shutdown calls Wait before it closes the store, so that work
// ends at a state of the workflow, not at a closed store. What Wait gives
// up on is what a crash leaves: the sweeper carries it on.
func (w *Writes) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetCartLine puts quantity of the product in the user's cart (the cart
// PUT): it reads the product for the line's copies, writes the cart
// (ifMatch as the client sent it), and then reads the product once more.
// The second read closes a race no version guard can: a price change
// committed between the first read and the cart write fans out to the
// carts that hold the product, and this cart did not hold it yet, so
// nothing else would ever refresh the line. Cost: one point read more per
// PUT, and a cart write only when the product did move.
//
// sku names the variant ("" for a product without variants): each
// variant of a product is its own line.
func (w *Writes) SetCartLine(ctx context.Context, userID, productID, sku string, quantity int, ifMatch repo.Precondition) (domain.Cart, error) {
	return w.putCartLine(ctx, userID, productID, ifMatch, func(c *domain.Cart, p domain.Product) error {
		return c.SetQuantity(p, sku, quantity, w.now())
	})
}

// AddCartLine adds quantity of the product to the user's cart (the cart
// POST, "Add to cart"): the line's quantity grows by it, inside the same
// read-modify-write as SetCartLine, so two adds from two tabs both count.
func (w *Writes) AddCartLine(ctx context.Context, userID, productID, sku string, quantity int, ifMatch repo.Precondition) (domain.Cart, error) {
	return w.putCartLine(ctx, userID, productID, ifMatch, func(c *domain.Cart, p domain.Product) error {
		return c.AddQuantity(p, sku, quantity, w.now())
	})
}

// putCartLine is SetCartLine's protocol with change applied to the cart.
func (w *Writes) putCartLine(ctx context.Context, userID, productID string, ifMatch repo.Precondition, change func(*domain.Cart, domain.Product) error) (domain.Cart, error) {
	p, err := w.repos.Products.Get(ctx, productID)
	if err != nil {
		return domain.Cart{}, err
	}
	c, err := w.changeCart(ctx, userID, ifMatch, func(c *domain.Cart) error {
		return change(c, p)
	})
	if err != nil {
		return domain.Cart{}, err
	}
	cur, err := w.repos.Products.GetAny(ctx, productID)
	switch {
	case domain.IsCode(err, domain.ENOTFOUND):
		return c, nil
	case err != nil:
		return domain.Cart{}, err
	case cur.Version == p.Version:
		return c, nil
	}
	refreshed, _, err := w.RefreshCart(ctx, c, cur)
	return refreshed, err
}

// RemoveCartLine takes the line of the variant sku of the product out of
// the user's cart; removing a line that is not there changes nothing
// (DELETE is idempotent).
func (w *Writes) RemoveCartLine(ctx context.Context, userID, productID, sku string, ifMatch repo.Precondition) (domain.Cart, error) {
	return w.changeCart(ctx, userID, ifMatch, func(c *domain.Cart) error {
		c.RemoveLine(productID, sku, w.now())
		return nil
	})
}

// errResolved is the lost race of a cart change that found a checkout's
// marker and resolved it: the change runs again on the cart as it is now.
var errResolved = errors.New("a checkout of the cart was resolved")

// changeCart is the owner's change fn of the cart (a line put or removed,
// a checkout's marker), the cart's read-modify-write (Carts.Update) once
// no checkout is in progress on it: a marker found on the cart is
// resolved first (resolve), and the change then runs on the cart as it
// is after the checkout, as if it had come after it. ifMatch is the
// client's: a cart a checkout settled meanwhile has changed, so it is
// 412 then.
func (w *Writes) changeCart(ctx context.Context, userID string, ifMatch repo.Precondition, fn func(*domain.Cart) error) (domain.Cart, error) {
	var c domain.Cart
	err := repo.Retry(ctx, func() error {
		var pending *domain.PendingCheckout
		var err error
		c, err = w.repos.Carts.Update(ctx, userID, ifMatch, func(c *domain.Cart) error {
			if c.Pending != nil {
				pending = c.Pending
				return errResolved
			}
			return fn(c)
		})
		if pending == nil {
			return err
		}
		if err := w.resolve(ctx, userID, *pending); err != nil {
			return err
		}
		return repo.Lost(errResolved)
	})
	return c, err
}

// Cart is the cart screen's read: one point read, and while the cart
// carries a checkout's claim one more, of its order: an order that rests
// is settled first (its paid lines out, or for a failed order the claim
// alone), so that no screen shows paid lines after the checkout
// answered; an order in progress, or none yet, leaves the cart as it was
// before the checkout.
func (w *Writes) Cart(ctx context.Context, userID string) (domain.Cart, error) {
	c, err := w.repos.Carts.Get(ctx, userID)
	if err != nil {
		return c, err
	}
	return w.cartAsRead(ctx, c)
}

// pendingMark is how a stored cart that carries a checkout's claim
// begins its field (domain.Cart.Pending, omitted when nil). Inside a
// string value its quotes would be escaped, so a cart without it has no
// claim; one with it may (CartDoc then decodes and looks).
var pendingMark = []byte(`"pendingCheckout":`)

// CartDoc is Cart for a screen that keeps what it rendered of each
// document's bytes (api/renders.go): the cart as stored and its ETag, not
// decoded, unless it carries a checkout's claim, when it is Cart's answer
// encoded. The same reads and writes as Cart.
func (w *Writes) CartDoc(ctx context.Context, userID string) (doc []byte, etag string, err error) {
	doc, etag, err = w.repos.Carts.Read(ctx, userID)
	if err != nil || !bytes.Contains(doc, pendingMark) {
		return doc, etag, err
	}
	c, err := repo.Decode[domain.Cart](doc)
	if err != nil {
		return nil, "", err
	}
	if c, err = w.cartAsRead(ctx, c); err != nil {
		return nil, "", err
	}
	doc, err = json.Marshal(c)
	return doc, c.ETag, err
}

// cartAsRead is the cart screen's answer from c, the cart as read.
func (w *Writes) cartAsRead(ctx context.Context, c domain.Cart) (domain.Cart, error) {
	if c.Pending == nil {
		return c, nil
	}
	userID := c.UserID
	o, voided, err := w.repos.Orders.Lookup(ctx, userID, c.Pending.OrderID)
	switch {
	case domain.IsCode(err, domain.ENOTFOUND), err == nil && voided:
		// Not opened (yet): the cart is as it was before the checkout.
		return c, nil
	case err != nil:
		return domain.Cart{}, err
	}
	// The cart as read is where the settle starts: one write, no read.
	return w.settleFrom(ctx, c, o)
}

// RefreshCart brings the cart's line of p up to p under the freshness rule
// (domain.CartLine.Refresh), starting from c as the caller read it and
// reading again only if the cart changed since. It reports the cart and
// whether it was written; a cart that expired meanwhile is not an error.
// The price fan-out and the cart PUT both end here, and neither checks
// the rule before: it runs once per attempt, inside the read-modify-write,
// and a line it leaves as it was costs no write (nor, on the first
// attempt, a read).
func (w *Writes) RefreshCart(ctx context.Context, c domain.Cart, p domain.Product) (domain.Cart, bool, error) {
	out, err := w.repos.Carts.UpdateExisting(ctx, c, func(c *domain.Cart) error {
		if !c.ApplyProduct(p, w.now()) {
			return repo.ErrUnchanged
		}
		return nil
	})
	switch {
	case errors.Is(err, repo.ErrUnchanged):
		return out, false, nil
	case domain.IsCode(err, domain.ENOTFOUND):
		return c, false, nil
	case err != nil:
		return domain.Cart{}, false, err
	}
	return out, true, nil
}

// CreateProduct stores a new product with stock units available of each
// of its SKUs (its variants', or its implicit one), or variantStock's
// count for a SKU it names. The product's create is conditional
// (ECONFLICT if the id exists) and is the create's one decision: only the
// request that wins it then writes the stock documents, so a request
// that loses writes nothing. The product is created carrying its
// availability copies from the requested counts, with source version 0:
// each stock's first version is newer, and the inventory feed
// (Product.ApplyStock) finds the status already right.
//
// The stock's write may find the document of a product of the same id
// deleted long ago (its ttl passed, its stock stayed): it overwrites it.
// A crash between the two writes leaves a product whose availability
// says it is tracked and no stock: a checkout refuses it as short
// (checkStock), never sells it without a limit, until the admin sets its
// stock (SetStock creates the document).
func (w *Writes) CreateProduct(ctx context.Context, p domain.Product, stock int64, variantStock map[string]int64) (domain.Product, error) {
	units := func(sku string) int64 {
		if n, ok := variantStock[sku]; ok {
			return n
		}
		return stock
	}
	if len(p.Variants) > 0 {
		p.Variants = slices.Clone(p.Variants) // the caller's stay as they are
		for i := range p.Variants {
			p.Variants[i].Availability = domain.Availability{Status: domain.StatusOf(units(p.Variants[i].SKU))}
		}
		// The same SKUs: SetVariants keeps each one's availability, and
		// derives the product's price and status from them.
		p.SetVariants(p.Variants)
	} else {
		p.Availability = domain.Availability{Status: domain.StatusOf(stock)}
	}
	p.KeepImage()
	created, err := w.repos.Products.Create(ctx, p)
	if err != nil {
		return domain.Product{}, err
	}
	// The product stands now, so its stock must follow: ride out a
	// throttled store rather than leave it unsellable.
	for _, sku := range p.SKUs() {
		if err := repo.Persist(ctx, func() error {
			_, err := w.repos.Inventory.SetStock(ctx, p.ID, sku, units(sku), "", w.now())
			return err
		}); err != nil {
			return domain.Product{}, err
		}
	}
	return created, nil
}

// SetStock sets the units of the variant sku ("" for a product without
// variants) of an existing product that can still be bought (ifMatch as
// the client sent it, on the stock's ETag); the inventory feed then
// brings the availability copies along. ENOTFOUND for a SKU the product
// does not sell; ECONFLICT for a stock split into shards (SetShards).
func (w *Writes) SetStock(ctx context.Context, productID, sku string, n int64, ifMatch repo.Precondition) (domain.Stock, error) {
	if err := w.sells(ctx, productID, sku); err != nil {
		return domain.Stock{}, err
	}
	return w.repos.Inventory.SetStock(ctx, productID, sku, n, ifMatch, w.now())
}

// SetShards splits the stock of the variant sku of an existing product
// into n shards, or merges it back into fewer (repo.Inventory.SetShards),
// and answers its shards as they then are. ENOTFOUND as SetStock, and for
// a stock not tracked.
func (w *Writes) SetShards(ctx context.Context, productID, sku string, n int) (domain.StockLayout, error) {
	if err := w.sells(ctx, productID, sku); err != nil {
		return domain.StockLayout{}, err
	}
	return w.repos.Inventory.SetShards(ctx, productID, sku, n, w.now())
}

// sells checks that productID exists and sells the variant sku: EINVALID
// naming /sku for a product with variants and no SKU, ENOTFOUND for one
// it does not sell.
func (w *Writes) sells(ctx context.Context, productID, sku string) error {
	p, err := w.repos.Products.Get(ctx, productID)
	if err != nil {
		return err
	}
	if _, ok := p.VariantOf(sku); !ok {
		if sku == "" {
			return &domain.Error{Code: domain.EINVALID, Message: fmt.Sprintf("product %q is sold in variants: name one (sku)", productID),
				Fields: []domain.FieldError{{Pointer: "/sku", Detail: "required: one of " + strings.Join(p.SKUs(), ", ")}}}
		}
		return domain.Errorf(domain.ENOTFOUND, "product %q has no variant %q", productID, sku)
	}
	return nil
}

// noProvider is the payment provider of Writes made without one.
type noProvider struct{}

var errNoProvider = domain.Errorf(domain.EUNAVAILABLE, "no payment provider is configured")

func (noProvider) Authorize(context.Context, payments.Authorization) (payments.Payment, error) {
	return payments.Payment{}, errNoProvider
}
func (noProvider) Capture(context.Context, string, string) (payments.Payment, error) {
	return payments.Payment{}, errNoProvider
}
func (noProvider) Void(context.Context, string, string) (payments.Payment, error) {
	return payments.Payment{}, errNoProvider
}
func (noProvider) Refund(context.Context, string, string) (payments.Payment, error) {
	return payments.Payment{}, errNoProvider
}
func (noProvider) Get(context.Context, string) (payments.Payment, error) {
	return payments.Payment{}, errNoProvider
}
