package feedworkers_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

func stockOf(t *testing.T, repos *repo.Set, productID string) int64 {
	t.Helper()
	s, err := repos.Inventory.Stock(t.Context(), productID, "")
	if err != nil {
		t.Fatal(err)
	}
	return s.Available
}

func reservationOf(t *testing.T, st store.Store, productID, orderID string) domain.Reservation {
	t.Helper()
	r, err := repo.ReadDoc[domain.Reservation](t.Context(), st.Container(store.InventoryContainer), productID, domain.ReservationID(orderID, ""))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSweeperCarriesOnADeadCheckout: two checkouts died after taking
// their units: one a moment ago, one before the expiry. The running
// workers' sweeper leaves the young one alone while the stall lasts (its
// checkout may still be running), then carries it on to placed, within
// Stall + Every; the old one it expires, its units back once.
func TestSweeperCarriesOnADeadCheckout(t *testing.T) {
	st := openStore(t)
	repos := repo.New(st, 0)
	pay := paymentstest.Embedded(t)
	sweeper := feedworkers.Sweeper{Every: 50 * time.Millisecond, Stall: 300 * time.Millisecond, Expiry: time.Hour}
	if _, err := repos.Inventory.SetStock(t.Context(), "lamp", "", 10, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	lamp := createProduct(t, repos, "lamp", "home", 1000)
	dead := func(user string, at time.Time, n int) domain.Order {
		addToCart(t, repos, user, lamp, n)
		c, err := repos.Carts.Update(t.Context(), user, "", func(c *domain.Cart) error { c.MarkPending("o-"+user, at); return nil })
		if err != nil {
			t.Fatal(err)
		}
		o, err := domain.NewOrder("o-"+user, c, domain.Customer{Name: user}, domain.Address{Name: user, Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"}, "k-"+user, at)
		if err != nil {
			t.Fatal(err)
		}
		o.PaymentMethod = "pm_card_visa"
		o.Payment = &domain.OrderPayment{AmountCents: o.TotalCents, Currency: "usd"}
		if o, err = repos.Orders.Open(t.Context(), o, domain.Idempotency{Key: "k-" + user, RequestHash: "h", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if err := repos.Inventory.Reserve(t.Context(), domain.NewReservation("lamp", "", o.ID, user, int64(n), at), 0); err != nil {
			t.Fatal(err)
		}
		return o
	}
	took := time.Now()
	young := dead("bob", took, 2)
	old := dead("ann", took.Add(-2*time.Hour), 3)
	wk, err := feedworkers.Start(t.Context(), st, writes.New(repo.New(store.Metered(st), 0), pay, nil), feedworkers.Config{
		Processor: changefeed.Config{Instance: "sweeper-test", PollEvery: 10 * time.Millisecond, Backoff: time.Millisecond},
		Sweeper:   sweeper})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wk.Stop(t.Context()) })

	// Within the stall the young one is left to its checkout.
	time.Sleep(sweeper.Stall/2 - time.Since(took))
	if o, _ := repos.Orders.Get(t.Context(), "bob", young.ID); o.Status != domain.StatusPending {
		t.Errorf("the young order within the stall is %s, want still pending: its checkout may be running", o.Status)
	}
	var placed time.Duration
	for deadline := took.Add(sweeper.Stall + sweeper.Every + time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if o, _ := repos.Orders.Get(t.Context(), "bob", young.ID); o.Status == domain.StatusPlaced {
			placed = time.Since(took)
			break
		}
	}
	// A pass takes a few milliseconds on top of the bound.
	if limit := sweeper.Stall + sweeper.Every + 100*time.Millisecond; placed == 0 || placed > limit {
		t.Fatalf("the young order was placed after %v (0: not within 1 s more), want within %v", placed, limit)
	}
	t.Logf("the young order placed %v after its checkout took its units (stall %v, every %v)", placed.Round(time.Millisecond), sweeper.Stall, sweeper.Every)
	if o, _ := repos.Orders.Get(t.Context(), "ann", old.ID); o.Status != domain.StatusExpired {
		t.Errorf("the old order is %s, want expired", o.Status)
	}
	// The feed carries the effects out: the young order's units sold,
	// the old one's back.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) && stockOf(t, repos, "lamp") != 8; time.Sleep(5 * time.Millisecond) {
	}
	if got := stockOf(t, repos, "lamp"); got != 8 {
		t.Errorf("stock = %d, want 8: 2 sold, 3 back", got)
	}
	// More passes change nothing: each unit came back once.
	time.Sleep(3 * sweeper.Every)
	if got := stockOf(t, repos, "lamp"); got != 8 {
		t.Errorf("stock after more passes = %d, want 8", got)
	}
	if ps := pay.ByOrder(young.ID); len(ps) != 1 || ps[0].Status != "authorized" {
		t.Errorf("the young order's payments = %+v, want one authorization", ps)
	}
}

// TestOrdersFeedReplayReleasesACancelledOrderOnce: the orders feed
// delivers a cancelled order whose cancel did not return its units (the
// release failed); the batch is then delivered again (a retry after a
// failed checkpoint, or two instances after a lease moved), and twice at
// once. The units come back exactly once.
func TestOrdersFeedReplayReleasesACancelledOrderOnce(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	if _, err := repos.Inventory.SetStock(t.Context(), "lamp", "", 10, "", now); err != nil {
		t.Fatal(err)
	}
	lamp := createProduct(t, repos, "lamp", "home", 1000)
	addToCart(t, repos, "ann", lamp, 4)
	o := placeOrder(t, repos, "ann", "o-ann")
	if err := repos.Inventory.Reserve(t.Context(), domain.NewReservation("lamp", "", o.ID, "ann", 4, now), 0); err != nil {
		t.Fatal(err)
	}
	batch := func(o domain.Order) changefeed.Batch {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return changefeed.Batch{Items: [][]byte{b}}
	}
	// Delivered placed first: committed, units kept.
	if err := h.Orders(t.Context(), batch(o)); err != nil {
		t.Fatal(err)
	}
	if got := stockOf(t, repos, "lamp"); got != 6 {
		t.Fatalf("stock after the placed order's delivery = %d, want 6", got)
	}
	// Cancelled without the cancel's own release.
	cancelled, err := repos.Orders.SetStatus(t.Context(), "ann", o.ID, "", domain.StatusCancelled, now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := h.Orders(t.Context(), batch(cancelled)); err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
		if got := stockOf(t, repos, "lamp"); got != 10 {
			t.Fatalf("stock after delivery %d of the cancelled order = %d, want 10", i+1, got)
		}
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if err := h.Orders(t.Context(), batch(cancelled)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A late delivery of the order as placed does not take them again.
	if err := h.Orders(t.Context(), batch(o)); err != nil {
		t.Fatal(err)
	}
	if got := stockOf(t, repos, "lamp"); got != 10 {
		t.Errorf("stock after concurrent and late deliveries = %d, want 10", got)
	}
	if r := reservationOf(t, st, "lamp", o.ID); r.State != domain.ReservationReleased {
		t.Errorf("reservation %s, want released", r.State)
	}
}
