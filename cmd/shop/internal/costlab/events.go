package costlab

import (
	"context"
	"fmt"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/writes"
)

// This file measures what the outbox costs (domain/events.go): each
// event is one more create in a batch the move writes anyway, so the
// figures compare the same work with the events and without them
// (repo.NewWithoutEvents, the lab's alone).

// eventsIndexed is what the events added when their payload was indexed,
// as this lab measured it on commit 9d93e0a (go run ./cmd/shop cost, 200
// of each): the orders container indexed every path but an order's
// items, address and customer, so an event's copy of them (/order/*) was
// indexed, term by term, and an event cost more the more lines it
// carried. The container now excludes /order/* (migrations/containers.go):
// nothing queries an event's payload, the webhooks feed reads events
// whole from the change feed. Kept here, not measured again.
var eventsIndexed = map[string]float64{
	"checkout of 1 tracked lines":  37.90,
	"checkout of 3 tracked lines":  47.80,
	"checkout of 10 tracked lines": 79.30,
	"ship a placed order":          23.90,
	"cancel a placed order":        23.90,
	"cancel a shipped order":       23.90,
}

// checkoutEvents is how many events a checkout that places its order
// writes: order.authorized and order.placed.
const checkoutEvents = 2

// costOf is the mean cost of one unit of work.
type costOf struct {
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
}

// eventCost is one unit of work with its events and without them.
type eventCost struct {
	Work string `json:"work"`
	// Events is how many events the work writes.
	Events   int     `json:"events"`
	With     costOf  `json:"with"`
	Without  costOf  `json:"without"`
	AddedOps float64 `json:"addedOps"`
	AddedRU  float64 `json:"addedRU"`
	// PerEventRU is AddedRU / Events.
	PerEventRU float64 `json:"perEventRU"`
	// IndexedAddedRU is what the events added with their payload
	// indexed (eventsIndexed).
	IndexedAddedRU float64 `json:"indexedAddedRU"`
}

func newEventCost(work string, events int, with, without []sample) eventCost {
	w, wo := summarize(design{}, with), summarize(design{}, without)
	c := eventCost{Work: work, Events: events,
		With:     costOf{StoreOps: w.StoreOps, RequestUnits: w.RequestUnits},
		Without:  costOf{StoreOps: wo.StoreOps, RequestUnits: wo.RequestUnits},
		AddedOps: report.Round2(w.StoreOps - wo.StoreOps), AddedRU: report.Round2(w.RequestUnits - wo.RequestUnits)}
	if events > 0 {
		c.PerEventRU = report.Round2(c.AddedRU / float64(events))
	}
	c.IndexedAddedRU = eventsIndexed[work]
	return c
}

// eventMoves are the moves a person makes whose cost with and without
// the event the lab measures: each on an order of workflowLines tracked
// lines that a checkout placed (unmetered), through SetOrderStatus, its
// effects included.
var eventMoves = []struct {
	work string
	path []string // the moves made first, unmetered
	to   string
}{
	{"ship a placed order", nil, domain.StatusShipped},
	{"cancel a placed order", nil, domain.StatusCancelled},
	{"cancel a shipped order", []string{domain.StatusShipped}, domain.StatusCancelled},
}

// measureEventMoves measures each of eventMoves reps times (after one
// warm-up) with the events and without, alternating the two.
func (l *inventoryLab) measureEventMoves(ctx context.Context, reps int) ([]eventCost, error) {
	products := l.tracked[:workflowLines]
	var out []eventCost
	for _, m := range eventMoves {
		var with, without []sample
		for i := range reps + 1 {
			for _, w := range []*writes.Writes{l.w, l.quiet} {
				user, err := l.newBuyer(ctx, products)
				if err != nil {
					return nil, err
				}
				o, err := w.Checkout(ctx, labCheckout(user, user+"-key"))
				if err != nil {
					return nil, fmt.Errorf("%s: checkout: %w", m.work, err)
				}
				for _, to := range m.path {
					if o, err = w.SetOrderStatus(ctx, o.UserID, o.ID, "", to); err != nil {
						return nil, fmt.Errorf("%s: %s: %w", m.work, to, err)
					}
				}
				s, err := once(ctx, func(ctx context.Context, _ int) error {
					_, err := w.SetOrderStatus(ctx, o.UserID, o.ID, "", m.to)
					return err
				}, 0)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", m.work, err)
				}
				switch {
				case i == 0: // the warm-up
				case w == l.w:
					with = append(with, s)
				default:
					without = append(without, s)
				}
			}
		}
		out = append(out, newEventCost(m.work, 1, with, without))
	}
	return out, nil
}
