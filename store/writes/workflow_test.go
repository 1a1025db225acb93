package writes_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
	"github.com/reference-shop/shop/store/writes/writestest"
)

// shop is a store with products stocked for the workflow tests, the
// embedded payment provider, and what was stocked for the invariants.
type shop struct {
	t       *testing.T
	st      store.Store
	repos   *repo.Set
	pay     *payembedded.Provider
	stocked map[string]int64
}

func newShop(t *testing.T, units map[string]int64) *shop {
	t.Helper()
	st := openStore(t)
	pay := paymentstest.Embedded(t)
	s := &shop{t: t, st: st, repos: repo.New(st, 0), pay: pay, stocked: units}
	for id, n := range units {
		p := domain.Product{Meta: domain.Meta{ID: id}, Name: "Product " + id, CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
		if _, err := s.writes(st).CreateProduct(t.Context(), p, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// writes is the write protocols over st (the shop's store, or a wrapper).
func (s *shop) writes(st store.Store) *writes.Writes {
	return writes.New(repo.New(st, 0), s.pay, nil)
}

// fill puts n of each product in user's cart.
func (s *shop) fill(user string, n int, products ...string) {
	s.t.Helper()
	for _, id := range products {
		if _, err := s.writes(s.st).SetCartLine(s.t.Context(), user, id, "", n, ""); err != nil {
			s.t.Fatal(err)
		}
	}
}

// settle is what the shop does once nobody waits: the sweeper carries
// every order in progress on (no stall), the orders feed carries every
// order's effects out, and a change of each cart resolves a claim whose
// order was never opened.
func (s *shop) settle(expire bool) {
	s.t.Helper()
	ctx := s.t.Context()
	w := s.writes(s.st)
	expiry := time.Hour
	if expire {
		expiry = 0
	}
	for _, status := range []string{domain.StatusPending, domain.StatusReserved, domain.StatusAuthorized} {
		orders, _, err := s.repos.Orders.InProgress(ctx, status, store.MaxQueryPageSize, "")
		if err != nil {
			s.t.Fatal(err)
		}
		for _, o := range orders {
			if err := w.Sweep(ctx, o, 0, expiry); err != nil {
				s.t.Fatalf("sweep %s: %v", o.ID, err)
			}
		}
	}
	orders, err := allOrders(ctx, s.st)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, o := range orders {
		if err := w.CarryOut(ctx, o); err != nil {
			s.t.Fatalf("carry out %s: %v", o.ID, err)
		}
	}
	for _, o := range orders {
		if _, err := w.RemoveCartLine(ctx, o.UserID, "no-such-product", "", ""); err != nil {
			s.t.Fatalf("cart of %s: %v", o.UserID, err)
		}
	}
}

// check fails the test on every broken invariant (writestest.Check).
func (s *shop) check() {
	s.t.Helper()
	bad, err := writestest.Check(s.t.Context(), s.st, s.pay, s.stocked)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, b := range bad {
		s.t.Error(b)
	}
}

func allOrders(ctx context.Context, st store.Store) ([]domain.Order, error) {
	page, err := st.Container(store.OrdersContainer).Query(ctx, store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}}, Limit: store.MaxQueryPageSize})
	if err != nil {
		return nil, err
	}
	var out []domain.Order
	for _, it := range page.Items {
		o, err := repo.Decode[domain.Order](it)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func checkout(user, key, method string) writes.CheckoutRequest {
	r := req
	r.UserID, r.Key, r.PaymentMethod = user, key, method
	return r
}

// TestAnOrderThroughItsLife: placed with an authorization, shipping
// captures, cancelling a shipped order refunds and a placed one voids,
// and each cancel gives its units back once.
func TestAnOrderThroughItsLife(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 10})
	w := s.writes(s.st)
	ctx := t.Context()
	var orders []domain.Order
	for _, u := range []string{"u1", "u2"} {
		s.fill(u, 2, "p1")
		o, err := w.Checkout(ctx, checkout(u, "k-"+u, "pm_card_visa"))
		if err != nil || o.Status != domain.StatusPlaced {
			t.Fatalf("checkout of %s: %v %s", u, err, o.Status)
		}
		if ps := s.pay.ByOrder(o.ID); len(ps) != 1 || ps[0].Status != payments.Authorized || ps[0].AmountCents != o.TotalCents {
			t.Fatalf("payments of %s = %+v, want one authorization of %d", o.ID, ps, o.TotalCents)
		}
		orders = append(orders, o)
	}
	if c, _ := s.repos.Carts.Get(ctx, "u1"); len(c.Items) != 0 || c.Pending != nil {
		t.Errorf("u1's cart after the checkout = %+v, want empty and unmarked", c)
	}
	steps := []struct {
		order int
		to    string
		pay   string
	}{
		{0, domain.StatusShipped, payments.Captured},
		{0, domain.StatusCancelled, payments.Refunded},
		{1, domain.StatusCancelled, payments.Voided},
	}
	for _, st := range steps {
		o := orders[st.order]
		got, err := w.SetOrderStatus(ctx, o.UserID, o.ID, "", st.to)
		if err != nil || got.Status != st.to {
			t.Fatalf("%s → %s: %v %s", o.ID, st.to, err, got.Status)
		}
		if ps := s.pay.ByOrder(o.ID); len(ps) != 1 || ps[0].Status != st.pay {
			t.Errorf("after %s, the payment of %s = %+v, want %s", st.to, o.ID, ps, st.pay)
		}
	}
	if stock, _ := s.repos.Inventory.Stock(ctx, "p1", ""); stock.Available != 10 {
		t.Errorf("available after both orders were cancelled = %d, want 10", stock.Available)
	}
	s.settle(false)
	s.check()
}

// TestADeclinedCardIsRejectedWithItsReason: the order ends rejected with
// the provider's reason, the refusal is EDECLINED with its code, the
// units go back, and the key is free again.
func TestADeclinedCardIsRejectedWithItsReason(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 3})
	w := s.writes(s.st)
	s.fill("u1", 2, "p1")
	o, err := w.Checkout(t.Context(), checkout("u1", "k1", "pm_card_chargeDeclinedInsufficientFunds"))
	if got, want := domain.ErrorCode(err), domain.EDECLINED; got != want {
		t.Fatalf("code = %q (%v), want %q", got, err, want)
	}
	if de, _ := err.(*domain.Error); de == nil || de.DeclineCode != "insufficient_funds" {
		t.Errorf("decline code of %v, want insufficient_funds", err)
	}
	if o.Status != domain.StatusRejected || o.PaymentStatus() != "declined" {
		t.Errorf("order = %s, payment %q; want rejected, declined", o.Status, o.PaymentStatus())
	}
	if stock, _ := s.repos.Inventory.Stock(t.Context(), "p1", ""); stock.Available != 3 {
		t.Errorf("available after the decline = %d, want 3", stock.Available)
	}
	c, _ := s.repos.Carts.Get(t.Context(), "u1")
	if len(c.Items) != 1 || c.Pending != nil {
		t.Errorf("cart after the decline = %+v, want its line back and no marker", c)
	}
	// The same key with a good card: the key is free, a new order.
	o2, err := w.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
	if err != nil || o2.Status != domain.StatusPlaced || o2.ID == o.ID {
		t.Fatalf("the key again with another card: %v %s %s", err, o2.Status, o2.ID)
	}
	s.settle(false)
	s.check()
}

// dying is a store that dies after a number of writes: every call from
// then on fails, as if the process had been killed there.
type dying struct {
	store.Store
	left atomic.Int64
}

func (d *dying) Container(name string) store.Container {
	return dyingContainer{d.Store.Container(name), d}
}

type dyingContainer struct {
	store.Container
	d *dying
}

var errDead = domain.Errorf(domain.EUNAVAILABLE, "the process died")

func (c dyingContainer) alive() bool { return c.d.left.Load() > 0 }

// write spends one write of the budget, and reports whether it may run.
func (c dyingContainer) write() bool { return c.d.left.Add(-1) >= 0 }

func (c dyingContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	if !c.alive() {
		return store.ItemResponse{}, errDead
	}
	return c.Container.Read(ctx, pk, id)
}

func (c dyingContainer) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	if !c.alive() {
		return store.QueryPage{}, errDead
	}
	return c.Container.Query(ctx, q)
}

func (c dyingContainer) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	if !c.write() {
		return store.ItemResponse{}, errDead
	}
	return c.Container.Create(ctx, pk, item)
}

func (c dyingContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	if !c.write() {
		return store.ItemResponse{}, errDead
	}
	return c.Container.Replace(ctx, pk, id, item, opts)
}

func (c dyingContainer) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	if !c.write() {
		return store.ItemResponse{}, errDead
	}
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

func (c dyingContainer) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	if !c.write() {
		return store.BatchResponse{}, errDead
	}
	return c.Container.ExecuteBatch(ctx, pk, ops)
}

// TestACheckoutThatDiesAnywhereIsCarriedOnOrUndone: the checkout's
// process dies after its first, second, … write, or with its
// authorization answered or lost on the way; then the sweeper carries the
// order on and the orders feed carries its effects out. Whatever the
// point, the shop at rest keeps every invariant, the cart paid at most
// once, and an order that was opened is placed (nothing refused it).
func TestACheckoutThatDiesAnywhereIsCarriedOnOrUndone(t *testing.T) {
	for writesLeft := int64(0); writesLeft <= 12; writesLeft++ {
		for _, lost := range []bool{false, true} {
			t.Run(fmt.Sprintf("after %d writes, authorization lost %v", writesLeft, lost), func(t *testing.T) {
				s := newShop(t, map[string]int64{"p1": 5, "p2": 5, "p3": 5})
				s.fill("u1", 1, "p1", "p2", "p3")
				d := &dying{Store: s.st}
				d.left.Store(writesLeft)
				if lost {
					s.pay.InjectFaults(func(op, key string) payembedded.Fault {
						if op == payments.StepAuthorize {
							return payembedded.LostAnswer
						}
						return payembedded.NoFault
					})
				}
				dead := s.writes(d)
				writes.SetBound(dead, 100*time.Millisecond)
				_, _ = dead.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
				s.pay.InjectFaults(nil)
				s.settle(false)
				s.check()
				orders, _ := allOrders(t.Context(), s.st)
				for _, o := range orders {
					if o.Status != domain.StatusPlaced {
						t.Errorf("order %s is %s, want placed: nothing refused it", o.ID, o.Status)
					}
				}
				if len(orders) > 1 {
					t.Errorf("%d orders of one cart", len(orders))
				}
				c, _ := s.repos.Carts.Get(t.Context(), "u1")
				if len(orders) == 1 && len(c.Items) != 0 || len(orders) == 0 && len(c.Items) != 3 {
					t.Errorf("%d orders, cart %+v: the cart must hold what was not ordered", len(orders), c.Items)
				}
			})
		}
	}
}

// TestAnExpiredOrderVoidsALateAuthorization: the sweeper expires an
// order whose checkout reached reserved and went quiet; the checkout's
// authorization then arrives after all. The expiry authorizes again by
// the same key and voids what it gets, so the late call finds its
// payment voided, and the order stays expired with nothing live.
func TestAnExpiredOrderVoidsALateAuthorization(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 5})
	s.fill("u1", 2, "p1")
	// The checkout dies just after its reserve move: claim, open, take,
	// reserve are its first four writes.
	d := &dying{Store: s.st}
	d.left.Store(4)
	dead := s.writes(d)
	writes.SetBound(dead, 100*time.Millisecond)
	_, _ = dead.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
	orders, _ := allOrders(t.Context(), s.st)
	if len(orders) != 1 || orders[0].Status != domain.StatusReserved {
		t.Fatalf("after the checkout died: %+v, want one reserved order", orders)
	}
	reserved := orders[0]
	s.settle(true) // expires it
	late, err := s.writes(s.st).Advance(t.Context(), reserved)
	if err != nil || late.Status != domain.StatusExpired {
		t.Errorf("the late checkout's advance = %s, %v; want expired", late.Status, err)
	}
	s.check()
	if stock, _ := s.repos.Inventory.Stock(t.Context(), "p1", ""); stock.Available != 5 {
		t.Errorf("available = %d, want 5", stock.Available)
	}
}

// TestTwoWorkersOnOneOrderPayOnce: the checkout and a sweeper advance the
// same pending order at once; it is placed once, with one payment, and
// counted once in the customer's summary.
func TestTwoWorkersOnOneOrderPayOnce(t *testing.T) {
	for range 20 {
		s := newShop(t, map[string]int64{"p1": 5, "p2": 5})
		s.fill("u1", 1, "p1", "p2")
		d := &dying{Store: s.st}
		d.left.Store(2) // claim and open: the order is pending
		dead := s.writes(d)
		writes.SetBound(dead, 50*time.Millisecond)
		_, _ = dead.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
		orders, _ := allOrders(t.Context(), s.st)
		if len(orders) != 1 {
			t.Fatalf("%d orders", len(orders))
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := s.writes(s.st).Advance(t.Context(), orders[0]); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		s.settle(false)
		s.check()
		if sum, _ := s.repos.Orders.Summary(t.Context(), "u1"); sum.TotalOrders != 1 {
			t.Errorf("summary counts %d orders, want 1", sum.TotalOrders)
		}
	}
}

// TestACancelRacingAShipment: the admin ships while the owner cancels;
// one of them moves the order, and at rest the money matches the state
// the order is in (captured, or voided; never a capture of a cancelled
// order left unrefunded).
func TestACancelRacingAShipment(t *testing.T) {
	for i := range 20 {
		s := newShop(t, map[string]int64{"p1": 5})
		s.fill("u1", 1, "p1")
		o, err := s.writes(s.st).Checkout(t.Context(), checkout("u1", fmt.Sprint("k", i), "pm_card_visa"))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, to := range []string{domain.StatusShipped, domain.StatusCancelled} {
			wg.Go(func() { _, _ = s.writes(s.st).SetOrderStatus(t.Context(), "u1", o.ID, "", to) })
		}
		wg.Wait()
		s.settle(false)
		s.check()
	}
}

// TestAnUnknownPaymentMethodIsDeclinedInWords: a token the provider does
// not know is a decline that says so, not an internal error's text, and
// the token shows nowhere: not in the answer, not on the order.
func TestAnUnknownPaymentMethodIsDeclinedInWords(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 3})
	s.fill("u1", 1, "p1")
	o, err := s.writes(s.st).Checkout(t.Context(), checkout("u1", "k1", "pm_card_unknown"))
	de, _ := err.(*domain.Error)
	if de == nil || de.Code != domain.EDECLINED || de.DeclineCode != "invalid_payment_method" || strings.Contains(de.Message, "internal") {
		t.Fatalf("checkout with an unknown token = %#v, want EDECLINED invalid_payment_method in words", err)
	}
	if strings.Contains(de.Message, "pm_card_unknown") || o.Rejection == nil || strings.Contains(o.Rejection.Message, "pm_card_unknown") {
		t.Errorf("the token shows: answer %q, rejection %+v", de.Message, o.Rejection)
	}
	t.Log(de.Message)
}
