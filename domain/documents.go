package domain

import "time"

// Document types: every document carries id, type (the discriminator) and
// schemaVersion (Meta, SchemaVersion), so several types can share a
// container and old documents are upgraded lazily (schema.go).
// migrations/containers.go says which container holds which type.
const (
	TypeProduct         = "product"
	TypeCategories      = "categories"
	TypeReview          = "review"
	TypeCart            = "cart"
	TypeOrder           = "order"
	TypeIdempotency     = "idempotency"
	TypeCustomerSummary = "customerSummary"
	TypeProductSummary  = "productSummary"
	TypeOrderSummary    = "orderSummary"
	TypeVoidedOrder     = "voidedOrder"
	TypeSearchEntry     = "searchEntry"
	TypeSearchTombstone = "searchTombstone"
	TypeSearchLedger    = "searchLedger"

	// CategoriesID is the id (and partition key) of the one document in
	// `products` that lists every category: the home screen is a point read.
	CategoriesID = "categories"
	// CustomerSummaryID is the id of each user's pre-computed aggregate in
	// `orders`; it shares the user's partition so checkout can write it in
	// the same transactional batch as the order.
	CustomerSummaryID = "summary"
)

// Meta is the part every document shares. ETag and TS are Cosmos system
// properties (_etag, _ts): the store sets them on every write and ignores
// what a writer sends.
type Meta struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	SchemaVersion int    `json:"schemaVersion"`
	ETag          string `json:"_etag,omitempty"`
	TS            int64  `json:"_ts,omitempty"`
	// TTL in seconds (Cosmos per-item ttl); nil inherits the container's.
	TTL *int `json:"ttl,omitempty"`
}

// Product lives in `products` (pk /id). It embeds copies of the newest
// reviews (MaxTopReviews) and the review stats so the product page is ONE
// point read (model-embed-related); the full history stays in `reviews`.
type Product struct {
	Meta
	Name        string `json:"name"`
	Description string `json:"description"`
	CategoryID  string `json:"categoryId"`
	// CategoryName is a copy from the categories index
	// (model-denormalize-reads); a rename is pushed out by a feed worker.
	CategoryName string `json:"categoryName"`
	// PreviousCategoryID is set when the category changes, so the
	// productsByCategory handler can delete the copy in the old partition.
	PreviousCategoryID string `json:"previousCategoryId,omitempty"`
	PriceCents         int64  `json:"priceCents"`
	Currency           string `json:"currency"`
	PriceVersion       int64  `json:"priceVersion"`
	ImageURL           string `json:"imageUrl"`
	// Tags are extra words a product is found by (search), besides its
	// name and its category's name.
	Tags []string `json:"tags,omitempty"`
	// Variants are the SKUs the product is sold as (variants.go), at most
	// MaxVariants; none means one implicit variant, the product itself.
	// With variants, PriceCents is the lowest of their prices and
	// Availability the best of theirs.
	Variants    []Variant   `json:"variants,omitempty"`
	TopReviews  []TopReview `json:"topReviews"`
	ReviewStats ReviewStats `json:"reviewStats"`
	Deleted     bool        `json:"deleted,omitempty"`
	// Availability is the copy of the product's stock status, kept by the
	// inventory feed (the stock itself lives in `inventory`). Empty for a
	// product whose stock is not tracked. With variants it is the best of
	// theirs, and its SourceVersion counts their changes.
	Availability Availability `json:"availability"`
	LastUpdated  time.Time    `json:"lastUpdated"`
	// Version counts every write of the product; copies compare it
	// (sourceVersion) so an older change never overwrites a newer one.
	Version int64 `json:"version"`
	// CopyVersion counts the writes that changed what a cart line copies
	// (CartCopyOf: the name, the price, the availability): the cart
	// fan-out is skipped only when the carts were last given this one
	// (feedworkers/fanout.go). A copy equal to the last one pushed is not
	// enough: a cart may hold a version in between, one the change feed,
	// which hands over the newest version only, never delivered.
	CopyVersion int64 `json:"copyVersion,omitempty"`
}

// Review lives in `reviews` (pk /productId): unbounded, so referenced, not
// embedded (model-embed-related's size check). Its id is derived from the
// user (ReviewID), which makes a second review by the same user a 409.
type Review struct {
	Meta
	ProductID string    `json:"productId"`
	UserID    string    `json:"userId"`
	UserName  string    `json:"userName"`
	Rating    int       `json:"rating"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
}

// TopReview is the copy of a review embedded in Product.TopReviews: what
// the product page shows of it, and no more. It names no product (it is
// inside one) and has no Meta: a copy is not a document.
type TopReview struct {
	ID        string    `json:"id"`
	UserID    string    `json:"userId"`
	UserName  string    `json:"userName"`
	Rating    int       `json:"rating"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
}

// TopCopy is the copy of r a product embeds.
func (r Review) TopCopy() TopReview {
	return TopReview{
		ID: r.ID, UserID: r.UserID, UserName: r.UserName,
		Rating: r.Rating, Title: r.Title, Body: r.Body, CreatedAt: r.CreatedAt,
	}
}

// ReviewID is the id of userID's review of a product: one review per user
// per product is enforced by id uniqueness within the partition.
func ReviewID(userID string) string { return "review-" + userID }

// ReviewStats is the pre-computed aggregate embedded in a product
// (model-denormalize-reads: pre-computed aggregates).
type ReviewStats struct {
	Count   int     `json:"count"`
	Average float64 `json:"average"`
	// Histogram[0] counts 1-star reviews … Histogram[4] 5-star ones.
	Histogram [5]int `json:"histogram"`
}

// Category is one entry of the categories index document.
type Category struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ProductCount int    `json:"productCount"`
}

// Categories is the single index document of every category, stored in
// `products` under id and partition key "categories".
type Categories struct {
	Meta
	Items []Category `json:"items"`
	// Featured are copies of the best-rated products of each category
	// (featured.go), kept by the products feed, so the home page shows
	// them with the categories in the same point read.
	Featured    []FeaturedProduct `json:"featured,omitempty"`
	LastUpdated time.Time         `json:"lastUpdated"`
}

// ProductSummary lives in `productsByCategory` (pk /categoryId): a table per
// read pattern, so the category page is a single-partition query.
type ProductSummary struct {
	Meta
	CategoryID string `json:"categoryId"`
	// CategoryName is the product's copy of its category's name, so a
	// category page names its category from its one query.
	CategoryName string `json:"categoryName"`
	Name         string `json:"name"`
	PriceCents   int64  `json:"priceCents"`
	// PriceMaxCents is the highest price of the product's variants when
	// it is above PriceCents, the lowest ("from $19.99 to $24.99").
	PriceMaxCents int64   `json:"priceMaxCents,omitempty"`
	Currency      string  `json:"currency"`
	ImageURL      string  `json:"imageUrl"`
	AverageRating float64 `json:"averageRating"`
	ReviewCount   int     `json:"reviewCount"`
	// RatingScore ranks the category's products for the home page's
	// featured list (domain.RatingScore); the featured query orders by it.
	RatingScore float64 `json:"ratingScore"`
	// StockStatus is the product's availability status: in stock when
	// any of its variants is.
	StockStatus string `json:"stockStatus,omitempty"`
	// Attributes are the product's attribute values flattened
	// ("size=M"; Product.Facets): the attribute array a category page
	// filters on with ARRAY_CONTAINS, served by its index.
	Attributes []string `json:"attributes,omitempty"`
	// SourceVersion is the product's Version this copy was made from.
	SourceVersion int64 `json:"sourceVersion"`
}

// Cart lives in `carts` (pk /userId, id = userId): the cart screen is one
// point read because each line carries copies of the product's name and
// price.
type Cart struct {
	Meta
	UserID string     `json:"userId"`
	Items  []CartLine `json:"items"`
	// ProductIDs is a flat copy of the lines' product ids, so the price
	// fan-out can find open carts with ARRAY_CONTAINS.
	ProductIDs    []string  `json:"productIds"`
	ItemCount     int       `json:"itemCount"`
	SubtotalCents int64     `json:"subtotalCents"`
	LastUpdated   time.Time `json:"lastUpdated"`
	// Pending is the marker of the checkout that claimed the cart: the
	// workflow's first write (store/writes, claim), If-Match on the cart
	// version its order is made from, so only one checkout pays for what
	// a cart holds. While its order is in progress nobody changes what
	// the cart holds; once the order rests, its paid lines go (Settle) or,
	// for an order that failed, the marker alone (Unmark). Internal: the
	// API does not show it.
	Pending *PendingCheckout `json:"pendingCheckout,omitempty"`
}

// PendingCheckout is the marker of a checkout in progress on a cart.
type PendingCheckout struct {
	// OrderID is the id the checkout's order is created under.
	OrderID string `json:"orderId"`
	// Since is when the marker was written.
	Since time.Time `json:"since"`
}

// VoidedOrder takes an order id that a checkout marked on a cart and
// never committed: created in the user's orders partition under the
// order's id, it makes that checkout's batch fail (the id is taken), so
// the checkout can never commit after the cart has moved on. It expires
// by its own ttl.
type VoidedOrder struct {
	Meta
	UserID   string    `json:"userId"`
	VoidedAt time.Time `json:"voidedAt"`
}

// CartLine is one variant of a product in a cart (the product and its
// SKU name the line), with copies of its name, attributes and price.
type CartLine struct {
	ProductID string `json:"productId"`
	// SKU names the variant; empty for a product without variants.
	SKU string `json:"sku,omitempty"`
	// Attributes are a copy of the variant's ({"size":"M"}).
	Attributes     map[string]string `json:"attributes,omitempty"`
	Name           string            `json:"name"`
	UnitPriceCents int64             `json:"unitPriceCents"`
	// PriceVersion is the product's priceVersion the copy was taken at;
	// the version guard lets a line only ever take a newer one.
	PriceVersion int64 `json:"priceVersion"`
	// ProductVersion is the product's version the copies came from; a
	// name or availability change without a new price still moves it.
	ProductVersion int64 `json:"productVersion"`
	Quantity       int   `json:"quantity"`
	LineTotalCents int64 `json:"lineTotalCents"`
	Available      bool  `json:"available"`
	// StockStatus is a copy of the product's availability status.
	StockStatus string `json:"stockStatus,omitempty"`
}

// Order lives in `orders` (pk /userId). Its lines are a snapshot of the
// price paid and are never updated by the price fan-out.
type Order struct {
	Meta
	UserID          string      `json:"userId"`
	Customer        Customer    `json:"customer"`
	Items           []OrderLine `json:"items"`
	ItemCount       int         `json:"itemCount"`
	SubtotalCents   int64       `json:"subtotalCents"`
	TotalCents      int64       `json:"totalCents"`
	Status          string      `json:"status"`
	ShippingAddress Address     `json:"shippingAddress"`
	CreatedAt       time.Time   `json:"createdAt"`
	LastUpdated     time.Time   `json:"lastUpdated"`
	IdempotencyKey  string      `json:"idempotencyKey"`
	// CartETag is the _etag of the cart the order was made from, as the
	// checkout's marker write left it: a trace of the version ordered, not
	// a guard; settling the cart follows the marker.
	CartETag string `json:"cartEtag,omitempty"`
	// Version counts every write of the order; the ordersByStatus copy
	// keeps it as sourceVersion.
	Version int64 `json:"version"`
	// PaymentMethod is the token the buyer paid with ("pm_card_visa"),
	// which the workflow's authorize sends; never shown.
	PaymentMethod string        `json:"paymentMethod,omitempty"`
	Payment       *OrderPayment `json:"payment,omitempty"`
	Rejection     *Rejection    `json:"rejection,omitempty"`
	// History is every move the order made (Order.Move).
	History []Step `json:"history,omitempty"`
}

// Customer is the snapshot of the buyer taken at checkout.
type Customer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Address is a shipping address; Country is ISO 3166-1 alpha-2.
type Address struct {
	Name       string `json:"name" validate:"required,notblank,max=200,line"`
	Line1      string `json:"line1" validate:"required,notblank,max=200,line"`
	Line2      string `json:"line2,omitempty" validate:"max=200,line"`
	City       string `json:"city" validate:"required,notblank,max=100,line"`
	PostalCode string `json:"postalCode" validate:"required,notblank,max=20,line"`
	Country    string `json:"country" validate:"required,iso3166_1_alpha2"`
}

// OrderLine is what was paid for one variant of a product.
type OrderLine struct {
	ProductID string `json:"productId"`
	// SKU names the variant; empty for a product without variants.
	SKU            string            `json:"sku,omitempty"`
	Attributes     map[string]string `json:"attributes,omitempty"`
	Name           string            `json:"name"`
	UnitPriceCents int64             `json:"unitPriceCents"`
	Quantity       int               `json:"quantity"`
	LineTotalCents int64             `json:"lineTotalCents"`
	// Unlimited marks a legacy product, created before the shop tracked
	// stock (its cart line carried no availability status): it has no
	// units to take.
	Unlimited bool `json:"unlimited,omitempty"`
	// StockShards is how many shards the line's stock was split into
	// when the order was made (0: not split): its take starts on
	// StartShard of that count, whatever the count is now.
	StockShards int `json:"stockShards,omitempty"`
}

// Idempotency records a checkout's Idempotency-Key in the user's orders
// partition, written in the same transactional batch as the order: the id
// is derived from the key, so a duplicate batch fails with 409 as a whole.
type Idempotency struct {
	Meta
	UserID string `json:"userId"`
	Key    string `json:"key"`
	// RequestHash identifies the body; the same key with another body is 422.
	RequestHash string    `json:"requestHash"`
	OrderID     string    `json:"orderId"`
	CreatedAt   time.Time `json:"createdAt"`
}

// CustomerSummary is the user's pre-computed aggregate in `orders`
// (id "summary"), replaced with If-Match in the checkout and cancel batches.
type CustomerSummary struct {
	Meta
	UserID            string     `json:"userId"`
	TotalOrders       int        `json:"totalOrders"`
	TotalSpentCents   int64      `json:"totalSpentCents"`
	AverageOrderCents int64      `json:"averageOrderCents"`
	LastOrderAt       *time.Time `json:"lastOrderAt"`
	LastUpdated       time.Time  `json:"lastUpdated"`
}

// OrderSummary lives in `ordersByStatus` under the synthetic partition key
// statusDay ("placed:07:2026-11-29", StatusDayKey): status alone would be
// four hot partitions; the day spreads them over time and the bucket
// spreads one day's checkouts over several partitions (DefaultStatusBuckets).
type OrderSummary struct {
	Meta
	StatusDay     string    `json:"statusDay"`
	Status        string    `json:"status"`
	UserID        string    `json:"userId"`
	CreatedAt     time.Time `json:"createdAt"`
	TotalCents    int64     `json:"totalCents"`
	ItemCount     int       `json:"itemCount"`
	SourceVersion int64     `json:"sourceVersion"`
}
