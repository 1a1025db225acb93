package api

import (
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store/repo"
)

// The response bodies. Every view is its own type with explicit fields,
// made from a document by a view function, and embeds no domain or store
// type: a field added to a stored document never becomes API by accident.
// So system properties (_etag, _ts, ttl), bookkeeping (version,
// productVersion, pendingCheckout) and partition plumbing stay in the store.

type page[T any] struct {
	Items []T `json:"items"`
	// Continuation is opaque; null on the last page.
	Continuation *string `json:"continuation"`
}

func pageOf[T any](items []T, continuation string) page[T] {
	p := page[T]{Items: items}
	if continuation != "" {
		p.Continuation = &continuation
	}
	return p
}

type categoryView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ProductCount int    `json:"productCount"`
}

type categoriesView struct {
	Items    []categoryView       `json:"items"`
	Featured []productSummaryView `json:"featured"`
}

func viewCategory(c domain.Category) categoryView {
	return categoryView{ID: c.ID, Name: c.Name, ProductCount: c.ProductCount}
}

func viewCategories(c domain.Categories) categoriesView {
	return categoriesView{Items: mapSlice(c.Items, viewCategory), Featured: mapSlice(c.Featured, viewFeatured)}
}

type productView struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	CategoryID   string          `json:"categoryId"`
	CategoryName string          `json:"categoryName"`
	PriceCents   int64           `json:"priceCents"`
	Currency     string          `json:"currency"`
	PriceVersion int64           `json:"priceVersion"`
	ImageURL     string          `json:"imageUrl"`
	Tags         []string        `json:"tags"`
	TopReviews   []reviewView    `json:"topReviews"`
	ReviewStats  reviewStatsView `json:"reviewStats"`
	Availability availability    `json:"availability"`
	// Variants are the SKUs the product is sold as, each with its price
	// and availability; absent for a product sold as one.
	Variants    []variantView `json:"variants,omitempty"`
	LastUpdated time.Time     `json:"lastUpdated"`
}

// variantView is one variant on the product page: what the variant
// picker shows.
type variantView struct {
	SKU          string            `json:"sku"`
	Attributes   map[string]string `json:"attributes"`
	PriceCents   int64             `json:"priceCents"`
	ImageURL     string            `json:"imageUrl,omitempty"`
	Availability availability      `json:"availability"`
}

func viewVariants(vs []domain.Variant) []variantView {
	if len(vs) == 0 {
		return nil
	}
	return mapSlice(vs, func(v domain.Variant) variantView {
		return variantView{SKU: v.SKU, Attributes: v.Attributes, PriceCents: v.PriceCents, ImageURL: v.ImageURL,
			Availability: viewAvailability(v.Availability.Status)}
	})
}

// availability is a stock status as the product page and the cart lines
// show it: a copy that may lag the stock by the feed's delay. A product
// whose stock is not tracked is in stock.
type availability struct {
	Status string `json:"status"`
}

func viewAvailability(status string) availability {
	if status == "" {
		status = domain.InStock
	}
	return availability{Status: status}
}

type reviewStatsView struct {
	Count     int     `json:"count"`
	Average   float64 `json:"average"`
	Histogram [5]int  `json:"histogram"`
}

func viewProduct(p domain.Product) productView {
	top := make([]reviewView, len(p.TopReviews))
	for i, r := range p.TopReviews {
		top[i] = viewTopReview(p.ID, r)
	}
	s := p.ReviewStats
	return productView{
		ID: p.ID, Name: p.Name, Description: p.Description,
		CategoryID: p.CategoryID, CategoryName: p.CategoryName,
		PriceCents: p.PriceCents, Currency: p.Currency, PriceVersion: p.PriceVersion,
		ImageURL: p.ImageURL, Tags: append([]string{}, p.Tags...), TopReviews: top,
		ReviewStats:  reviewStatsView{Count: s.Count, Average: s.Average, Histogram: s.Histogram},
		Availability: viewAvailability(p.Availability.Status),
		Variants:     viewVariants(p.Variants),
		LastUpdated:  p.LastUpdated,
	}
}

type productSummaryView struct {
	ID           string `json:"id"`
	CategoryID   string `json:"categoryId"`
	CategoryName string `json:"categoryName"`
	Name         string `json:"name"`
	PriceCents   int64  `json:"priceCents"`
	// PriceMaxCents is the highest variant price, when above priceCents
	// (then "from" priceCents).
	PriceMaxCents int64        `json:"priceMaxCents,omitempty"`
	Currency      string       `json:"currency"`
	ImageURL      string       `json:"imageUrl"`
	AverageRating float64      `json:"averageRating"`
	ReviewCount   int          `json:"reviewCount"`
	Availability  availability `json:"availability"`
	// Attributes are the attribute values the product's variants come
	// in ("size=M"), what the page's filters offer.
	Attributes []string `json:"attributes,omitempty"`
}

func viewProductSummary(s domain.ProductSummary) productSummaryView {
	return productSummaryView{
		ID: s.ID, CategoryID: s.CategoryID, CategoryName: s.CategoryName, Name: s.Name, PriceCents: s.PriceCents,
		PriceMaxCents: s.PriceMaxCents,
		Currency:      s.Currency, ImageURL: s.ImageURL, AverageRating: s.AverageRating, ReviewCount: s.ReviewCount,
		Availability: viewAvailability(s.StockStatus), Attributes: s.Attributes,
	}
}

// viewFeatured shows a featured copy as the category page shows a product.
func viewFeatured(f domain.FeaturedProduct) productSummaryView {
	return productSummaryView{
		ID: f.ID, CategoryID: f.CategoryID, CategoryName: f.CategoryName, Name: f.Name, PriceCents: f.PriceCents,
		PriceMaxCents: f.PriceMaxCents, Currency: f.Currency, ImageURL: f.ImageURL, AverageRating: f.AverageRating, ReviewCount: f.ReviewCount,
		Availability: viewAvailability(f.StockStatus),
	}
}

// reviewView is a review on the reviews screen and, the same shape, one of
// the product page's top reviews.
type reviewView struct {
	ID        string    `json:"id"`
	ProductID string    `json:"productId"`
	UserID    string    `json:"userId"`
	UserName  string    `json:"userName"`
	Rating    int       `json:"rating"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"createdAt"`
}

func viewReview(r domain.Review) reviewView {
	return reviewView{
		ID: r.ID, ProductID: r.ProductID, UserID: r.UserID, UserName: r.UserName,
		Rating: r.Rating, Title: r.Title, Body: r.Body, CreatedAt: r.CreatedAt,
	}
}

// viewTopReview shows a review copy embedded in product productID.
func viewTopReview(productID string, r domain.TopReview) reviewView {
	return reviewView{
		ID: r.ID, ProductID: productID, UserID: r.UserID, UserName: r.UserName,
		Rating: r.Rating, Title: r.Title, Body: r.Body, CreatedAt: r.CreatedAt,
	}
}

type cartLineView struct {
	ProductID string `json:"productId"`
	// SKU and Attributes name the variant; absent for a product sold as
	// one.
	SKU            string            `json:"sku,omitempty"`
	Attributes     map[string]string `json:"attributes,omitempty"`
	Name           string            `json:"name"`
	UnitPriceCents int64             `json:"unitPriceCents"`
	PriceVersion   int64             `json:"priceVersion"`
	Quantity       int               `json:"quantity"`
	LineTotalCents int64             `json:"lineTotalCents"`
	Available      bool              `json:"available"`
	Availability   availability      `json:"availability"`
}

type cartView struct {
	UserID        string         `json:"userId"`
	Items         []cartLineView `json:"items"`
	ItemCount     int            `json:"itemCount"`
	SubtotalCents int64          `json:"subtotalCents"`
	// LastUpdated is null for a user who never had a cart.
	LastUpdated *time.Time `json:"lastUpdated"`
}

func viewCart(c domain.Cart) cartView {
	items := make([]cartLineView, len(c.Items))
	for i, l := range c.Items {
		items[i] = cartLineView{
			ProductID: l.ProductID, SKU: l.SKU, Attributes: l.Attributes, Name: l.Name, UnitPriceCents: l.UnitPriceCents,
			PriceVersion: l.PriceVersion, Quantity: l.Quantity, LineTotalCents: l.LineTotalCents,
			Available: l.Available, Availability: viewAvailability(l.StockStatus),
		}
	}
	v := cartView{UserID: c.UserID, Items: items, ItemCount: c.ItemCount, SubtotalCents: c.SubtotalCents}
	if !c.LastUpdated.IsZero() {
		t := c.LastUpdated
		v.LastUpdated = &t
	}
	return v
}

type orderView struct {
	ID              string          `json:"id"`
	UserID          string          `json:"userId"`
	Customer        customerView    `json:"customer"`
	Items           []orderLineView `json:"items"`
	ItemCount       int             `json:"itemCount"`
	SubtotalCents   int64           `json:"subtotalCents"`
	TotalCents      int64           `json:"totalCents"`
	Status          string          `json:"status"`
	ShippingAddress addressView     `json:"shippingAddress"`
	CreatedAt       time.Time       `json:"createdAt"`
	LastUpdated     time.Time       `json:"lastUpdated"`
	// Payment is the order's money as its state says (never the token).
	Payment *paymentView `json:"payment,omitempty"`
	// Rejection says why a rejected order was refused.
	Rejection *rejectionView `json:"rejection,omitempty"`
	// History is every move the order made.
	History []stepView `json:"history,omitempty"`
}

type paymentView struct {
	Status      string `json:"status"`
	AmountCents int64  `json:"amountCents"`
	Currency    string `json:"currency"`
}

type rejectionView struct {
	Reason      string            `json:"reason"`
	Items       []domain.Shortage `json:"items,omitempty"`
	DeclineCode string            `json:"declineCode,omitempty"`
	Message     string            `json:"message,omitempty"`
}

type stepView struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

type customerView struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

type orderLineView struct {
	ProductID      string            `json:"productId"`
	SKU            string            `json:"sku,omitempty"`
	Attributes     map[string]string `json:"attributes,omitempty"`
	Name           string            `json:"name"`
	UnitPriceCents int64             `json:"unitPriceCents"`
	Quantity       int               `json:"quantity"`
	LineTotalCents int64             `json:"lineTotalCents"`
}

type addressView struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

func viewOrder(o domain.Order) orderView {
	a := o.ShippingAddress
	return orderView{
		ID: o.ID, UserID: o.UserID,
		Customer: customerView{Name: o.Customer.Name, Email: o.Customer.Email},
		Items: mapSlice(o.Items, func(l domain.OrderLine) orderLineView {
			return orderLineView{
				ProductID: l.ProductID, SKU: l.SKU, Attributes: l.Attributes, Name: l.Name, UnitPriceCents: l.UnitPriceCents,
				Quantity: l.Quantity, LineTotalCents: l.LineTotalCents,
			}
		}),
		ItemCount: o.ItemCount, SubtotalCents: o.SubtotalCents, TotalCents: o.TotalCents, Status: o.Status,
		ShippingAddress: addressView{
			Name: a.Name, Line1: a.Line1, Line2: a.Line2,
			City: a.City, PostalCode: a.PostalCode, Country: a.Country,
		},
		CreatedAt: o.CreatedAt, LastUpdated: o.LastUpdated,
		Payment:   viewPayment(o),
		Rejection: viewRejection(o.Rejection),
		History:   mapSlice(o.History, func(s domain.Step) stepView { return stepView{From: s.From, To: s.To, At: s.At} }),
	}
}

// viewPayment is the order's payment, with the status its state says
// (domain.Order.PaymentStatus); nil for an order from before payments.
func viewPayment(o domain.Order) *paymentView {
	if o.Payment == nil {
		return nil
	}
	status := o.PaymentStatus()
	if status == "" {
		status = "none"
	}
	return &paymentView{Status: status, AmountCents: o.Payment.AmountCents, Currency: o.Payment.Currency}
}

func viewRejection(r *domain.Rejection) *rejectionView {
	if r == nil {
		return nil
	}
	return &rejectionView{Reason: r.Reason, Items: r.Shortages, DeclineCode: r.DeclineCode, Message: r.Message}
}

type summaryView struct {
	UserID            string     `json:"userId"`
	TotalOrders       int        `json:"totalOrders"`
	TotalSpentCents   int64      `json:"totalSpentCents"`
	AverageOrderCents int64      `json:"averageOrderCents"`
	LastOrderAt       *time.Time `json:"lastOrderAt"`
	LastUpdated       *time.Time `json:"lastUpdated"`
}

func viewSummary(s domain.CustomerSummary) summaryView {
	v := summaryView{
		UserID: s.UserID, TotalOrders: s.TotalOrders, TotalSpentCents: s.TotalSpentCents,
		AverageOrderCents: s.AverageOrderCents, LastOrderAt: s.LastOrderAt,
	}
	if !s.LastUpdated.IsZero() {
		t := s.LastUpdated
		v.LastUpdated = &t
	}
	return v
}

// orderListView is one order of the order history, made from the store's
// projection.
type orderListView struct {
	ID         string    `json:"id"`
	CreatedAt  time.Time `json:"createdAt"`
	Status     string    `json:"status"`
	ItemCount  int       `json:"itemCount"`
	TotalCents int64     `json:"totalCents"`
}

func viewOrderListItem(o repo.OrderListItem) orderListView {
	return orderListView{ID: o.ID, CreatedAt: o.CreatedAt, Status: o.Status, ItemCount: o.ItemCount, TotalCents: o.TotalCents}
}

type orderSummaryView struct {
	ID         string    `json:"id"`
	UserID     string    `json:"userId"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"createdAt"`
	TotalCents int64     `json:"totalCents"`
	ItemCount  int       `json:"itemCount"`
}

func viewOrderSummary(s domain.OrderSummary) orderSummaryView {
	return orderSummaryView{ID: s.ID, UserID: s.UserID, Status: s.Status, CreatedAt: s.CreatedAt,
		TotalCents: s.TotalCents, ItemCount: s.ItemCount}
}

// feedsView is the body of GET /v1/admin/feeds (openapi.yaml's
// FeedStatus): each processor's lag at a glance (changefeed.Summarize)
// and its leases, and the cart fan-out's totals.
type feedsView struct {
	Processors []changefeed.ProcessorStatus `json:"processors"`
	Fanout     repo.FanoutStats             `json:"fanout"`
}

func viewFeeds(processors []changefeed.ProcessorStatus, fanout repo.FanoutStats) feedsView {
	if processors == nil {
		processors = []changefeed.ProcessorStatus{}
	}
	return feedsView{Processors: processors, Fanout: fanout}
}

func mapSlice[S, T any](in []S, f func(S) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
