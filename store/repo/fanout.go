package repo

import (
	"context"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// TypeFanout is the discriminator of a fan-out record in `leases`.
const TypeFanout = "fanout"

// FanoutRecord remembers what the last successful cart fan-out of one
// product pushed to the carts (feedworkers/fanout.go decides from it
// whether a product change needs the fan-out at all). It lives in
// `leases` (pk /id, the feed workers' own bookkeeping) under
// "fanout.<productId>"; the container has no TTL, so a deleted product's
// record stays.
type FanoutRecord struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	SchemaVersion  int    `json:"schemaVersion"`
	ProductID      string `json:"productId"`
	ProductVersion int64  `json:"productVersion"`
	// CopyVersion is the product's CopyVersion pushed.
	CopyVersion int64 `json:"copyVersion,omitempty"`
	// Pushed is the copy the fan-out pushed (domain.CartCopyOf).
	Pushed domain.CartCopy `json:"pushed"`
}

// Fanouts is the repository of the fan-out records in `leases`.
type Fanouts struct{ c store.Container }

// NewFanouts returns the fan-out records' repository over s.
func NewFanouts(s store.Store) *Fanouts { return &Fanouts{s.Container(store.LeasesContainer)} }

func fanoutID(productID string) string { return "fanout." + productID }

// Get point-reads the record of a product's last fan-out; ENOTFOUND if
// the product never fanned out.
func (r *Fanouts) Get(ctx context.Context, productID string) (FanoutRecord, error) {
	id := fanoutID(productID)
	return ReadDoc[FanoutRecord](ctx, r.c, id, id)
}

// Put upserts the record of p's fan-out: the copy of p the carts now
// hold. Unguarded: a concurrent writer may leave an older version's
// record, which costs one more fan-out, never one less.
func (r *Fanouts) Put(ctx context.Context, p domain.Product) error {
	id := fanoutID(p.ID)
	_, err := UpsertDoc(ctx, r.c, id, FanoutRecord{
		ID: id, Type: TypeFanout, SchemaVersion: domain.SchemaVersion,
		ProductID: p.ID, ProductVersion: p.Version, CopyVersion: p.CopyVersion, Pushed: domain.CartCopyOf(p),
	}, nil)
	return err
}

// FanoutStats is what the cart fan-out of product changes cost: its
// cross-partition queries are the one fan-out of the shop, so the feed
// workers count them and GET /v1/admin/feeds reports them.
type FanoutStats struct {
	// Products is how many product changes were fanned out.
	Products int `json:"products"`
	// Queries and QueryRU: the cross-partition queries for the carts
	// holding the product, and their Request Units.
	Queries int     `json:"queries"`
	QueryRU float64 `json:"queryRu"`
	// CartsRead came back from the queries; CartsUpdated were written.
	CartsRead    int `json:"cartsRead"`
	CartsUpdated int `json:"cartsUpdated"`
	// Retries counts carts re-read after losing an If-Match race.
	Retries int `json:"retries"`
	// Skipped counts the product changes whose fan-out was skipped: no
	// cart copy could be stale.
	Skipped int `json:"skipped"`
}

// Add adds o's counts to s.
func (s *FanoutStats) Add(o FanoutStats) {
	s.Products += o.Products
	s.Queries += o.Queries
	s.QueryRU += o.QueryRU
	s.CartsRead += o.CartsRead
	s.CartsUpdated += o.CartsUpdated
	s.Retries += o.Retries
	s.Skipped += o.Skipped
}
