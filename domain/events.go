package domain

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Events are the shop's news for other systems (fulfilment, e-mail,
// accounting): the transactional outbox. An event is a document written
// in the SAME transactional batch as the change it reports, in the same
// partition (an order's in `orders` under the user's key, a product's in
// `products` under the product's id), so a change is never written
// without its event nor an event without its change. The webhooks
// feed workers read them from those containers' change feeds and deliver
// them to the subscribed receivers (feedworkers/webhooks); each event
// expires EventRetention after it was written (its own ttl).

// Currency is the currency of every price in the shop (the payment
// provider's lowercase code).
const Currency = "usd"

// TypeEvent is the type of an event document.
const TypeEvent = "event"

// EventRetention is how long an event document stays in its container
// before its ttl removes it: longer than delivery may take
// (webhooks.RetryHorizon), so an event is never gone while a delivery of
// it is still being tried.
const EventRetention = 7 * 24 * time.Hour

// Event types. An order's events follow its workflow (Moves): each move
// into a state another system acts on writes one; the checkout's inner
// steps (pending, reserved) write none.
const (
	EventOrderAuthorized = "order.authorized" // the total is held on the card
	EventOrderPlaced     = "order.placed"     // the order stands: fulfil it
	EventOrderShipped    = "order.shipped"    // shipped, the payment captured
	EventOrderDelivered  = "order.delivered"
	EventOrderCancelled  = "order.cancelled" // units back, the authorization voided or the capture refunded
	EventOrderRejected   = "order.rejected"  // out of stock, or the card declined
	EventOrderExpired    = "order.expired"   // the checkout stalled and the sweeper ended it

	EventProductPriceChanged        = "product.price_changed"
	EventProductAvailabilityChanged = "product.availability_changed"
	EventProductDeleted             = "product.deleted"
)

// EventTypes is every event type, the catalogue a subscription picks from
// (openapi.yaml describes each under webhooks).
var EventTypes = []string{
	EventOrderAuthorized, EventOrderPlaced, EventOrderShipped, EventOrderDelivered,
	EventOrderCancelled, EventOrderRejected, EventOrderExpired,
	EventProductPriceChanged, EventProductAvailabilityChanged, EventProductDeleted,
}

// ValidEventType reports whether t is an event type.
func ValidEventType(t string) bool { return slices.Contains(EventTypes, t) }

// orderEvents is the event of each order status a move can end in; a
// status missing here writes no event.
var orderEvents = map[string]string{
	StatusAuthorized: EventOrderAuthorized,
	StatusPlaced:     EventOrderPlaced,
	StatusShipped:    EventOrderShipped,
	StatusDelivered:  EventOrderDelivered,
	StatusCancelled:  EventOrderCancelled,
	StatusRejected:   EventOrderRejected,
	StatusExpired:    EventOrderExpired,
}

// OrderEventType is the event a move of an order into status writes, if
// any.
func OrderEventType(status string) (string, bool) {
	t, ok := orderEvents[status]
	return t, ok
}

// Event is one event document. Subject and Sequence order it: the
// events of one subject (an order, a product) are delivered in Sequence
// order, which only grows (an order's number of moves, a product's
// Version), with gaps where a change wrote no event.
type Event struct {
	Meta
	// EventType is one of EventTypes.
	EventType string `json:"eventType"`
	// Subject is the order's or the product's id; Sequence its place
	// among the subject's events.
	Subject  string `json:"subject"`
	Sequence int64  `json:"sequence"`
	// UserID is the order's partition key (orders); ProductID the
	// product's (products). One of the two is set.
	UserID     string    `json:"userId,omitempty"`
	ProductID  string    `json:"productId,omitempty"`
	OccurredAt time.Time `json:"occurredAt"`
	// Order or Product is the payload: what a receiver needs to act on
	// the event without calling the shop back.
	Order   *OrderEventData   `json:"order,omitempty"`
	Product *ProductEventData `json:"product,omitempty"`
}

// OrderEventData is an order as its events carry it.
type OrderEventData struct {
	ID              string      `json:"id"`
	UserID          string      `json:"userId"`
	Status          string      `json:"status"`
	PreviousStatus  string      `json:"previousStatus"`
	Customer        Customer    `json:"customer"`
	Items           []OrderLine `json:"items"`
	ItemCount       int         `json:"itemCount"`
	SubtotalCents   int64       `json:"subtotalCents"`
	TotalCents      int64       `json:"totalCents"`
	Currency        string      `json:"currency"`
	ShippingAddress Address     `json:"shippingAddress"`
	CreatedAt       time.Time   `json:"createdAt"`
	// Payment is what the provider holds of the money now:
	// "authorized", "captured", "voided", "refunded", "declined" or
	// "none".
	Payment   string     `json:"payment"`
	Rejection *Rejection `json:"rejection,omitempty"`
}

// ProductEventData is a product as its events carry it.
type ProductEventData struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	CategoryID string `json:"categoryId"`
	PriceCents int64  `json:"priceCents"`
	Currency   string `json:"currency"`
	// Availability is the stock status a shopper sees ("in_stock",
	// "low_stock", "sold_out"; "" when stock is not tracked).
	Availability string `json:"availability"`
	Deleted      bool   `json:"deleted,omitempty"`
	// Variants are a product with variants' prices, one per SKU (PriceCents
	// is the lowest): a price change of any variant moves PriceVersion,
	// and its product.price_changed must say which price is now what.
	// None for a product without variants.
	Variants []VariantPrice `json:"variants,omitempty"`
}

// VariantPrice is one variant's price as a product event carries it.
type VariantPrice struct {
	SKU        string `json:"sku"`
	PriceCents int64  `json:"priceCents"`
}

// EventID is the id of the sequence-th event of subject: derived, so
// that writing the same event twice (a retried batch) is a conflict, not
// a second event.
func EventID(subject string, sequence int64) string {
	return fmt.Sprintf("event-%s-%012d", subject, sequence)
}

// eventTTL is EventRetention in seconds, as a document's ttl.
func eventTTL() *int {
	s := int(EventRetention / time.Second)
	return &s
}

// NewOrderEvent is the event a move of o (already moved, History
// included) from status from writes, if its new status writes one. Its
// sequence is the number of moves o has made: the same move always gives
// the same id.
func NewOrderEvent(o Order, from string) (Event, bool) {
	t, ok := OrderEventType(o.Status)
	if !ok {
		return Event{}, false
	}
	seq := int64(len(o.History))
	return Event{
		Meta:       Meta{ID: EventID(o.ID, seq), Type: TypeEvent, SchemaVersion: SchemaVersion, TTL: eventTTL()},
		EventType:  t,
		Subject:    o.ID,
		Sequence:   seq,
		UserID:     o.UserID,
		OccurredAt: o.LastUpdated,
		Order: &OrderEventData{
			ID: o.ID, UserID: o.UserID, Status: o.Status, PreviousStatus: from,
			Customer: o.Customer, Items: eventLines(o.Items), ItemCount: o.ItemCount,
			SubtotalCents: o.SubtotalCents, TotalCents: o.TotalCents, Currency: Currency,
			ShippingAddress: o.ShippingAddress, CreatedAt: o.CreatedAt,
			Payment: cmp.Or(o.PaymentStatus(), "none"), Rejection: o.Rejection,
		},
	}, true
}

// ProductEventsOf are the events a version of product p says happened,
// derived from the products feed rather than written with the change: the
// products container is partitioned on /id, so a document of its own
// cannot share a product's partition, and no batch can hold both. Each
// event is named by the counter that moved: the price's PriceVersion (a
// price set after creation: PriceVersion above 1), the availability's
// SourceVersion (a status taken from a stock version after the first),
// and the deletion. The feed hands over every product's newest version,
// at least once and in order per product, so each change is seen in the
// first version delivered after it: a replay or a later version names
// the same event again (the same id, no second delivery), and a version
// the feed skipped is announced by the next one, with the values it
// shows (a receiver gets each new state, not every step between two). An
// event's sequence is twice the Version that first showed it, plus one
// for a second event of the same version: it only grows along the feed.
// Previous values are not known to a version, so they are not given.
func ProductEventsOf(p Product) []Event {
	data := ProductEventData{
		ID: p.ID, Name: p.Name, CategoryID: p.CategoryID,
		PriceCents: p.PriceCents, Currency: p.Currency,
		Availability: p.Availability.Status, Deleted: p.Deleted,
	}
	for _, v := range p.Variants {
		data.Variants = append(data.Variants, VariantPrice{SKU: v.SKU, PriceCents: v.PriceCents})
	}
	type named struct {
		eventType, name string
	}
	var found []named
	if p.Deleted {
		found = append(found, named{EventProductDeleted, "deleted"})
	} else {
		if p.PriceVersion > 1 {
			found = append(found, named{EventProductPriceChanged, fmt.Sprintf("price-%d", p.PriceVersion)})
		}
		// A product without variants takes its SourceVersion from its
		// stock, whose version 1 is its creation; one with variants counts
		// its variants' changes from 0 (noteVariantStock).
		if p.Availability.SourceVersion > 1 || len(p.Variants) > 0 && p.Availability.SourceVersion > 0 {
			found = append(found, named{EventProductAvailabilityChanged, fmt.Sprintf("availability-%d", p.Availability.SourceVersion)})
		}
	}
	var events []Event
	for i, f := range found {
		seq := p.Version*2 + int64(i)
		d := data
		events = append(events, Event{
			Meta:       Meta{ID: "event-" + p.ID + "-" + f.name, Type: TypeEvent, SchemaVersion: SchemaVersion},
			EventType:  f.eventType,
			Subject:    p.ID,
			Sequence:   seq,
			ProductID:  p.ID,
			OccurredAt: p.LastUpdated,
			Product:    &d,
		})
	}
	return events
}

// eventLines are an order's lines as its events carry them: without the
// shard count of their stock, the shop's own bookkeeping.
func eventLines(lines []OrderLine) []OrderLine {
	out := slices.Clone(lines)
	for i := range out {
		out[i].StockShards = 0
	}
	return out
}
