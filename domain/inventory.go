package domain

import (
	"fmt"
	"strings"
	"time"
)

// Inventory documents live in `inventory` (pk /productId), one logical
// partition per product: its stock document and one reservation per
// checkout that took units of it. Stock is not a field of the product:
// every sale would then rewrite the product page's document (a new _etag
// for every cached copy) and wake the products feed, whose fan-out
// serves the carts. The product carries only its availability status, a
// copy that changes when the status does (Availability).
const (
	TypeStock       = "stock"
	TypeReservation = "reservation"

	// StockID is the id of a product's stock document in its partition.
	StockID = "stock"

	// MaxStock bounds the units an admin can set.
	MaxStock = 1_000_000
	// LowStock is the most units a product has when its status is
	// low_stock.
	LowStock = 5
)

// Availability statuses, as the product page and the cart lines show them.
const (
	InStock    = "in_stock"
	LowInStock = "low_stock"
	SoldOut    = "sold_out"
)

// Stock is the units of one variant of a product that can still be
// bought: the document StockIDOf(SKU) in the product's partition.
type Stock struct {
	Meta
	ProductID string `json:"productId"`
	// SKU names the variant; empty for a product without variants.
	SKU string `json:"sku,omitempty"`
	// Available never goes below 0: a checkout takes units with a patch
	// whose condition is available >= n, in one transactional batch with
	// its reservation (store/writes).
	Available int64 `json:"available"`
	// Version counts every write, so the availability copy on the
	// product only ever moves forward.
	Version     int64     `json:"version"`
	LastUpdated time.Time `json:"lastUpdated"`
	// Shard is the index of this document among the stock's shards: 0
	// for the home document (ProductID is the product's id), k ≥ 1 for a
	// TypeStockShard document in partition ShardKey(product, k).
	Shard int `json:"shard,omitempty"`
	// Shards, on the home document only, is how many shards takes start
	// on (0 and 1: the stock is not split), and ShardsMade how many shard
	// documents exist (shards 0 … ShardsMade−1; a merge retires shards
	// but never deletes them, so ShardsMade never goes down): see
	// domain/shards.go.
	Shards     int `json:"shards,omitempty"`
	ShardsMade int `json:"shardsMade,omitempty"`
	// Sending is the units a transfer took from this shard that its
	// sender has not yet seen delivered (Transfer): in flight, counted by
	// a take that would refuse, so it waits for them instead.
	Sending int64 `json:"sending,omitempty"`
}

// NewStock is the stock document of the variant sku of productID with n
// units.
func NewStock(productID, sku string, n int64, now time.Time) Stock {
	return Stock{
		Meta:      Meta{ID: StockIDOf(sku), Type: TypeStock, SchemaVersion: SchemaVersion},
		ProductID: productID, SKU: sku, Available: n, Version: 1, LastUpdated: now.UTC(),
	}
}

// StockIDOf is the id of the stock document of the variant sku: StockID
// for the implicit variant, "stock:" and the SKU for a variant. Every
// variant's stock shares the product's partition, so the flash-sale
// guarantee (one conditional patch per take) holds per SKU.
func StockIDOf(sku string) string {
	if sku == "" {
		return StockID
	}
	return StockID + ":" + sku
}

// StatusOf is the availability status of n available units.
func StatusOf(n int64) string {
	switch {
	case n <= 0:
		return SoldOut
	case n <= LowStock:
		return LowInStock
	}
	return InStock
}

// Availability is the copy of a product's stock status on the product
// (and, through it, on cart lines), kept by the inventory feed. It changes
// only when the status does, so a sale does not rewrite the product.
type Availability struct {
	Status string `json:"status,omitempty"`
	// SourceVersion is the stock version the status was taken from: the
	// copy only ever takes a newer one.
	SourceVersion int64 `json:"sourceVersion,omitempty"`
}

// ApplyStock takes s's status onto the copy of its variant if s is newer
// and the status differs, and reports whether the product changed (its
// Version moves, so the copies of the product follow). A product with
// variants shows the best of theirs (variantStatus); a stock whose SKU
// the product does not sell (a variant since removed) changes nothing.
func (p *Product) ApplyStock(s Stock, now time.Time) bool {
	st := StatusOf(s.Available)
	var copyOf *Availability
	switch {
	case s.SKU == "" && len(p.Variants) == 0:
		copyOf = &p.Availability
	case s.SKU != "" && p.variantIndex(s.SKU) >= 0:
		copyOf = &p.Variants[p.variantIndex(s.SKU)].Availability
	default:
		return false
	}
	if s.Version <= copyOf.SourceVersion || st == copyOf.Status {
		return false
	}
	before := CartCopyOf(*p)
	*copyOf = Availability{Status: st, SourceVersion: s.Version}
	p.noteVariantStock(s.SKU)
	p.NoteCopy(before)
	p.Version++
	p.LastUpdated = now.UTC()
	return true
}

// Reservation states. A reservation is held from the moment its units
// leave the stock; it is committed once its order stands, and released
// (the units back in stock, exactly once) when the checkout failed, died,
// or its order was cancelled.
const (
	ReservationHeld      = "held"
	ReservationCommitted = "committed"
	ReservationReleased  = "released"
)

// Reservation is the units one checkout took from one product's stock,
// written in the same transactional batch as the take.
type Reservation struct {
	Meta
	ProductID string `json:"productId"`
	// SKU names the variant whose stock the units came from.
	SKU       string    `json:"sku,omitempty"`
	OrderID   string    `json:"orderId"`
	UserID    string    `json:"userId"`
	Quantity  int64     `json:"quantity"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"createdAt"`
	// Shard is the shard of a split stock the reservation is in (its
	// ProductID is then ShardKey(product, Shard)); MovedTo, on a
	// reservation in state ReservationMoved, the shard its take went on
	// to (domain/shards.go).
	Shard   int  `json:"shard,omitempty"`
	MovedTo *int `json:"movedTo,omitempty"`
}

// ReservationID is the id of the reservation of orderID's line of the
// variant sku: a retried reservation of the same line is a 409, never a
// second take.
func ReservationID(orderID, sku string) string {
	if sku == "" {
		return "res-" + orderID
	}
	return "res-" + orderID + ":" + sku
}

// NewReservation is the held reservation of q units of the variant sku of
// productID for the order.
func NewReservation(productID, sku, orderID, userID string, q int64, now time.Time) Reservation {
	return Reservation{
		Meta:      Meta{ID: ReservationID(orderID, sku), Type: TypeReservation, SchemaVersion: SchemaVersion},
		ProductID: productID, SKU: sku, OrderID: orderID, UserID: userID, Quantity: q,
		State: ReservationHeld, CreatedAt: now.UTC(),
	}
}

// Shortage is one line a checkout could not serve.
type Shortage struct {
	ProductID string `json:"productId"`
	SKU       string `json:"sku,omitempty"`
	Requested int64  `json:"requested"`
	Available int64  `json:"available"`
}

// OutOfStock is the refusal of a checkout some of whose lines the stock
// cannot serve: it names every such line, and nothing was reserved.
func OutOfStock(items []Shortage) *Error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = LineLabel(it.ProductID, it.SKU)
	}
	return &Error{Code: EOUTOFSTOCK, Message: fmt.Sprintf("not enough in stock: %s", strings.Join(ids, ", ")), Shortages: items}
}

// RepairStock sets the copy of s's variant to s's status, unless the copy
// was taken from a newer stock version: the audit's repair, which unlike
// ApplyStock also rewrites a copy that claims s's version and says
// another status. It reports whether the copy changed; the caller moves
// the product's versions.
func (p *Product) RepairStock(s Stock) bool {
	var copyOf *Availability
	switch i := p.variantIndex(s.SKU); {
	case s.SKU == "" && len(p.Variants) == 0:
		copyOf = &p.Availability
	case s.SKU != "" && i >= 0:
		copyOf = &p.Variants[i].Availability
	default:
		return false
	}
	want := Availability{Status: StatusOf(s.Available), SourceVersion: s.Version}
	if s.Version < copyOf.SourceVersion || *copyOf == want {
		return false
	}
	*copyOf = want
	p.noteVariantStock(s.SKU)
	return true
}

// noteVariantStock follows a change of the variant sku's availability
// copy: the product shows the best of its variants' statuses, and its own
// SourceVersion, which no stock document owns on a product with variants,
// counts these changes, so each one names a new availability event
// (ProductEventsOf).
func (p *Product) noteVariantStock(sku string) {
	if sku == "" {
		return
	}
	p.deriveFromVariants()
	p.Availability.SourceVersion++
}
