package feedworkers_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"shop/domain"
	"shop/feedworkers"
	"shop/feedworkers/changefeed"
	"shop/store"
)

func stockOf(t *testing.T, repos *store.Repos, productID string) int64 {
	t.Helper()
	s, err := repos.Inventory.Stock(t.Context(), productID)
	if err != nil {
		t.Fatal(err)
	}
	return s.Available
}

func reservationOf(t *testing.T, st store.Store, productID, orderID string) domain.Reservation {
	t.Helper()
	r, err := store.ReadDoc[domain.Reservation](t.Context(), st.Container(store.InventoryContainer), productID, domain.ReservationID(orderID))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReaperReturnsADeadCheckoutsUnitsWithinHoldPlusEvery: a checkout
// took 3 units (its reservation held) and died before its order. The
// running workers' reaper leaves the units alone while the hold lasts
// (the checkout may still be running), then calls the checkout off (its
// order id voided, so it can never commit late) and returns the units
// once, within Hold + Every of the take. A reservation whose order stands
// is committed, its units kept.
func TestReaperReturnsADeadCheckoutsUnitsWithinHoldPlusEvery(t *testing.T) {
	st := openStore(t)
	repos := store.NewRepos(st)
	reaper := feedworkers.Reaper{Every: 50 * time.Millisecond, Hold: 300 * time.Millisecond}
	if _, err := repos.Inventory.SetStock(t.Context(), "lamp", 10, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	// The order that stands: its cart, its reservation and its batch.
	lamp := createProduct(t, repos, "lamp", "home", 1000)
	addToCart(t, repos, "bob", lamp, 2)
	placed := placeOrder(t, repos, "bob", "o-bob")
	took := time.Now()
	if err := repos.Inventory.Reserve(t.Context(), domain.NewReservation("lamp", "o-bob", "bob", 2, took)); err != nil {
		t.Fatal(err)
	}
	// The dead checkout: units taken, no order ever.
	if err := repos.Inventory.Reserve(t.Context(), domain.NewReservation("lamp", "o-dead", "ann", 3, took)); err != nil {
		t.Fatal(err)
	}
	if got := stockOf(t, repos, "lamp"); got != 5 {
		t.Fatalf("stock after the takes = %d, want 5", got)
	}
	wk, err := feedworkers.Start(t.Context(), st, feedworkers.Config{
		Processor: changefeed.Config{Instance: "reaper-test", PollEvery: 10 * time.Millisecond, Backoff: time.Millisecond},
		Reaper:    reaper,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wk.Stop(t.Context()) })

	// Within the hold nothing comes back.
	time.Sleep(reaper.Hold/2 - time.Since(took))
	if got := stockOf(t, repos, "lamp"); got != 5 {
		t.Errorf("stock within the hold = %d, want 5: a checkout still running keeps its units", got)
	}
	var back time.Duration
	for deadline := took.Add(reaper.Hold + reaper.Every + time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if stockOf(t, repos, "lamp") == 8 {
			back = time.Since(took)
			break
		}
	}
	// A pass takes a few milliseconds on top of the bound.
	if limit := reaper.Hold + reaper.Every + 100*time.Millisecond; back == 0 || back > limit {
		t.Fatalf("the dead checkout's units came back after %v (0: not within 1 s more), want within %v", back, limit)
	}
	if r := reservationOf(t, st, "lamp", "o-dead"); r.State != domain.ReservationReleased {
		t.Errorf("dead checkout's reservation %s, want released", r.State)
	}
	if _, voided, err := repos.Orders.Lookup(t.Context(), "ann", "o-dead"); err != nil || !voided {
		t.Errorf("dead checkout's order id: voided %v, %v; want voided, so its batch can never commit", voided, err)
	}
	if r := reservationOf(t, st, "lamp", placed.ID); r.State != domain.ReservationCommitted {
		t.Errorf("placed order's reservation %s, want committed", r.State)
	}
	// More passes change nothing: each unit came back once.
	time.Sleep(3 * reaper.Every)
	if got := stockOf(t, repos, "lamp"); got != 8 {
		t.Errorf("stock after more passes = %d, want 8", got)
	}
	t.Logf("units back %v after the take (hold %v, every %v)", back.Round(time.Millisecond), reaper.Hold, reaper.Every)
}

// TestOrdersFeedReplayReleasesACancelledOrderOnce: the orders feed
// delivers a cancelled order whose cancel did not return its units (the
// release failed); the batch is then delivered again (a retry after a
// failed checkpoint, or two instances after a lease moved), and twice at
// once. The units come back exactly once.
func TestOrdersFeedReplayReleasesACancelledOrderOnce(t *testing.T) {
	st := newStore(t)
	repos := store.NewRepos(st)
	h := feedworkers.NewHandlers(st, feedworkers.HandlersConfig{})
	if _, err := repos.Inventory.SetStock(t.Context(), "lamp", 10, "", now); err != nil {
		t.Fatal(err)
	}
	lamp := createProduct(t, repos, "lamp", "home", 1000)
	addToCart(t, repos, "ann", lamp, 4)
	o := placeOrder(t, repos, "ann", "o-ann")
	if err := repos.Inventory.Reserve(t.Context(), domain.NewReservation("lamp", o.ID, "ann", 4, now)); err != nil {
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
