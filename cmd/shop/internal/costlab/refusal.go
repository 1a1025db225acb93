package costlab

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/writes"
)

// refusalLines are the cart sizes of the refused checkouts the lab
// measures: one sold-out line alone, and the largest cart
// (domain.MaxCartLines) of lines in stock and that sold-out line.
var refusalLines = []int{1, domain.MaxCartLines}

// refusalCost is what one refused checkout costs.
type refusalCost struct {
	Lines   int          `json:"lines"`
	Refusal designResult `json:"refusal"`
	// Taken is the reservations a refusal wrote, per refusal: each took
	// units that other buyers saw as sold until it returned them.
	Taken float64 `json:"reservationsTaken"`
	// Before is the same refusal before the checkout read the stock
	// first (refusalsBefore).
	Before refusalBefore `json:"before"`
}

// refusalBefore is what a refusal cost when the checkout took every
// line's units and returned them all when one was short.
type refusalBefore struct {
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
	Taken        float64 `json:"reservationsTaken"`
}

// refusalsBefore are the refusals as this lab measured them on commit
// 54f3385 (go run ./cmd/shop cost, 200 refusals each), the last before
// the checkout read the stock first: that protocol is gone from the
// code, so its figures are kept here, not measured again.
var refusalsBefore = map[int]refusalBefore{
	1:                   {StoreOps: 8, RequestUnits: 22.35, Taken: 0},
	domain.MaxCartLines: {StoreOps: 155, RequestUnits: 1171.32, Taken: 49},
}

// soldOutID is the lab's product with no unit left.
const soldOutID = "inv-soldout"

// measureRefusals checks out, reps times after one warm-up, a cart of
// n-1 products in stock and one sold out, for each n of refusalLines:
// each try is refused, and the cart stays as it was, as for a buyer who
// presses "Place order" again and again (each try has its own
// Idempotency-Key).
func (l *inventoryLab) measureRefusals(ctx context.Context, reps int) ([]refusalCost, error) {
	rw := writes.New(l.raw, nil, nil)
	soldOut := domain.Product{Meta: domain.Meta{ID: soldOutID}, Name: "Sold out", CategoryID: "inventory-lab",
		CategoryName: "Inventory lab", PriceCents: 999, Currency: "USD", PriceVersion: 1, Version: 1, LastUpdated: l.now}
	soldOut, err := rw.CreateProduct(ctx, soldOut, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("sold-out product: %w", err)
	}
	inStock := make([]domain.Product, slices.Max(refusalLines)-1)
	for i := range inStock {
		p := soldOut
		p.ID, p.Name = fmt.Sprintf("inv-r-%02d", i), fmt.Sprintf("Refusal lab %d", i)
		if inStock[i], err = rw.CreateProduct(ctx, p, domain.MaxStock, nil); err != nil {
			return nil, fmt.Errorf("inventory lab product %s: %w", p.ID, err)
		}
	}
	want := []domain.Shortage{{ProductID: soldOutID, Requested: 1, Available: 0}}

	var out []refusalCost
	for _, n := range refusalLines {
		user := fmt.Sprintf("inv-refused-%02d", n)
		if _, err := l.raw.Carts.Update(ctx, user, "", func(c *domain.Cart) error {
			for _, p := range append([]domain.Product{soldOut}, inStock[:n-1]...) {
				if err := c.SetQuantity(p, "", 1, l.now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		var samples []sample
		for i := range reps + 1 {
			s, err := once(ctx, func(ctx context.Context, _ int) error {
				_, err := l.w.Checkout(ctx, labCheckout(user, fmt.Sprintf("%s-key-%d", user, i)))
				if e, ok := errors.AsType[*domain.Error](err); ok && slices.Equal(e.Shortages, want) {
					return nil
				}
				return fmt.Errorf("checkout of %d lines, one sold out: %v, want refused for %s alone", n, err, soldOutID)
			}, 0)
			if err != nil {
				return nil, err
			}
			if i > 0 { // the first is a warm-up
				samples = append(samples, s)
			}
		}
		taken, err := l.reservationsOf(ctx, user)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%d lines, 1 sold out", n)
		if n == 1 {
			name = "1 line, sold out"
		}
		out = append(out, refusalCost{Lines: n,
			Refusal: summarize(design{name: name}, samples),
			Taken:   float64(taken) / float64(reps+1),
			Before:  refusalsBefore[n]})
	}
	return out, nil
}

// reservationsOf counts the reservations user's checkouts wrote, held
// or returned (a returned one stays, for ReleasedTTL): one
// cross-partition query, unmetered.
func (l *inventoryLab) reservationsOf(ctx context.Context, user string) (int, error) {
	q := store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeReservation},
			{Path: "userId", Op: store.OpEqual, Value: user},
		},
		Select: []string{"id"},
	}
	n := 0
	for {
		page, err := l.rawInventory.Query(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("reservations of %s: %w", user, err)
		}
		n += len(page.Items)
		if page.Continuation == "" {
			return n, nil
		}
		q.Continuation = page.Continuation
	}
}
