package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// TestAnIdleDispatcherLooksLessOften: with nothing to send, each look
// that finds nothing doubles the wait up to IdlePoll, so an idle shop
// does not spend a query of the subscriptions every PollEvery; a
// delivery the relay writes wakes it at once (Notify).
func TestAnIdleDispatcherLooksLessOften(t *testing.T) {
	st := newStore(t)
	ctx, meter := store.WithMeter(t.Context())
	r := repo.NewWebhooks(store.Metered(st))
	const every, idle = 5 * time.Millisecond, 80 * time.Millisecond
	d := webhooks.NewDispatcher(r, webhooks.DispatcherConfig{PollEvery: every, IdlePoll: idle})
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Stop(t.Context())
	const span = 800 * time.Millisecond
	time.Sleep(span)
	ops, _, _ := meter.Totals()
	// Every PollEvery would be span/every = 160 looks; backing off to
	// IdlePoll, about span/idle + the doublings before = 15.
	if atMost := int(span/every) / 3; ops > atMost {
		t.Errorf("%d looks in %s while idle, want at most %d: the dispatcher does not back off", ops, span, atMost)
	}
	if ops == 0 {
		t.Fatal("the dispatcher never looked")
	}
}

// TestTheRelayWakesTheDispatcher: a shop whose dispatcher idles at a long
// wait still sends a new event's delivery at once.
func TestTheRelayWakesTheDispatcher(t *testing.T) {
	rc := newReceiver(t, func(client.WebhookEvent, int) int { return http.StatusOK })
	st := newStore(t)
	r := repo.NewWebhooks(st)
	c := newClock()
	sub := subscribe(t, r, rc, c.Now())
	svc, err := webhooks.Start(t.Context(), st, webhooks.Config{
		Processor: changefeedConfig(),
		// An idle wait far longer than the test: only Notify can
		// explain a delivery within it.
		Dispatcher: webhooks.DispatcherConfig{PollEvery: time.Hour, IdlePoll: time.Hour, Policy: webhooks.Policy{AllowPrivate: true, AllowInsecure: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Stop(t.Context())
	writeOrderEvent(t, st, "u-1", "o-1", 1, time.Now())
	deadline := time.Now().Add(time.Minute) // a hang guard, not a measure
	for len(rc.received()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing delivered to %s: the relay did not wake the dispatcher", sub.ID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func changefeedConfig() changefeed.Config {
	return changefeed.Config{Instance: "t", PollEvery: 10 * time.Millisecond}
}

// writeOrderEvent writes the seq-th event of order orderID as its move's
// batch would.
func writeOrderEvent(t testing.TB, st store.Store, userID, orderID string, seq int, at time.Time) {
	t.Helper()
	ev := orderEvent(userID, orderID, seq, at)
	if _, err := repo.CreateDoc(t.Context(), st.Container(store.OrdersContainer), userID, ev); err != nil {
		t.Fatal(err)
	}
}
