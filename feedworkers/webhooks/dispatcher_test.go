package webhooks_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store/repo"
)

// one relays one event for one subscription to rc and returns what is
// needed to dispatch it.
func one(t *testing.T, rc *receiver, cfg func(*webhooks.DispatcherConfig)) (*repo.Webhooks, *clock, *webhooks.Dispatcher, domain.Subscription) {
	t.Helper()
	r := repo.NewWebhooks(newStore(t))
	c := newClock()
	sub := subscribe(t, r, rc, c.Now())
	if err := webhooks.NewRelay(r, c.Now, 0).Handle(t.Context(), batch(t, orderEvent("u-1", "o-1", 2, c.Now()))); err != nil {
		t.Fatal(err)
	}
	dc := dispatcherConfig(c, "a")
	if cfg != nil {
		cfg(&dc)
	}
	return r, c, webhooks.NewDispatcher(r, dc), sub
}

func TestFailsThenSucceeds(t *testing.T) {
	rc := newReceiver(t, func(e client.WebhookEvent, attempt int) int {
		if attempt == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	r, c, d, sub := one(t, rc, nil)
	settle(t, r, c, 2*time.Second, 20, []string{sub.ID}, d)
	log := rc.received()
	if len(log) != 2 || log[0].Attempt != 1 || log[1].Attempt != 2 || log[1].Event.Order == nil || log[1].Event.Order.ID != "o-1" {
		t.Fatalf("received %+v", log)
	}
	ds := deliveries(t, r, sub.ID, "")
	if len(ds) != 1 || ds[0].Status != domain.DeliveryDelivered || ds[0].Attempts != 2 || ds[0].LastStatus != http.StatusNoContent || ds[0].DeliveredAt == nil {
		t.Fatalf("delivery %+v", ds)
	}
}

// A receiver that does not answer within the timeout is a failed attempt
// (status 0); once it answers in time, and a slow answer within the
// timeout, is delivered.
func TestTimeoutThenSlow(t *testing.T) {
	var hang atomic.Bool
	hang.Store(true)
	rc := newReceiver(t, func(e client.WebhookEvent, attempt int) int { return http.StatusOK })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the server's Close
	inner := rc.srv.Config.Handler
	rc.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if hang.Load() {
			io.Copy(io.Discard, req.Body) // so the server notices the client leave
			select {                      // until the dispatcher gives up (or the test ends)
			case <-req.Context().Done():
			case <-release:
			}
			return
		}
		time.Sleep(20 * time.Millisecond) // slow, well within the timeout
		inner.ServeHTTP(w, req)
	})
	r, c, d, sub := one(t, rc, func(dc *webhooks.DispatcherConfig) { dc.Timeout = 100 * time.Millisecond })
	if err := d.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	ds := deliveries(t, r, sub.ID, "")
	if len(ds) != 1 || ds[0].Status != domain.DeliveryPending || ds[0].Attempts != 1 || ds[0].LastStatus != 0 || !strings.Contains(ds[0].LastError, "timeout") {
		t.Fatalf("after a timeout: %+v", ds)
	}
	if strings.Contains(ds[0].LastError, rc.srv.URL) {
		t.Errorf("LastError names the URL: %q", ds[0].LastError)
	}
	hang.Store(false)
	settle(t, r, c, 2*time.Second, 20, []string{sub.ID}, d)
	if ds := deliveries(t, r, sub.ID, domain.DeliveryDelivered); len(ds) != 1 || ds[0].Attempts != 2 {
		t.Fatalf("after the slow answer: %+v", ds)
	}
}

// A receiver that goes away (connection refused) and comes back on the
// same port gets the delivery.
func TestReceiverRestarted(t *testing.T) {
	rc := newReceiver(t, nil)
	r, c, d, sub := one(t, rc, nil)
	addr := rc.srv.Listener.Addr().String()
	rc.srv.Close()
	if err := d.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	ds := deliveries(t, r, sub.ID, "")
	if len(ds) != 1 || ds[0].Attempts != 1 || ds[0].Status != domain.DeliveryPending || ds[0].LastError == "" {
		t.Fatalf("while down: %+v", ds)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	settle(t, r, c, 2*time.Second, 20, []string{sub.ID}, d)
	if log := rc.received(); len(log) != 1 || log[0].Attempt != 2 {
		t.Fatalf("received %+v", log)
	}
}

// Per subject, order holds through failures: an event that keeps failing
// holds back its subject's later events, not another subject's.
func TestOrderPerSubjectThroughFailures(t *testing.T) {
	rc := newReceiver(t, func(e client.WebhookEvent, attempt int) int {
		if e.Subject == "o-1" && e.Sequence == 2 && attempt < 4 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	r := repo.NewWebhooks(newStore(t))
	c := newClock()
	sub := subscribe(t, r, rc, c.Now())
	relay := webhooks.NewRelay(r, c.Now, 0)
	events := map[string][]int64{}
	var evs []domain.Event
	for seq := 1; seq <= 5; seq++ {
		for _, o := range []string{"o-1", "o-2"} {
			evs = append(evs, orderEvent("u-"+o, o, seq, c.Now()))
			events[o] = append(events[o], int64(seq))
		}
	}
	if err := relay.Handle(t.Context(), batch(t, evs...)); err != nil {
		t.Fatal(err)
	}
	// A replay creates nothing new.
	if err := relay.Handle(t.Context(), batch(t, evs...)); err != nil {
		t.Fatal(err)
	}
	d := webhooks.NewDispatcher(r, dispatcherConfig(c, "a"))
	settle(t, r, c, 2*time.Second, 50, []string{sub.ID}, d)
	log := rc.received()
	checkOrder(t, log, events, nil)
	if ds := deliveries(t, r, sub.ID, domain.DeliveryDelivered); len(ds) != 10 {
		t.Fatalf("%d delivered, want 10", len(ds))
	}
	// o-2 went through while o-1 waited.
	firstO1Seq3, lastO2 := -1, -1
	for i, rq := range log {
		if rq.Event.Subject == "o-1" && rq.Event.Sequence == 3 && firstO1Seq3 < 0 {
			firstO1Seq3 = i
		}
		if rq.Event.Subject == "o-2" && rq.Event.Sequence == 5 {
			lastO2 = i
		}
	}
	if lastO2 > firstO1Seq3 {
		t.Errorf("o-2 finished at request %d, after o-1 went on at %d: the failing subject held the other back", lastO2, firstO1Seq3)
	}
}

// A 3xx is an answer, not a way elsewhere: the attempt fails and the
// target is never asked.
func TestRedirectNotFollowed(t *testing.T) {
	var hit atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer target.Close()
	rc := newReceiver(t, nil)
	rc.srv.Config.Handler = http.RedirectHandler(target.URL, http.StatusFound)
	r, _, d, sub := one(t, rc, nil)
	if err := d.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	ds := deliveries(t, r, sub.ID, "")
	if len(ds) != 1 || ds[0].Status != domain.DeliveryPending || ds[0].LastStatus != http.StatusFound || !strings.Contains(ds[0].LastError, "redirect") {
		t.Fatalf("after a 302: %+v", ds)
	}
	if hit.Load() {
		t.Error("the redirect was followed")
	}
}

// A receiver's body is read up to MaxResponseBody: an endless one does
// not hold the attempt until its timeout.
func TestEndlessResponseBody(t *testing.T) {
	rc := newReceiver(t, nil)
	rc.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("x", 4096))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	r, _, d, sub := one(t, rc, func(dc *webhooks.DispatcherConfig) { dc.Timeout = time.Minute })
	if err := d.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if ds := deliveries(t, r, sub.ID, ""); len(ds) != 1 || ds[0].Status != domain.DeliveryDelivered {
		t.Fatalf("after an endless 200: %+v", ds)
	}
}
