// Package repo holds the shop's typed repositories: one per container (and
// per view), each written once over the port of package store, so either
// adapter serves them. Every read-modify-write goes through one helper
// (update, in rmw.go) with one retry policy (Retry), If-Match everywhere,
// and every copy through one version guard (putGuarded).
//
// A process builds one Set (New) and hands it to everything that reads or
// writes: the API, the write protocols of store/writes and the feed
// workers.
package repo

import "github.com/reference-shop/shop/store"

// Set is every typed repository, each written once over the port. A
// process builds one (New) and hands it to the API, the feed workers and
// the write protocols (writes.New), so each repository is opened, and each
// setting read, in one place.
type Set struct {
	Products         *Products
	Reviews          *Reviews
	Carts            *Carts
	Orders           *Orders
	ProductSummaries *ProductSummaries
	OrderSummaries   *OrderSummaries
	Inventory        *Inventory
	Fanouts          *Fanouts
	Search           *SearchIndex
	Webhooks         *Webhooks
}

// New returns every repository over s, with the order status view in
// statusBuckets buckets per status and day (0: domain.DefaultStatusBuckets;
// the API that reads the view and the feed that writes it share the Set,
// so they cannot disagree). The store is wrapped in store.Patient: a
// caller whose context asks (store.WithPatience, the feed workers) waits
// out throttles, a request does not. Wrap s in store.Metered first for the
// cost headers and the feed batches' charges.
func New(s store.Store, statusBuckets int) *Set {
	s = store.Patient(s)
	return &Set{
		Products:         NewProducts(s),
		Reviews:          NewReviews(s),
		Carts:            NewCarts(s),
		Orders:           NewOrders(s),
		ProductSummaries: NewProductSummaries(s),
		OrderSummaries:   NewOrderSummariesIn(s, statusBuckets),
		Inventory:        NewInventory(s),
		Fanouts:          NewFanouts(s),
		Search:           NewSearchIndex(s),
		Webhooks:         NewWebhooks(s),
	}
}

// NewWithoutEvents is New with the outbox off: the orders' moves write no
// event (Orders.Move). Only the cost lab uses it, to measure what the
// events cost a checkout and a move beside the same work without them;
// the shop itself always writes them (nothing the API or the feeds build
// calls this).
func NewWithoutEvents(s store.Store, statusBuckets int) *Set {
	set := New(s, statusBuckets)
	set.Orders.noEvents = true
	return set
}
