package main

import (
	"context"
	"fmt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes/writestest"
)

// ledger is one product's units as the store holds them, read straight
// from the containers (not through the API): the stock, every
// reservation of the product and every order holding it.
type ledger struct {
	Available int64
	// Sold is the units of the orders whose state sold them (placed,
	// shipped, delivered); Orders counts those orders.
	Sold   int64
	Orders int
	// Unfinished is the units held by orders still in progress: taken,
	// not sold, not back yet.
	Unfinished int64
	// Held counts the reservations still in state held (whatever their
	// order), HeldUnits their units.
	Held      int
	HeldUnits int64
	// Returning is the units of orders that gave them back (cancelled,
	// rejected, expired) whose reservation is not released yet.
	Returning int64
	// Wrong lists every reservation that disagrees with its order: a
	// placed order without a live reservation of its units, a
	// reservation of other units, a released reservation of a placed
	// order, a committed one without an order.
	Wrong []string
}

// balances reports whether the equation of the inventory holds: the
// units sold + available + held by unfinished checkouts (+ on their way
// back from cancelled orders) = the units ever put in stock.
func (l ledger) balances(total int64) bool {
	return l.Sold+l.Available+l.Unfinished+l.Returning == total
}

func (l ledger) String() string {
	return fmt.Sprintf("available %d, sold %d in %d orders, %d held by unfinished checkouts, %d returning from cancelled orders; %d reservations held (%d units); %d wrong",
		l.Available, l.Sold, l.Orders, l.Unfinished, l.Returning, l.Held, l.HeldUnits, len(l.Wrong))
}

// readLedger reads productID's ledger from st.
func readLedger(ctx context.Context, st store.Store, productID string) (ledger, error) {
	var l ledger
	inv := st.Container(store.InventoryContainer)
	stock, err := repo.ReadDoc[domain.Stock](ctx, inv, productID, domain.StockID)
	if err != nil {
		return l, fmt.Errorf("stock of %s: %w", productID, err)
	}
	l.Available = stock.Available
	reservations, err := writestest.QueryAll[domain.Reservation](ctx, inv, store.Query{PartitionKey: productID,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeReservation}}})
	if err != nil {
		return l, err
	}
	orders, err := writestest.QueryAll[domain.Order](ctx, st.Container(store.OrdersContainer), store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}}})
	if err != nil {
		return l, err
	}
	byID := map[string]domain.Order{}
	units := map[string]int64{}
	for _, o := range orders {
		for _, it := range o.Items {
			if it.ProductID == productID {
				byID[o.ID] = o
				units[o.ID] += int64(it.Quantity)
			}
		}
	}
	resOf := map[string]domain.Reservation{}
	for _, r := range reservations {
		resOf[r.OrderID] = r
		if r.State == domain.ReservationHeld {
			l.Held++
			l.HeldUnits += r.Quantity
		}
		o, ok := byID[r.OrderID]
		st, _ := domain.StateOf(o.Status)
		switch {
		case !ok && r.State == domain.ReservationHeld:
			l.Unfinished += r.Quantity
		case !ok && r.State == domain.ReservationCommitted:
			l.Wrong = append(l.Wrong, fmt.Sprintf("reservation of %s committed without an order", r.OrderID))
		case ok && r.State == domain.ReservationReleased && st.Stock == domain.StockSold:
			l.Wrong = append(l.Wrong, fmt.Sprintf("reservation of %s order %s released", o.Status, r.OrderID))
		case ok && r.State == domain.ReservationReleased:
			// Given back (or, written released, never taken).
		case ok && r.Quantity != units[r.OrderID]:
			l.Wrong = append(l.Wrong, fmt.Sprintf("reservation of %s holds %d units, its order %d", r.OrderID, r.Quantity, units[r.OrderID]))
		case ok && st.InProgress:
			l.Unfinished += r.Quantity
		case ok && st.Stock == domain.StockReturned:
			l.Returning += r.Quantity
		}
	}
	for id, o := range byID {
		if st, _ := domain.StateOf(o.Status); st.Stock != domain.StockSold {
			continue
		}
		l.Orders++
		l.Sold += units[id]
		if _, ok := resOf[id]; !ok {
			l.Wrong = append(l.Wrong, fmt.Sprintf("%s order %s has no reservation", o.Status, id))
		}
	}
	return l, nil
}
