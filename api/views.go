package api

import (
	"time"

	"shop/domain"
	"shop/feedworkers/changefeed"
	"shop/store"
)

// The response bodies. Documents are mapped to these rather than sent as
// stored, so system properties (_etag, _ts, ttl), bookkeeping (version,
// productVersion) and partition plumbing never become API.

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

type categoriesView struct {
	Items []domain.Category `json:"items"`
}

type productView struct {
	ID           string             `json:"id"`
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	CategoryID   string             `json:"categoryId"`
	CategoryName string             `json:"categoryName"`
	PriceCents   int64              `json:"priceCents"`
	Currency     string             `json:"currency"`
	PriceVersion int64              `json:"priceVersion"`
	ImageURL     string             `json:"imageUrl"`
	TopReviews   []reviewView       `json:"topReviews"`
	ReviewStats  domain.ReviewStats `json:"reviewStats"`
	LastUpdated  time.Time          `json:"lastUpdated"`
}

func viewProduct(p domain.Product) productView {
	top := make([]reviewView, len(p.TopReviews))
	for i, r := range p.TopReviews {
		r.ProductID = p.ID
		top[i] = viewReview(r)
	}
	return productView{
		ID: p.ID, Name: p.Name, Description: p.Description,
		CategoryID: p.CategoryID, CategoryName: p.CategoryName,
		PriceCents: p.PriceCents, Currency: p.Currency, PriceVersion: p.PriceVersion,
		ImageURL: p.ImageURL, TopReviews: top, ReviewStats: p.ReviewStats,
		LastUpdated: p.LastUpdated,
	}
}

type productSummaryView struct {
	ID            string  `json:"id"`
	CategoryID    string  `json:"categoryId"`
	Name          string  `json:"name"`
	PriceCents    int64   `json:"priceCents"`
	Currency      string  `json:"currency"`
	ImageURL      string  `json:"imageUrl"`
	AverageRating float64 `json:"averageRating"`
	ReviewCount   int     `json:"reviewCount"`
}

func viewProductSummary(s domain.ProductSummary) productSummaryView {
	return productSummaryView{
		ID: s.ID, CategoryID: s.CategoryID, Name: s.Name, PriceCents: s.PriceCents,
		Currency: s.Currency, ImageURL: s.ImageURL, AverageRating: s.AverageRating, ReviewCount: s.ReviewCount,
	}
}

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

type cartLineView struct {
	ProductID      string `json:"productId"`
	Name           string `json:"name"`
	UnitPriceCents int64  `json:"unitPriceCents"`
	PriceVersion   int64  `json:"priceVersion"`
	Quantity       int    `json:"quantity"`
	LineTotalCents int64  `json:"lineTotalCents"`
	Available      bool   `json:"available"`
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
			ProductID: l.ProductID, Name: l.Name, UnitPriceCents: l.UnitPriceCents,
			PriceVersion: l.PriceVersion, Quantity: l.Quantity, LineTotalCents: l.LineTotalCents,
			Available: l.Available,
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
	ID              string             `json:"id"`
	UserID          string             `json:"userId"`
	Customer        domain.Customer    `json:"customer"`
	Items           []domain.OrderLine `json:"items"`
	ItemCount       int                `json:"itemCount"`
	SubtotalCents   int64              `json:"subtotalCents"`
	TotalCents      int64              `json:"totalCents"`
	Status          string             `json:"status"`
	ShippingAddress domain.Address     `json:"shippingAddress"`
	CreatedAt       time.Time          `json:"createdAt"`
	LastUpdated     time.Time          `json:"lastUpdated"`
}

func viewOrder(o domain.Order) orderView {
	return orderView{
		ID: o.ID, UserID: o.UserID, Customer: o.Customer, Items: o.Items, ItemCount: o.ItemCount,
		SubtotalCents: o.SubtotalCents, TotalCents: o.TotalCents, Status: o.Status,
		ShippingAddress: o.ShippingAddress, CreatedAt: o.CreatedAt, LastUpdated: o.LastUpdated,
	}
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

type orderListView = store.OrderListItem

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
// FeedStatus): each processor's leases, and the cart fan-out's totals.
type feedsView struct {
	Processors []changefeed.ProcessorStatus `json:"processors"`
	Fanout     store.FanoutStats            `json:"fanout"`
}

func viewFeeds(processors []changefeed.ProcessorStatus, fanout store.FanoutStats) feedsView {
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
