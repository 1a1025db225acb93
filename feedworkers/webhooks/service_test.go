package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// Two dispatchers on one store, a flaky receiver and one that always
// fails: after quiescence every event reached the flaky one at least
// once, in order per subject, and the dead-letter list of the other holds
// exactly its deliveries.
func TestTwoDispatchersAndDeadLetters(t *testing.T) {
	flaky := newReceiver(t, func(e client.WebhookEvent, attempt int) int {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s/%d", e.ID, attempt)
		if h.Sum32()%3 == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	broken := newReceiver(t, func(client.WebhookEvent, int) int { return http.StatusInternalServerError })
	st := newStore(t)
	r := repo.NewWebhooks(st)
	c := newClock()
	good, bad := subscribe(t, r, flaky, c.Now()), subscribe(t, r, broken, c.Now())
	relay := webhooks.NewRelay(r, c.Now, 0)
	events := map[string][]int64{}
	var evs []domain.Event
	for seq := 1; seq <= 6; seq++ {
		for o := range 4 {
			id := fmt.Sprintf("o-%d", o)
			evs = append(evs, orderEvent("u-"+id, id, seq, c.Now()))
			events[id] = append(events[id], int64(seq))
		}
	}
	// A product's events come from its version: a price set after
	// creation and a stock status taken from a later stock version.
	product := domain.Product{Meta: domain.Meta{ID: "p-1", Type: domain.TypeProduct}, PriceCents: 90, PriceVersion: 2, Version: 3, LastUpdated: c.Now(),
		Availability: domain.Availability{Status: domain.LowInStock, SourceVersion: 2}}
	pevs := domain.ProductEventsOf(product)
	if len(pevs) != 2 {
		t.Fatalf("the product version names %d events, want 2", len(pevs))
	}
	for _, ev := range pevs {
		events["p-1"] = append(events["p-1"], ev.Sequence)
	}
	feed := batch(t, evs...)
	doc, err := json.Marshal(product)
	if err != nil {
		t.Fatal(err)
	}
	feed.Items = append(feed.Items, doc, doc) // and a replay of it
	evs = append(evs, pevs...)
	if err := relay.Handle(t.Context(), feed); err != nil {
		t.Fatal(err)
	}
	a := webhooks.NewDispatcher(r, dispatcherConfig(c, "a"))
	b := webhooks.NewDispatcher(r, dispatcherConfig(c, "b"))
	settle(t, r, c, 3*time.Second, 500, []string{good.ID, bad.ID}, a, b)

	log := flaky.received()
	checkOrder(t, log, events, nil)
	if ds := deliveries(t, r, good.ID, domain.DeliveryDelivered); len(ds) != len(evs) {
		t.Errorf("%d delivered to the flaky receiver, want %d", len(ds), len(evs))
	}
	got := map[string]bool{}
	for _, rq := range log {
		if rq.Status < 300 {
			got[rq.Event.ID] = true
		}
	}
	if len(got) != len(evs) {
		t.Errorf("the flaky receiver acknowledged %d events, want %d", len(got), len(evs))
	}
	if ds := deliveries(t, r, good.ID, domain.DeliveryDead); len(ds) != 0 {
		t.Errorf("dead deliveries to the flaky receiver: %d", len(ds))
	}
	dead := deliveries(t, r, bad.ID, domain.DeliveryDead)
	if len(dead) != len(evs) || len(deliveries(t, r, bad.ID, "")) != len(evs) {
		t.Errorf("%d dead of %d for the broken receiver", len(dead), len(evs))
	}
	deadIDs := map[string]bool{}
	for _, d := range dead {
		deadIDs[d.EventID] = true
		// Tried at least once: one that waited behind its subject's earlier
		// deliveries past the horizon dies at its first failure.
		if d.Attempts < 1 || d.LastStatus != http.StatusInternalServerError || d.TTL == nil || *d.TTL != int(repo.DeadTTL/time.Second) {
			t.Errorf("dead delivery %s: attempts %d, last status %d, ttl %v", d.ID, d.Attempts, d.LastStatus, d.TTL)
		}
	}
	checkOrder(t, broken.received(), events, deadIDs)

	// Redelivered, a dead one is sent again (and dies again).
	if _, err := r.Redeliver(t.Context(), bad.ID, dead[0].ID, c.Now()); err != nil {
		t.Fatal(err)
	}
	n := len(broken.received())
	settle(t, r, c, 3*time.Second, 500, []string{bad.ID}, a)
	if len(broken.received()) <= n {
		t.Error("the redelivered delivery was not sent")
	}
}

// A dispatcher that does not allow private addresses never reaches a
// receiver on loopback: each attempt fails at the dial.
func TestDispatcherRefusesLoopbackByDefault(t *testing.T) {
	rc := newReceiver(t, nil)
	r, _, d, sub := one(t, rc, func(dc *webhooks.DispatcherConfig) { dc.Policy = webhooks.Policy{AllowInsecure: true} })
	if err := d.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	ds := deliveries(t, r, sub.ID, "")
	if len(ds) != 1 || ds[0].Attempts != 1 || !strings.Contains(ds[0].LastError, "not allowed") || len(rc.received()) != 0 {
		t.Fatalf("%+v, received %d", ds, len(rc.received()))
	}
	_, _, d, sub = one(t, rc, func(dc *webhooks.DispatcherConfig) { dc.Policy = webhooks.Policy{AllowPrivate: true} })
	if err := d.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if len(rc.received()) != 0 {
		t.Fatal("an http:// URL was called without AllowInsecure")
	}
}

// Start runs the relay on the change feeds and the dispatcher: events
// written into orders and products reach the receiver, signed.
func TestStartEndToEnd(t *testing.T) {
	rc := newReceiver(t, nil)
	st := newStore(t)
	r := repo.NewWebhooks(st)
	sub := subscribe(t, r, rc, time.Now())
	// Paused and a type-filtered subscriptions get nothing of what they
	// do not want.
	paused, _, _ := r.Create(t.Context(), domain.Subscription{URL: rc.srv.URL, EventTypes: domain.EventTypes, Paused: true}, time.Now().Add(-time.Hour))
	priceOnly, _, _ := r.Create(t.Context(), domain.Subscription{URL: rc.srv.URL, EventTypes: []string{domain.EventProductPriceChanged}, Paused: true}, time.Now().Add(-time.Hour))

	ctx := t.Context()
	svc, err := webhooks.Start(ctx, st, webhooks.Config{
		Processor:  changefeed.Config{Instance: "t", PollEvery: 10 * time.Millisecond},
		Dispatcher: webhooks.DispatcherConfig{PollEvery: 10 * time.Millisecond, Policy: webhooks.Policy{AllowPrivate: true, AllowInsecure: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Stop(sctx); err != nil {
			t.Error(err)
		}
	}()
	now := time.Now()
	want := map[string]bool{}
	for seq := 1; seq <= 3; seq++ {
		ev := orderEvent("u-1", "o-1", seq, now)
		if _, err := repo.CreateDoc(ctx, st.Container(store.OrdersContainer), "u-1", ev); err != nil {
			t.Fatal(err)
		}
		want[ev.ID] = true
	}
	// A product whose price changed after creation: the relay derives
	// its event from the version the products feed hands over.
	product := domain.Product{Meta: domain.Meta{ID: "p-1", Type: domain.TypeProduct, SchemaVersion: domain.SchemaVersion}, Name: "Lamp", PriceCents: 90, PriceVersion: 2, Version: 2, LastUpdated: now}
	if _, err := repo.CreateDoc(ctx, st.Container(store.ProductsContainer), product.ID, product); err != nil {
		t.Fatal(err)
	}
	for _, ev := range domain.ProductEventsOf(product) {
		want[ev.ID] = true
	}
	// Wait for the deliveries (a hang guard, not a measure: the test
	// fails only if nothing arrives in a minute).
	deadline := time.Now().Add(time.Minute)
	for len(deliveries(t, r, sub.ID, domain.DeliveryDelivered)) < len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d of %d", len(deliveries(t, r, sub.ID, domain.DeliveryDelivered)), len(want))
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := map[string]bool{}
	for _, rq := range rc.received() {
		got[rq.Event.ID] = true
	}
	for id := range want {
		if !got[id] {
			t.Errorf("%s not received", id)
		}
	}
	checkOrder(t, rc.received(), map[string][]int64{"o-1": {1, 2, 3}}, nil)
	if n := len(deliveries(t, r, paused.ID, "")); n != 0 {
		t.Errorf("%d deliveries for a paused subscription", n)
	}
	if n := len(deliveries(t, r, priceOnly.ID, "")); n != 0 {
		t.Errorf("%d deliveries for a paused price-only subscription", n)
	}
}
