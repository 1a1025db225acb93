// Package writestest checks the checkout workflow's money and stock
// invariants over a whole shop, for the tests that drive it (the
// workflow's own, the model-based and the kill -9 ones). It reads every
// order, reservation and stock, and every payment of the embedded
// provider, and says what does not add up.
package writestest

import (
	"context"
	"fmt"
	"strings"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// Payments is a provider that lists an order's payments, as the embedded
// one does.
type Payments interface {
	ByOrder(orderID string) []payments.Payment
	Payments() []payments.Payment
}

// Check reads the shop at rest and returns every invariant it breaks:
//
//   - an order rests: none is still in progress (run the sweeper first);
//   - an order whose state holds money (placed: authorized; shipped,
//     delivered: captured) has exactly one live payment, of its total, in
//     that state; any other order has none live;
//   - every payment belongs to an order;
//   - a line of an order whose state sold its units has its reservation
//     committed with the line's quantity; one whose state returned them
//     has none held or committed;
//   - for each product in stocked (a variant is keyed "product/SKU",
//     domain.LineLabel), available (in every shard of a split stock) +
//     held + committed + in flight between shards equal what was stocked,
//     and no order line holds units in two shards;
//   - no cart keeps the marker of an order that rests;
//   - every move of an order into a state with an event (its History)
//     has exactly that event, at the move's sequence, and every event
//     reports a move the order made (the outbox: CheckEvents).
func Check(ctx context.Context, st store.Store, pay Payments, stocked map[string]int64) ([]string, error) {
	var bad []string
	orders, err := all[domain.Order](ctx, st.Container(store.OrdersContainer), domain.TypeOrder)
	if err != nil {
		return nil, err
	}
	reservations, err := all[domain.Reservation](ctx, st.Container(store.InventoryContainer), domain.TypeReservation)
	if err != nil {
		return nil, err
	}
	byKey := map[[2]string]domain.Reservation{} // product/SKU, order
	for _, r := range reservations {
		if r.State == domain.ReservationMoved {
			continue // a split stock's marker: the take went on to another shard
		}
		if prior, ok := byKey[[2]string{domain.LineLabel(r.Product(), r.SKU), r.OrderID}]; ok && prior.State != domain.ReservationReleased {
			bad = append(bad, fmt.Sprintf("order %s holds reservations of %s in two shards (%d and %d)", r.OrderID, r.Product(), prior.Shard, r.Shard))
			if r.State == domain.ReservationReleased {
				continue
			}
		}
		byKey[[2]string{domain.LineLabel(r.Product(), r.SKU), r.OrderID}] = r
	}
	known := map[string]bool{}
	for _, o := range orders {
		known[o.ID] = true
		st, _ := domain.StateOf(o.Status)
		if st.InProgress {
			bad = append(bad, fmt.Sprintf("order %s is still %s", o.ID, o.Status))
			continue
		}
		bad = append(bad, checkMoney(o, st, pay.ByOrder(o.ID))...)
		for _, l := range o.Items {
			if l.Unlimited {
				continue
			}
			r, ok := byKey[[2]string{domain.LineLabel(l.ProductID, l.SKU), o.ID}]
			switch {
			case st.Stock == domain.StockSold && (!ok || r.State != domain.ReservationCommitted || r.Quantity != int64(l.Quantity)):
				bad = append(bad, fmt.Sprintf("order %s is %s, but its reservation of %s is %+v (found %v), not %d committed", o.ID, o.Status, l.ProductID, r.State, ok, l.Quantity))
			case st.Stock == domain.StockReturned && ok && r.State != domain.ReservationReleased:
				bad = append(bad, fmt.Sprintf("order %s is %s, but its reservation of %s is %s", o.ID, o.Status, l.ProductID, r.State))
			}
		}
	}
	for _, p := range pay.Payments() {
		if !known[p.OrderID] {
			bad = append(bad, fmt.Sprintf("payment %s (%s) belongs to no order (%s)", p.ID, p.Status, p.OrderID))
		}
	}
	for _, r := range reservations {
		if !known[r.OrderID] && r.State != domain.ReservationReleased {
			bad = append(bad, fmt.Sprintf("reservation of %s for %s is %s, and no such order exists", r.ProductID, r.OrderID, r.State))
		}
	}
	for id, want := range stocked {
		product, sku, _ := strings.Cut(id, "/")
		s, err := repo.NewInventory(st).Total(ctx, product, sku)
		if err != nil {
			return nil, fmt.Errorf("stock of %s: %w", id, err)
		}
		got := s.Available + s.Sending
		for _, r := range reservations {
			if domain.LineLabel(r.Product(), r.SKU) == id && r.State != domain.ReservationReleased && r.State != domain.ReservationMoved {
				got += r.Quantity
			}
		}
		if got != want {
			bad = append(bad, fmt.Sprintf("product %s: available %d + held and sold + in flight = %d units, but %d were stocked", id, s.Available, got, want))
		}
	}
	carts, err := all[domain.Cart](ctx, st.Container(store.CartsContainer), domain.TypeCart)
	if err != nil {
		return nil, err
	}
	rest := map[string]string{}
	for _, o := range orders {
		rest[o.ID] = o.Status
	}
	for _, c := range carts {
		if id, ok := c.PendingOrder(); ok && rest[id] != "" {
			bad = append(bad, fmt.Sprintf("cart of %s keeps the marker of order %s, which is %s", c.UserID, id, rest[id]))
		}
	}
	events, err := all[domain.Event](ctx, st.Container(store.OrdersContainer), domain.TypeEvent)
	if err != nil {
		return nil, err
	}
	return append(bad, CheckEvents(orders, events)...), nil
}

// CheckEvents compares the orders' events with their moves: a move into
// a state with an event (domain.OrderEventType) at place n of the
// order's History must have written the event of sequence n and that
// type, and an event must report such a move; an order opened in a
// state with an event (one written placed, with no History yet: the
// sample data's) has it at sequence 0. It returns what does not match.
func CheckEvents(orders []domain.Order, events []domain.Event) []string {
	var bad []string
	have := map[string]domain.Event{}
	for _, e := range events {
		have[e.ID] = e
	}
	for _, o := range orders {
		want := map[string]string{} // id → type
		opened := o.Status
		if len(o.History) > 0 {
			opened = o.History[0].From
		}
		if t, ok := domain.OrderEventType(opened); ok {
			want[domain.EventID(o.ID, 0)] = t
		}
		for i, step := range o.History {
			if t, ok := domain.OrderEventType(step.To); ok {
				want[domain.EventID(o.ID, int64(i+1))] = t
			}
		}
		for id, t := range want {
			e, ok := have[id]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("order %s (%s) made a move to %s, but its event %s is missing", o.ID, o.Status, t, id))
			case e.EventType != t || e.Subject != o.ID || e.UserID != o.UserID:
				bad = append(bad, fmt.Sprintf("event %s is %s of %s, want %s of order %s", id, e.EventType, e.Subject, t, o.ID))
			}
			delete(have, id)
		}
	}
	for _, e := range have {
		if e.Order != nil {
			bad = append(bad, fmt.Sprintf("event %s (%s of order %s) reports no move the order made", e.ID, e.EventType, e.Subject))
		}
	}
	return bad
}

// checkMoney checks an order's payments against what its state holds.
func checkMoney(o domain.Order, st domain.State, ps []payments.Payment) []string {
	var live []payments.Payment
	for _, p := range ps {
		if p.Live() {
			live = append(live, p)
		}
	}
	want := map[string]string{domain.MoneyHeld: payments.Authorized, domain.MoneyCharged: payments.Captured}[st.Money]
	switch {
	case want == "" && len(live) > 0:
		return []string{fmt.Sprintf("order %s is %s, but holds live payments %v", o.ID, o.Status, live)}
	case want == "":
		return nil
	case o.Payment == nil:
		return nil // an order from before payments
	case len(live) != 1:
		return []string{fmt.Sprintf("order %s is %s: want one live payment, have %v", o.ID, o.Status, ps)}
	case live[0].Status != want || live[0].AmountCents != o.TotalCents:
		return []string{fmt.Sprintf("order %s is %s (total %d): want its payment %s, have %+v", o.ID, o.Status, o.TotalCents, want, live[0])}
	}
	return nil
}

// all reads every document of type typ in c.
func all[T any](ctx context.Context, c store.Container, typ string) ([]T, error) {
	return QueryAll[T](ctx, c, store.Query{Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: typ}}})
}

// QueryAll pages q to its end and decodes every item.
func QueryAll[T any](ctx context.Context, c store.Container, q store.Query) ([]T, error) {
	q.Limit = store.MaxQueryPageSize
	var out []T
	for {
		page, err := c.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			v, err := repo.Decode[T](it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if page.Continuation == "" {
			return out, nil
		}
		q.Continuation = page.Continuation
	}
}
