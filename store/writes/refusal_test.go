package writes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// stepIn is a store that lets a test step in around the inventory's
// calls: beforeTake and afterTake around each take (a reservation's
// batch, Inventory.Reserve), onStockRead before each read of a stock
// document. It counts the takes.
type stepIn struct {
	store.Store
	beforeTake, afterTake func(res domain.Reservation)
	onStockRead           func(productID string)
	takes                 atomic.Int64
}

func (s *stepIn) Container(name string) store.Container {
	c := s.Store.Container(name)
	if name != store.InventoryContainer {
		return c
	}
	return stepInInventory{c, s}
}

type stepInInventory struct {
	store.Container
	s *stepIn
}

func (c stepInInventory) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	if id == domain.StockID && c.s.onStockRead != nil {
		c.s.onStockRead(pk)
	}
	return c.Container.Read(ctx, pk, id)
}

func (c stepInInventory) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	var res domain.Reservation
	take := len(ops) > 0 && ops[0].Kind == store.BatchCreate && json.Unmarshal(ops[0].Item, &res) == nil && res.Type == domain.TypeReservation
	if !take {
		return c.Container.ExecuteBatch(ctx, pk, ops)
	}
	c.s.takes.Add(1)
	if c.s.beforeTake != nil {
		c.s.beforeTake(res)
	}
	r, err := c.Container.ExecuteBatch(ctx, pk, ops)
	if c.s.afterTake != nil {
		c.s.afterTake(res)
	}
	return r, err
}

// soldOut is the product of a refusalShop with no unit left.
const soldOut = "p-sold-out"

// refusalShop is a store with products p00…p48, units[i] in stock each,
// and soldOut with none; u1's cart holds one unit of each, the sold-out
// line first. The write protocols run over the store wrapped by stepIn,
// metered; repos reads it as it is.
func refusalShop(t *testing.T, units func(i int) int64) (*writes.Writes, *repo.Set, *stepIn) {
	t.Helper()
	raw := openStore(t)
	repos := repo.New(raw, 0)
	setup := writes.New(repos, paymentstest.Embedded(t), nil)
	ids := []string{soldOut}
	for i := range domain.MaxCartLines - 1 {
		ids = append(ids, fmt.Sprintf("p%02d", i))
	}
	for i, id := range ids {
		p := domain.Product{Meta: domain.Meta{ID: id}, Name: "Tea " + id, CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
		n := int64(0)
		if i > 0 {
			n = units(i - 1)
		}
		if _, err := setup.CreateProduct(t.Context(), p, n, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := setup.SetCartLine(t.Context(), "u1", id, "", 1, ""); err != nil {
			t.Fatal(err)
		}
	}
	s := &stepIn{Store: raw}
	return writes.New(repo.New(store.Metered(s), 0), paymentstest.Embedded(t), nil), repos, s
}

// TestRefusalTheStockReadsCanTellTakesNothing: a cart of 49 lines in
// stock and one sold out, checked out again and again unchanged (each
// try with a new key, as a buyer pressing "Place order" again sends), is
// refused each time naming the sold-out line, from one point read of
// each line's stock: no unit is taken and returned, and the refusal
// costs the reads, the key's record and the cart's, not a take and a
// release of every line (155 operations, 1,171 RU each before).
func TestRefusalTheStockReadsCanTellTakesNothing(t *testing.T) {
	ws, repos, s := refusalShop(t, func(int) int64 { return 5 })
	want := []domain.Shortage{{ProductID: soldOut, Requested: 1, Available: 0}}
	// One point read per line, the key's record, and the cart read twice
	// (before the stock, and once more to confirm the refusal).
	maxOps := domain.MaxCartLines + 3
	for try := range 3 {
		ctx, m := store.WithMeter(t.Context())
		r := req
		r.Key = fmt.Sprintf("try-%d", try)
		_, err := ws.Checkout(ctx, r)
		if got := shortages(err); !slices.Equal(got, want) {
			t.Fatalf("try %d: checkout = %v, want refused for %+v alone", try, err, want)
		}
		ops, ru, _ := m.Totals()
		if ops > maxOps {
			t.Errorf("try %d: the refusal cost %d store operations (%.2f RU), want at most %d", try, ops, ru, maxOps)
		}
		t.Logf("try %d: refused for %s, %d store operations, %.2f RU", try, soldOut, ops, ru)
	}
	if n := s.takes.Load(); n != 0 {
		t.Errorf("the refusals took units %d times, want never", n)
	}
	c, err := repos.Carts.Get(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != domain.MaxCartLines || c.Pending != nil {
		t.Errorf("cart after the refusals: %d lines, marker %+v; want the %d lines, no marker", len(c.Items), c.Pending, domain.MaxCartLines)
	}
}

// TestAFailingCheckoutNeverRefusesAnHonestBuyer: u1's cart holds a
// sold-out line and p07, of which one unit is left; u2 buys that unit
// while u1's checkout runs (at the moment it would have taken it). u1's
// checkout cannot succeed, and the stock's reads tell it before any
// take: u2 gets the unit. Taking every line first held it from u2, who
// was told "available 0".
func TestAFailingCheckoutNeverRefusesAnHonestBuyer(t *testing.T) {
	const last = "p07"
	ws, _, s := refusalShop(t, func(i int) int64 {
		if fmt.Sprintf("p%02d", i) == last {
			return 1
		}
		return 5
	})
	if _, err := ws.SetCartLine(t.Context(), "u2", last, "", 1, ""); err != nil {
		t.Fatal(err)
	}
	var (
		once   sync.Once
		bought domain.Order
		err2   error
	)
	buy := func() {
		once.Do(func() {
			r := req
			r.UserID, r.Key = "u2", "u2-key"
			bought, err2 = ws.Checkout(t.Context(), r)
		})
	}
	s.afterTake = func(res domain.Reservation) {
		if res.UserID == "u1" && res.ProductID == last {
			buy()
		}
	}
	_, err := ws.Checkout(t.Context(), req)
	if got, want := shortages(err), []domain.Shortage{{ProductID: soldOut, Requested: 1, Available: 0}}; !slices.Equal(got, want) {
		t.Fatalf("u1's checkout = %v, want refused for %+v alone", err, want)
	}
	buy()
	if err2 != nil || len(bought.Items) != 1 {
		t.Fatalf("u2's checkout of the last unit of %s = %+v, %v; want it placed", last, bought.Items, err2)
	}
}

// TestTakesStopAtTheFirstShortLine: the stock's reads are a moment old,
// so a take can still find a line short (here p00's last unit is sold
// between the read and the take). Once a take has failed no further take
// starts: the failing checkout holds at most the takes already in flight
// (writes.ReserveConcurrency), never every line's units, and its order,
// rejected, returns them. The refusal names the line it found short.
func TestTakesStopAtTheFirstShortLine(t *testing.T) {
	const tight = "p00" // the cart's first line, once the sold-out one is gone
	ws, repos, s := refusalShop(t, func(i int) int64 {
		if fmt.Sprintf("p%02d", i) == tight {
			return 1
		}
		return 5
	})
	// The sold-out line leaves the cart: the reads find every line enough.
	if _, err := ws.RemoveCartLine(t.Context(), "u1", soldOut, "", ""); err != nil {
		t.Fatal(err)
	}
	// The other takes wait until the checkout has read the tight line's
	// count for its refusal, after its take failed (or, so that a
	// checkout that never gets there fails instead of hanging, waitLong).
	counted := make(chan struct{})
	gate, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	var tookTight atomic.Bool
	s.onStockRead = func(productID string) {
		if productID == tight && tookTight.CompareAndSwap(true, false) {
			close(counted)
		}
	}
	s.afterTake = func(res domain.Reservation) {
		if res.ProductID == tight {
			tookTight.Store(true)
		}
	}
	var sold sync.Once
	s.beforeTake = func(res domain.Reservation) {
		if res.ProductID == tight {
			sold.Do(func() {
				if _, err := repos.Inventory.SetStock(t.Context(), tight, "", 0, "", time.Now()); err != nil {
					t.Error(err)
				}
			})
			return
		}
		select {
		case <-counted:
		case <-gate.Done():
		}
	}
	s.takes.Store(0)
	_, err := ws.Checkout(t.Context(), req)
	if got, want := shortages(err), []domain.Shortage{{ProductID: tight, Requested: 1, Available: 0}}; !slices.Equal(got, want) {
		t.Fatalf("checkout = %v, want refused for %+v", err, want)
	}
	n := s.takes.Load()
	if n > writes.ReserveConcurrency {
		t.Errorf("%d takes, want at most %d: the ones in flight when the first failed", n, writes.ReserveConcurrency)
	}
	t.Logf("%d takes of %d lines, then the refusal for %s", n, domain.MaxCartLines-1, tight)
	for i := range domain.MaxCartLines - 1 {
		id := fmt.Sprintf("p%02d", i)
		want := int64(5)
		if id == tight {
			want = 0
		}
		if st, err := repos.Inventory.Stock(t.Context(), id, ""); err != nil || st.Available != want {
			t.Errorf("%s: %d available (%v), want %d", id, st.Available, err, want)
		}
	}
	if held, _, err := repos.Inventory.Held(t.Context(), 100, ""); err != nil || len(held) != 0 {
		t.Errorf("reservations still held: %d (%v), want none", len(held), err)
	}
}

// TestRefusalSeesNoUnitsOfAnotherCheckoutOfTheCart: two checkouts of one
// cart (two tabs) at once. The second reads the cart, then the stock,
// and between the two the first checks out the cart and takes its
// units. As if one ran after the other, the second finds the cart
// empty: it must not name the first's units short. Its refusal stands
// only if the cart is still the one it read.
func TestRefusalSeesNoUnitsOfAnotherCheckoutOfTheCart(t *testing.T) {
	raw := openStore(t)
	setup := writes.New(repo.New(raw, 0), paymentstest.Embedded(t), nil)
	p := domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
	if _, err := setup.CreateProduct(t.Context(), p, 5, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.SetCartLine(t.Context(), "u1", "p1", "", 5, ""); err != nil {
		t.Fatal(err)
	}
	s := &stepIn{Store: raw}
	ws := writes.New(repo.New(s, 0), paymentstest.Embedded(t), nil)
	var first atomic.Bool
	var placed domain.Order
	var err1 error
	s.onStockRead = func(string) {
		// The first's own read of the stock goes through.
		if first.CompareAndSwap(false, true) {
			r := req
			r.Key = "first-tab"
			placed, err1 = ws.Checkout(t.Context(), r)
		}
	}
	r := req
	r.Key = "second-tab"
	_, err := ws.Checkout(t.Context(), r)
	if err1 != nil || len(placed.Items) != 1 {
		t.Fatalf("first checkout = %+v, %v; want the cart ordered", placed.Items, err1)
	}
	if e, ok := errors.AsType[*domain.Error](err); !ok || e.Code != domain.ECONFLICT || e.Message != "the cart is empty" {
		t.Errorf("second checkout = %v, want 409 the cart is empty", err)
	}
}
