package webhooks_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/api/webhooksig"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

func newStore(t testing.TB) store.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := migrations.Apply(t.Context(), s, io.Discard); err != nil {
		t.Fatal(err)
	}
	return s
}

// clock is a fake clock the tests move by hand. It starts at the wall
// clock's present, so the receivers' signature tolerance (which reads the
// wall clock) holds while it moves by minutes.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// orderEvent is the event of the seq-th move of order id.
func orderEvent(user, id string, seq int, at time.Time) domain.Event {
	o := domain.Order{Meta: domain.Meta{ID: id}, UserID: user, Status: domain.StatusPlaced,
		History: make([]domain.Step, seq), LastUpdated: at}
	ev, ok := domain.NewOrderEvent(o, domain.StatusAuthorized)
	if !ok {
		panic("no event")
	}
	return ev
}

func batch(t testing.TB, evs ...domain.Event) changefeed.Batch {
	var b changefeed.Batch
	for _, ev := range evs {
		j, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Items = append(b.Items, j)
	}
	return b
}

// received is one request a receiver answered.
type received struct {
	Event   client.WebhookEvent
	Attempt int
	Status  int
}

// receiver is a webhook receiver on loopback: it verifies every request
// with client.WebhookHandler (a request it cannot verify fails the test)
// and answers what answer says.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret string

	mu     sync.Mutex
	log    []received
	answer func(e client.WebhookEvent, attempt int) int
}

const tolerance = 24 * time.Hour

func newReceiver(t testing.TB, answer func(e client.WebhookEvent, attempt int) int) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	secret := rc.secret
	rc.mu.Unlock()
	attempt, _ := strconv.Atoi(r.Header.Get(webhooksig.AttemptHeader))
	status := 0
	h := client.WebhookHandler(secret, tolerance, func(e client.WebhookEvent) error {
		if r.Header.Get(webhooksig.EventIDHeader) != e.ID || r.Header.Get(webhooksig.EventTypeHeader) != e.EventType {
			rc.t.Errorf("headers %v do not name event %s", r.Header, e.ID)
		}
		rc.mu.Lock()
		status = http.StatusNoContent
		if rc.answer != nil {
			status = rc.answer(e, attempt)
		}
		rc.log = append(rc.log, received{e, attempt, status})
		rc.mu.Unlock()
		if status >= 300 {
			return errors.New("told to fail")
		}
		return nil
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code == http.StatusBadRequest {
		rc.t.Errorf("receiver refused a request: %s", rec.Body)
	}
	if status >= 300 {
		rec.Code = status
	}
	w.WriteHeader(rec.Code)
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.log)
}

// subscribe creates a subscription of every event type to rc.
func subscribe(t testing.TB, r *repo.Webhooks, rc *receiver, at time.Time) domain.Subscription {
	t.Helper()
	sub, secret, err := r.Create(t.Context(), domain.Subscription{URL: rc.srv.URL, EventTypes: domain.EventTypes}, at.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	rc.secret = secret
	rc.mu.Unlock()
	return sub
}

// dispatcherConfig is a dispatcher on loopback with the fake clock.
func dispatcherConfig(c *clock, instance string) webhooks.DispatcherConfig {
	return webhooks.DispatcherConfig{
		Instance: instance, Now: c.Now, Timeout: 5 * time.Second,
		RetryHorizon: 2 * time.Minute, BackoffBase: time.Second, BackoffCap: 20 * time.Second,
		Policy: webhooks.Policy{AllowPrivate: true, AllowInsecure: true},
	}
}

// deliveries lists every delivery of the subscription.
func deliveries(t testing.TB, r *repo.Webhooks, subID, status string) []domain.Delivery {
	t.Helper()
	var out []domain.Delivery
	cont := ""
	for {
		p, err := r.ListDeliveries(t.Context(), subID, status, 100, cont)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := p.Decode()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ds...)
		if p.Next == "" {
			return out
		}
		cont = p.Next
	}
}

// settle polls with every dispatcher, moving the clock step after each
// round, until no delivery of subs is pending (at most rounds rounds).
func settle(t testing.TB, r *repo.Webhooks, c *clock, step time.Duration, rounds int, subs []string, ds ...*webhooks.Dispatcher) {
	t.Helper()
	for range rounds {
		var wg sync.WaitGroup
		for _, d := range ds {
			wg.Go(func() {
				if err := d.Poll(t.Context()); err != nil {
					t.Error(err)
				}
				d.Wait()
			})
		}
		wg.Wait()
		pending := 0
		for _, s := range subs {
			pending += len(deliveries(t, r, s, domain.DeliveryPending))
		}
		if pending == 0 {
			return
		}
		c.Advance(step)
	}
	t.Fatalf("deliveries still pending after %d rounds", rounds)
}

// checkOrder fails unless every request for an event came after each
// earlier event of its subject (events: subject → its sequences) had been
// answered 2xx, or had been given up (dead: by event id) after its last
// request.
func checkOrder(t testing.TB, log []received, events map[string][]int64, dead map[string]bool) {
	t.Helper()
	for _, v := range orderViolations(log, events, dead) {
		t.Error(v)
	}
}

func orderViolations(log []received, events map[string][]int64, dead map[string]bool) []string {
	var out []string
	lastAt := map[string]int{} // event id → index of its last request
	type key struct {
		subject string
		seq     int64
	}
	idOf := map[key]string{} // an order's ids derive from the sequence, a product's do not
	for i, rq := range log {
		lastAt[rq.Event.ID] = i
		idOf[key{rq.Event.Subject, rq.Event.Sequence}] = rq.Event.ID
	}
	delivered := map[string]bool{}
	for i, rq := range log {
		e := rq.Event
		for _, seq := range events[e.Subject] {
			if seq >= e.Sequence {
				continue
			}
			id, ok := idOf[key{e.Subject, seq}]
			if !ok {
				id = domain.EventID(e.Subject, seq) // never sent: neither delivered nor dead
			}
			last, tried := lastAt[id]
			switch {
			case delivered[id]:
			case dead[id] && tried && last < i:
			default:
				out = append(out, fmt.Sprintf("request %d: %s (attempt %d) sent before %s was delivered or dead", i, e.ID, rq.Attempt, id))
			}
		}
		if rq.Status < 300 {
			delivered[e.ID] = true
		}
	}
	return out
}
