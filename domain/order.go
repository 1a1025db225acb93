package domain

import (
	"fmt"
	"maps"
	"strings"
	"time"
)

// NewOrder makes an order from a cart snapshot: the lines keep the price
// paid and are never updated afterwards. An empty cart, or one with
// unavailable lines, is a conflict that names them.
func NewOrder(id string, cart Cart, customer Customer, addr Address, key string, now time.Time) (Order, error) {
	if len(cart.Items) == 0 {
		return Order{}, Errorf(ECONFLICT, "the cart is empty")
	}
	var unavailable []string
	lines := make([]OrderLine, 0, len(cart.Items))
	var subtotal int64
	count := 0
	for _, l := range cart.Items {
		if !l.Available {
			unavailable = append(unavailable, LineLabel(l.ProductID, l.SKU))
			continue
		}
		total := l.UnitPriceCents * int64(l.Quantity)
		lines = append(lines, OrderLine{
			ProductID:      l.ProductID,
			SKU:            l.SKU,
			Attributes:     maps.Clone(l.Attributes),
			Name:           l.Name,
			UnitPriceCents: l.UnitPriceCents,
			Quantity:       l.Quantity,
			LineTotalCents: total,
		})
		subtotal += total
		count += l.Quantity
	}
	if len(unavailable) > 0 {
		return Order{}, Errorf(ECONFLICT, "products no longer available: %s", strings.Join(unavailable, ", "))
	}
	now = now.UTC()
	return Order{
		Meta:            Meta{ID: id, Type: TypeOrder, SchemaVersion: SchemaVersion},
		UserID:          cart.UserID,
		Customer:        customer,
		Items:           lines,
		ItemCount:       count,
		SubtotalCents:   subtotal,
		TotalCents:      subtotal, // no tax or shipping yet
		Status:          StatusPending,
		ShippingAddress: addr,
		CreatedAt:       now,
		LastUpdated:     now,
		IdempotencyKey:  key,
		CartETag:        cart.ETag,
		Version:         1,
	}, nil
}

// NewCustomerSummary returns the zero summary of a user.
func NewCustomerSummary(userID string) CustomerSummary {
	return CustomerSummary{
		Meta:   Meta{ID: CustomerSummaryID, Type: TypeCustomerSummary, SchemaVersion: SchemaVersion},
		UserID: userID,
	}
}

// AddOrder counts a placed order into the pre-computed aggregate
// (model-denormalize-reads: pre-computed aggregates). It is applied in the
// same transactional batch as the order, with If-Match, so it cannot drift.
func (s *CustomerSummary) AddOrder(o Order, now time.Time) {
	s.TotalOrders++
	s.TotalSpentCents += o.TotalCents
	if s.LastOrderAt == nil || o.CreatedAt.After(*s.LastOrderAt) {
		t := o.CreatedAt
		s.LastOrderAt = &t
	}
	s.recompute(now)
}

// RemoveOrder takes a cancelled order out of the aggregate.
func (s *CustomerSummary) RemoveOrder(o Order, now time.Time) {
	s.TotalOrders--
	s.TotalSpentCents -= o.TotalCents
	s.recompute(now)
}

func (s *CustomerSummary) recompute(now time.Time) {
	s.AverageOrderCents = 0
	if s.TotalOrders > 0 {
		// Rounded to the nearest cent (half away from zero).
		n := int64(s.TotalOrders)
		s.AverageOrderCents = (s.TotalSpentCents + n/2) / n
	}
	s.LastUpdated = now.UTC()
}

// SummaryOf is the order's copy in ordersByStatus, among n buckets.
func SummaryOf(o Order, n int) OrderSummary {
	return OrderSummary{
		Meta:          Meta{ID: o.ID, Type: TypeOrderSummary, SchemaVersion: SchemaVersion},
		StatusDay:     StatusDayKey(o.Status, o.CreatedAt, o.ID, n),
		Status:        o.Status,
		UserID:        o.UserID,
		CreatedAt:     o.CreatedAt,
		TotalCents:    o.TotalCents,
		ItemCount:     o.ItemCount,
		SourceVersion: o.Version,
	}
}

// IdempotencyID is the id of the record of key in the user's partition.
func IdempotencyID(key string) string { return "idem-" + key }

// OrderID makes a new order id from the time and a random suffix, so ids
// sort roughly by creation.
func OrderID(now time.Time, random string) string {
	return fmt.Sprintf("o-%s-%s", now.UTC().Format("20060102T150405"), random)
}
