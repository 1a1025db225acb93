package writes_test

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
	"github.com/reference-shop/shop/store/writes/writestest"
)

// wantEvent is one event an order's life should have written: its type
// and the payment word its payload carries.
type wantEvent struct {
	typ, payment string
}

// eventsOf reads the events of order orderID from its user's partition,
// in sequence order.
func eventsOf(t *testing.T, st store.Store, userID, orderID string) []domain.Event {
	t.Helper()
	evs, err := writestest.QueryAll[domain.Event](t.Context(), st.Container(store.OrdersContainer), store.Query{
		PartitionKey: userID,
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeEvent},
			{Path: "subject", Op: store.OpEqual, Value: orderID},
		}})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(evs, func(a, b domain.Event) int { return cmp.Compare(a.Sequence, b.Sequence) })
	return evs
}

// checkOrderEvents checks that order o (as it rests) wrote exactly want,
// in order: each at the sequence of the move that wrote it (its place in
// o.History), with the derived id, the retention as its ttl, and the
// order's payload as the move left it.
func checkOrderEvents(t *testing.T, st store.Store, o domain.Order, want ...wantEvent) {
	t.Helper()
	got := eventsOf(t, st, o.UserID, o.ID)
	var types []string
	for _, e := range got {
		types = append(types, e.EventType)
	}
	var wantTypes []string
	for _, w := range want {
		wantTypes = append(wantTypes, w.typ)
	}
	if !slices.Equal(types, wantTypes) {
		t.Fatalf("events of %s (%s) = %v, want %v", o.ID, o.Status, types, wantTypes)
	}
	last := int64(-1)
	for i, e := range got {
		if e.Sequence <= last {
			t.Errorf("event %d of %s has sequence %d, not above %d", i, o.ID, e.Sequence, last)
		}
		last = e.Sequence
		if e.ID != domain.EventID(o.ID, e.Sequence) || e.Subject != o.ID || e.UserID != o.UserID {
			t.Errorf("event %s: subject %s, user %s; want id %s of %s, %s", e.ID, e.Subject, e.UserID, domain.EventID(o.ID, e.Sequence), o.ID, o.UserID)
		}
		if e.TTL == nil || time.Duration(*e.TTL)*time.Second != domain.EventRetention {
			t.Errorf("event %s: ttl %v, want %v", e.ID, e.TTL, domain.EventRetention)
		}
		if e.Sequence < 1 || int(e.Sequence) > len(o.History) {
			t.Errorf("event %s: sequence %d, but the order made %d moves", e.ID, e.Sequence, len(o.History))
			continue
		}
		step := o.History[e.Sequence-1]
		d := e.Order
		if d == nil {
			t.Errorf("event %s has no order", e.ID)
			continue
		}
		if typ, _ := domain.OrderEventType(step.To); typ != e.EventType || d.Status != step.To || d.PreviousStatus != step.From || !e.OccurredAt.Equal(step.At) {
			t.Errorf("event %s: %s, %s → %s at %v; the move it reports is %+v", e.ID, e.EventType, d.PreviousStatus, d.Status, e.OccurredAt, step)
		}
		if d.ID != o.ID || d.UserID != o.UserID || !reflect.DeepEqual(d.Items, o.Items) || d.ItemCount != o.ItemCount ||
			d.SubtotalCents != o.SubtotalCents || d.TotalCents != o.TotalCents || d.Currency != domain.Currency ||
			d.ShippingAddress != o.ShippingAddress || d.Customer != o.Customer || !d.CreatedAt.Equal(o.CreatedAt) {
			t.Errorf("event %s carries %+v, not the order %+v", e.ID, *d, o)
		}
		if d.Payment != want[i].payment {
			t.Errorf("event %s (%s): payment %q, want %q", e.ID, e.EventType, d.Payment, want[i].payment)
		}
		if e.EventType == domain.EventOrderRejected && !reflect.DeepEqual(d.Rejection, o.Rejection) {
			t.Errorf("event %s: rejection %+v, want %+v", e.ID, d.Rejection, o.Rejection)
		}
	}
}

// TestAnOrdersEventsThroughItsLife: a checkout writes order.authorized
// and order.placed; shipping and delivering one each; a cancel of a
// placed order and of a shipped one writes order.cancelled, with the
// payment voided or refunded.
func TestAnOrdersEventsThroughItsLife(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 10, "p2": 10})
	w := s.writes(s.st)
	ctx := t.Context()
	placed := func(user string) domain.Order {
		t.Helper()
		s.fill(user, 2, "p1", "p2")
		o, err := w.Checkout(ctx, checkout(user, "k-"+user, "pm_card_visa"))
		if err != nil || o.Status != domain.StatusPlaced {
			t.Fatalf("checkout of %s: %v %s", user, err, o.Status)
		}
		return o
	}
	move := func(o domain.Order, to string) domain.Order {
		t.Helper()
		got, err := w.SetOrderStatus(ctx, o.UserID, o.ID, "", to)
		if err != nil {
			t.Fatalf("%s → %s: %v", o.ID, to, err)
		}
		return got
	}
	authorized := wantEvent{domain.EventOrderAuthorized, "authorized"}
	placedEv := wantEvent{domain.EventOrderPlaced, "authorized"}
	shipped := wantEvent{domain.EventOrderShipped, "captured"}

	o := placed("u1")
	checkOrderEvents(t, s.st, o, authorized, placedEv)
	o = move(o, domain.StatusShipped)
	checkOrderEvents(t, s.st, o, authorized, placedEv, shipped)
	o = move(o, domain.StatusDelivered)
	checkOrderEvents(t, s.st, o, authorized, placedEv, shipped, wantEvent{domain.EventOrderDelivered, "captured"})

	voided := move(placed("u2"), domain.StatusCancelled)
	checkOrderEvents(t, s.st, voided, authorized, placedEv, wantEvent{domain.EventOrderCancelled, "voided"})

	refunded := move(move(placed("u3"), domain.StatusShipped), domain.StatusCancelled)
	checkOrderEvents(t, s.st, refunded, authorized, placedEv, shipped, wantEvent{domain.EventOrderCancelled, "refunded"})
	s.settle(false)
	s.check()
}

// TestARejectedOrdersEvent: an order refused because a line ran out
// between the stock read and the take, and one whose card was declined,
// each write one order.rejected carrying the rejection.
func TestARejectedOrdersEvent(t *testing.T) {
	t.Run("out of stock", func(t *testing.T) {
		s := newShop(t, map[string]int64{"p1": 5})
		s.fill("u1", 2, "p1")
		step := &stepIn{Store: s.st}
		step.beforeTake = func(res domain.Reservation) {
			// Someone else buys every unit first.
			if _, err := s.repos.Inventory.SetStock(t.Context(), res.ProductID, "", 0, "", time.Now()); err != nil {
				t.Error(err)
			}
		}
		_, err := writes.New(repo.New(step, 0), s.pay, nil).Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
		if !domain.IsCode(err, domain.EOUTOFSTOCK) {
			t.Fatalf("checkout = %v, want out of stock", err)
		}
		orders, _ := allOrders(t.Context(), s.st)
		if len(orders) != 1 || orders[0].Rejection == nil || orders[0].Rejection.Reason != domain.RejectedOutOfStock {
			t.Fatalf("orders = %+v, want one rejected out of stock", orders)
		}
		checkOrderEvents(t, s.st, orders[0], wantEvent{domain.EventOrderRejected, "none"})
	})
	t.Run("card declined", func(t *testing.T) {
		s := newShop(t, map[string]int64{"p1": 5})
		s.fill("u1", 1, "p1")
		o, err := s.writes(s.st).Checkout(t.Context(), checkout("u1", "k1", "pm_card_chargeDeclinedInsufficientFunds"))
		if !domain.IsCode(err, domain.EDECLINED) {
			t.Fatalf("checkout = %v, want declined", err)
		}
		checkOrderEvents(t, s.st, o, wantEvent{domain.EventOrderRejected, "declined"})
	})
}

// TestAnExpiredOrdersEvent: an order whose checkout died pending is
// expired by the sweeper, which writes order.expired and nothing else.
func TestAnExpiredOrdersEvent(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 5})
	s.fill("u1", 1, "p1")
	d := &dying{Store: s.st}
	d.left.Store(2) // claim and open: the order is pending
	dead := s.writes(d)
	writes.SetBound(dead, 50*time.Millisecond)
	_, _ = dead.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
	s.settle(true)
	orders, _ := allOrders(t.Context(), s.st)
	if len(orders) != 1 || orders[0].Status != domain.StatusExpired {
		t.Fatalf("orders = %+v, want one expired", orders)
	}
	checkOrderEvents(t, s.st, orders[0], wantEvent{domain.EventOrderExpired, "none"})
	s.check()
}

// TestAReplayedMoveWritesNoSecondEvent: the same move written again (a
// worker that read the order before it moved) is ErrMoved and leaves
// one event; so is a move whose event is there already (the batch
// committed once), and it writes nothing.
func TestAReplayedMoveWritesNoSecondEvent(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 5})
	s.fill("u1", 1, "p1")
	ctx := t.Context()
	o, err := s.writes(s.st).Checkout(ctx, checkout("u1", "k1", "pm_card_visa"))
	if err != nil {
		t.Fatal(err)
	}
	ship := o
	if err := ship.SetStatus(domain.StatusShipped, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.Orders.Move(ctx, ship, domain.StatusPlaced); err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.Orders.Move(ctx, ship, domain.StatusPlaced); !errors.Is(err, repo.ErrMoved) {
		t.Errorf("the same move again = %v, want ErrMoved", err)
	}
	if n := len(eventsOf(t, s.st, "u1", o.ID)); n != 3 {
		t.Errorf("%d events after a replayed ship, want 3", n)
	}

	// The event of the next move is there already: the move is refused
	// as moved, and the order stays shipped.
	shipped, err := s.repos.Orders.Get(ctx, "u1", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	deliver := shipped
	if err := deliver.SetStatus(domain.StatusDelivered, time.Now()); err != nil {
		t.Fatal(err)
	}
	ev, _ := domain.NewOrderEvent(deliver, domain.StatusShipped)
	if _, err := repo.CreateDoc(ctx, s.st.Container(store.OrdersContainer), "u1", ev); err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.Orders.Move(ctx, deliver, domain.StatusShipped); !errors.Is(err, repo.ErrMoved) {
		t.Errorf("a move whose event exists = %v, want ErrMoved", err)
	}
	if got, _ := s.repos.Orders.Get(ctx, "u1", o.ID); got.Status != domain.StatusShipped || got.ETag != shipped.ETag {
		t.Errorf("order after the refused move: %s, want shipped and unchanged", got.Status)
	}
}

// TestOpenWritesTheEventOfItsStatus: an order written placed (the sample
// data's) writes its order.placed in the opening batch, from no status;
// a checkout's pending order writes none.
func TestOpenWritesTheEventOfItsStatus(t *testing.T) {
	s := newShop(t, nil)
	ctx := t.Context()
	p := domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Tea", PriceCents: 500, Currency: "USD", Version: 1}
	var c domain.Cart
	if err := c.SetQuantity(p, "", 2, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.UserID = "u1"
	for _, status := range []string{domain.StatusPlaced, domain.StatusPending} {
		o, err := domain.NewOrder(domain.OrderID(time.Now(), status), c, domain.Customer{Name: "U"}, req.Address, "k-"+status, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		o.Status = status
		opened, err := s.repos.Orders.Open(ctx, o, domain.Idempotency{Key: "k-" + status, RequestHash: "h"})
		if err != nil {
			t.Fatal(err)
		}
		evs := eventsOf(t, s.st, "u1", o.ID)
		switch {
		case status == domain.StatusPending && len(evs) != 0:
			t.Errorf("a pending order wrote %d events", len(evs))
		case status == domain.StatusPlaced && (len(evs) != 1 || evs[0].EventType != domain.EventOrderPlaced ||
			evs[0].Sequence != int64(len(opened.History)) || evs[0].Order.PreviousStatus != ""):
			t.Errorf("a placed order wrote %+v, want one order.placed from no status", evs)
		}
	}
}

// TestOrderEventsAreAtomicWithTheirMoves: with order batches failing at
// random (nothing written, as a 503 before the store answered), many
// orders are checked out, shipped and cancelled, and the shop settled:
// every move an order made has its event and every event its move
// (writestest.Check), whatever failed where.
func TestOrderEventsAreAtomicWithTheirMoves(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 100})
	ctx := t.Context()
	f := faultyOrders(s.st, 0.3)
	w := writes.New(repo.New(f, 0), s.pay, nil)
	writes.SetBound(w, 100*time.Millisecond)
	for i := range 12 {
		user := "u" + string(rune('a'+i))
		s.fill(user, 1, "p1")
		o, err := w.Checkout(ctx, checkout(user, "k", "pm_card_visa"))
		if err != nil || o.Status != domain.StatusPlaced {
			continue
		}
		for _, to := range []string{domain.StatusShipped, domain.StatusCancelled}[:1+i%2] {
			_, _ = w.SetOrderStatus(ctx, user, o.ID, "", to)
		}
	}
	f.Heal()
	s.settle(false)
	s.check()
	if f.Counts().Injected() == 0 {
		t.Fatal("no batch failed: the test proved nothing")
	}
}

// faultyOrders fails the given share of the orders container's batches
// with 503 before they reach the store.
func faultyOrders(st store.Store, rate float64) *faults.Store {
	return faults.Wrap(st, faults.Config{Seed: 33, Rules: []faults.Rule{
		{Ops: []faults.Op{faults.OpBatch}, Containers: []string{store.OrdersContainer}, Unavailable: rate},
	}})
}

// TestWithoutEventsWritesNone: the cost lab's repositories with the
// outbox off (repo.NewWithoutEvents) make the same checkout and moves
// and write no event, so the lab's "without" is the same work less the
// events.
func TestWithoutEventsWritesNone(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 5})
	s.fill("u1", 1, "p1")
	w := writes.New(repo.NewWithoutEvents(s.st, 0), s.pay, nil)
	o, err := w.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
	if err != nil || o.Status != domain.StatusPlaced {
		t.Fatalf("checkout: %v %s", err, o.Status)
	}
	if o, err = w.SetOrderStatus(t.Context(), "u1", o.ID, "", domain.StatusShipped); err != nil {
		t.Fatal(err)
	}
	checkOrderEvents(t, s.st, o)
}
