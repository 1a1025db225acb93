package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// TestWebhooksDeliveredThroughCrash proves webhook delivery end to end,
// from outside the process (issue 33): the real binary, over HTTP, with
// two receivers on this machine. The good one verifies every request's
// signature and misbehaves on a schedule (some events answered 500 the
// first time, some slowly, one period closed and then listening again on
// the same port); the bad one answers every request 500. While customers
// check out (one card declines), the admin ships, delivers, cancels,
// changes prices and deletes a product, the shop is killed with SIGKILL
// with requests still in flight to the good receiver, restarted on the
// same data and port, and left to quiesce (a hang guard only). Then:
//
//   - every order event the store holds, and every delivery to the good
//     receiver, was acknowledged by it at least once;
//   - per subject (an order, a product) its first acknowledgements came in
//     sequence order, and no request for an event came while an earlier
//     event of the subject was neither acknowledged nor dead;
//   - every request carried a valid signature;
//   - the bad receiver's deliveries are all dead, its dead-letter list is
//     exactly them (the good one's is empty), thanks to a short
//     SHOP_WEBHOOKS_RETRY_HORIZON.
//
// Duplicates are allowed (delivery is at least once) and counted.
func TestWebhooksDeliveredThroughCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs it, kills it and waits out the killed dispatcher's claims (about a minute): skipped with -short")
	}
	began := time.Now()
	bin := buildShop(t)
	dir := t.TempDir()
	// The restarted shop listens where the first one did: the
	// subscriptions' receivers do not move, and neither does the shop.
	addr := freeLoopbackAddr(t)
	// The horizon is short so that the bad receiver's deliveries go dead
	// within the test; the good receiver's retries all fall well inside
	// it (its failures are a first 500, or a second-long closed port).
	env := []string{"SHOP_ADDR=" + addr, "SHOP_WEBHOOKS_RETRY_HORIZON=15s"}

	good := newHookReceiver(t, false)
	bad := newHookReceiver(t, true)

	first := startChild(t, bin, dir, env...)
	client := &http.Client{Timeout: 15 * time.Second}
	admin := testToken(t, "boss", true)
	// The subscriptions first, before any event: the relay loads its list
	// of subscriptions when it first has an event to deliver, so both are
	// in it from the start (a subscription created later is seen within
	// the relay's cache time).
	goodSub := subscribe(t, client, first.base, admin, good)
	badSub := subscribe(t, client, first.base, admin, bad)

	products := createCatalog(t, first.base, 4)
	mustDo(t, "POST", first.base+"/v1/products", admin, map[string]any{
		"productId": "doomed", "name": "Doomed tea", "priceCents": 700, "categoryId": "tea", "stock": 10,
	}, http.StatusCreated)

	// The work, in two halves: the second begins once the good receiver
	// answers slowly, so requests are in flight when the shop is killed.
	var counts workCounts
	w := &hookWork{t: t, c: client, base: first.base, admin: admin, products: products, counts: &counts}
	// Each phase of the receiver's schedule waits for the requests it
	// needs (the dispatcher polls every second): 500s and slow answers in
	// the first half, then the closed port, then requests to the receiver
	// listening again.
	w.run(0, 10)
	good.await(t, "a first 500 and a slow answer", func() bool { return good.failedFirst > 0 && good.slowed > 0 })
	// The receiver closes; the second half's events meet a refused
	// connection before it listens on the same port again.
	good.close()
	w.run(10, 20)
	refused := 0
	for deadline := time.Now().Add(30 * time.Second); refused == 0; time.Sleep(50 * time.Millisecond) {
		for _, d := range deliveries(t, client, first.base, admin, goodSub.ID, domain.DeliveryPending) {
			if d.Attempts > 0 && d.LastStatus == 0 && strings.Contains(d.LastError, "refused") {
				refused++
			}
		}
		if refused == 0 && time.Now().After(deadline) {
			t.Fatal("no delivery met the closed receiver within 30 s (hang guard)")
		}
	}
	good.listen(t)
	good.await(t, "requests after its restart", func() bool { return good.afterRestart >= 5 })
	good.slowAll.Store(true)
	w.finish()

	// Kill -9 with requests in flight to the good receiver (it is slow
	// now); it answers them after the shop is gone.
	good.await(t, "a request in flight", func() bool { return good.inflight.Load() > 0 })
	inflightAtKill := good.inflight.Load()
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	killed := time.Now()
	good.slowAll.Store(false)
	good.behave.Store(true)

	second := startChild(t, bin, dir, env...)
	if second.base != first.base {
		t.Fatalf("restarted on %s, want %s", second.base, first.base)
	}
	// Quiesce: the relay has read both feeds to their ends (its
	// processors are in /v1/admin/feeds) and neither subscription has a
	// delivery pending. The killed dispatcher's claims hold for its
	// request timeout and margin (40 s) before the new one may send them.
	for deadline := time.Now().Add(150 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if feedsCaughtUp(client, second.base, admin) &&
			len(deliveries(t, client, second.base, admin, goodSub.ID, domain.DeliveryPending)) == 0 &&
			len(deliveries(t, client, second.base, admin, badSub.ID, domain.DeliveryPending)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("150 s after the restart deliveries are still pending (hang guard): good %d, bad %d",
				len(deliveries(t, client, second.base, admin, goodSub.ID, domain.DeliveryPending)),
				len(deliveries(t, client, second.base, admin, badSub.ID, domain.DeliveryPending)))
		}
	}
	quiesced := time.Since(killed)
	goodAll := deliveries(t, client, second.base, admin, goodSub.ID, "")
	badAll := deliveries(t, client, second.base, admin, badSub.ID, "")
	goodDead := deliveries(t, client, second.base, admin, goodSub.ID, domain.DeliveryDead)
	badDead := deliveries(t, client, second.base, admin, badSub.ID, domain.DeliveryDead)

	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.cmd.Wait(); err != nil {
		t.Fatalf("clean stop after the restart: %v", err)
	}
	orderEvents := storedOrderEvents(t, dir)

	// The work did what the test needs, or it proves nothing.
	if len(orderEvents) == 0 || counts.placed.Load() == 0 || counts.declined.Load() == 0 || counts.shipped.Load() == 0 ||
		counts.cancelled.Load() == 0 || counts.priced.Load() == 0 || !counts.deleted.Load() {
		t.Fatalf("the work fell short: %d order events; %s", len(orderEvents), &counts)
	}
	good.mu.Lock()
	defer good.mu.Unlock()
	bad.mu.Lock()
	defer bad.mu.Unlock()
	if good.failedFirst == 0 || good.slowed == 0 || good.afterRestart == 0 {
		t.Errorf("the good receiver's schedule did not happen: %d answered 500 first, %d slow, %d requests after its restart",
			good.failedFirst, good.slowed, good.afterRestart)
	}

	// Every request was signed with its subscription's secret.
	for _, r := range []*hookReceiver{good, bad} {
		if r.badSignatures != 0 {
			t.Errorf("%s receiver: %d requests failed signature verification", r.name, r.badSignatures)
		}
	}

	// Every order event was acknowledged; so was every delivery of the
	// good subscription (products' events included), and none is dead.
	byEvent := map[string]domain.Delivery{}
	for _, d := range goodAll {
		byEvent[d.EventID] = d
		if d.Status != domain.DeliveryDelivered {
			t.Errorf("good subscription: delivery of %s is %s (attempts %d, last %d %q)", d.EventID, d.Status, d.Attempts, d.LastStatus, d.LastError)
		}
		if good.firstAck[d.EventID] == 0 {
			t.Errorf("good receiver never acknowledged %s (%s of %s)", d.EventID, d.EventType, d.Subject)
		}
	}
	for _, ev := range orderEvents {
		if _, ok := byEvent[ev.ID]; !ok {
			t.Errorf("order event %s (%s of %s) has no delivery to the good subscription", ev.ID, ev.EventType, ev.Subject)
		}
		if good.firstAck[ev.ID] == 0 {
			t.Errorf("order event %s (%s of %s) was never acknowledged", ev.ID, ev.EventType, ev.Subject)
		}
	}
	if len(goodDead) != 0 {
		t.Errorf("good subscription's dead letters: %d, want none", len(goodDead))
	}

	// In order per subject: first acknowledgements by sequence, and no
	// request while an earlier event of its subject was still unanswered.
	checkSubjectOrder(t, good, goodAll, func(d domain.Delivery, arrived hookRequest) bool {
		ack := good.firstAck[d.EventID]
		return ack != 0 && ack < arrived.at
	})

	// The bad subscription: every delivery dead, the dead-letter list
	// exactly those, the same events the good one got.
	var badIDs, deadIDs, goodIDs []string
	for _, d := range badAll {
		badIDs = append(badIDs, d.EventID)
		if d.Status != domain.DeliveryDead {
			t.Errorf("bad subscription: delivery of %s is %s, want dead", d.EventID, d.Status)
		}
	}
	for _, d := range badDead {
		deadIDs = append(deadIDs, d.EventID)
	}
	for _, d := range goodAll {
		goodIDs = append(goodIDs, d.EventID)
	}
	for _, s := range [][]string{badIDs, deadIDs, goodIDs} {
		slices.Sort(s)
	}
	if !slices.Equal(deadIDs, badIDs) || !slices.Equal(badIDs, goodIDs) {
		t.Errorf("dead letters of the bad subscription: %d events, its deliveries %d, the good one's %d; want the same events",
			len(deadIDs), len(badIDs), len(goodIDs))
	}
	// A dead event's successors of its subject were sent only after it
	// died (MarkDead records the time of death as NextAttemptAt).
	checkSubjectOrder(t, bad, badAll, func(d domain.Delivery, arrived hookRequest) bool {
		return d.Status == domain.DeliveryDead && d.NextAttemptAt.Before(arrived.when)
	})

	dups := 0
	for _, r := range good.requests {
		if r.status/100 == 2 && r.at != good.firstAck[r.eventID] {
			dups++
		}
	}
	productEvents := len(goodAll) - len(orderEvents)
	t.Logf("%s; %d order events and %d product events; good receiver: %d requests, %d answered 500 on purpose, %d slow, %d deliveries refused by its closed port, %d after its restart, %d duplicates of an acknowledged event, %d in flight at the kill; bad receiver: %d requests, %d dead letters; quiesced %v after the kill; %v in all",
		&counts, len(orderEvents), productEvents, len(good.requests), good.failedFirst, good.slowed, refused, good.afterRestart, dups, inflightAtKill,
		len(bad.requests), len(badDead), quiesced.Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond))
}

// checkSubjectOrder checks the receiver's log against the subscription's
// deliveries: per subject, the first acknowledgements (if any) come in
// sequence order, and every request for an event came after each earlier
// event of its subject was settled (settled says whether d was by the
// time the request arrived).
func checkSubjectOrder(t *testing.T, r *hookReceiver, all []domain.Delivery, settled func(d domain.Delivery, arrived hookRequest) bool) {
	t.Helper()
	bySubject := map[string][]domain.Delivery{}
	for _, d := range all {
		bySubject[d.Subject] = append(bySubject[d.Subject], d)
	}
	for subject, ds := range bySubject {
		slices.SortFunc(ds, func(a, b domain.Delivery) int { return cmp.Compare(a.Sequence, b.Sequence) })
		last := int64(0)
		for _, d := range ds {
			if ack := r.firstAck[d.EventID]; ack != 0 {
				if ack < last {
					t.Errorf("%s receiver: %s (sequence %d) first acknowledged before an earlier event of %s", r.name, d.EventID, d.Sequence, subject)
				}
				last = ack
			}
		}
		for _, req := range r.requests {
			if req.subject != subject {
				continue
			}
			for _, d := range ds {
				if d.Sequence < req.sequence && !settled(d, req) {
					t.Errorf("%s receiver: request %d for %s (sequence %d, attempt %d) came while the earlier %s (sequence %d) was neither acknowledged nor dead",
						r.name, req.at, req.eventID, req.sequence, req.attempt, d.EventID, d.Sequence)
				}
			}
		}
	}
}

// hookReceiver is a webhook receiver on a loopback port, recording every
// request; misbehaving on a schedule, or (bad) answering 500 to all.
type hookReceiver struct {
	name string
	bad  bool
	addr string

	inflight atomic.Int64
	slowAll  atomic.Bool // every request answered slowly (before the kill)
	behave   atomic.Bool // no misbehaviour any more (after the kill)

	mu            sync.Mutex
	srv           *httptest.Server
	secret        string
	clock         int64 // orders arrivals and acknowledgements
	requests      []hookRequest
	firstAck      map[string]int64 // event id -> the clock of its first 2xx
	seen          map[string]int   // event id -> its place among the events seen
	failed        map[string]bool  // events already answered 500 on purpose
	restarted     bool
	badSignatures int
	failedFirst   int
	slowed        int
	afterRestart  int
}

// hookRequest is one request the receiver answered.
type hookRequest struct {
	at                int64     // the receiver's clock at arrival
	when              time.Time // the wall clock at arrival
	eventID, subject  string
	sequence          int64
	attempt, status   int
	signatureVerified bool
}

func newHookReceiver(t *testing.T, bad bool) *hookReceiver {
	r := &hookReceiver{name: "good", bad: bad, firstAck: map[string]int64{}, seen: map[string]int{}, failed: map[string]bool{}}
	if bad {
		r.name = "bad"
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.addr = r.srv.Listener.Addr().String()
	t.Cleanup(func() {
		r.mu.Lock()
		srv := r.srv
		r.mu.Unlock()
		srv.Close()
	})
	return r
}

// await waits until cond, read under r's lock, holds; 30 s is a hang
// guard.
func (r *hookReceiver) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s receiver: no %s within 30 s (hang guard)", r.name, what)
		}
	}
}

func (r *hookReceiver) url() string { return "http://" + r.addr + "/hooks" }

// close closes the receiver: its port refuses connections until listen.
func (r *hookReceiver) close() {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	srv.Close() // waits for the requests it is answering
}

// listen listens again on the receiver's port: the receiver restarted.
func (r *hookReceiver) listen(t *testing.T) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	srv.Listener.Close()
	ln, err := net.Listen("tcp", r.addr)
	for end := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		ln, err = net.Listen("tcp", r.addr)
	}
	if err != nil {
		t.Fatalf("the receiver cannot listen on %s again: %v", r.addr, err)
	}
	srv.Listener = ln
	srv.Start()
	r.mu.Lock()
	r.srv, r.restarted = srv, true
	r.mu.Unlock()
}

// serve verifies and records one request, and answers it as scheduled:
// the bad receiver 500 always; the good one, before the kill, 500 the
// first time for every fourth event, slowly (under the dispatcher's
// 10 s timeout) for every fifth, and slowly for all once slowAll is set;
// 204 otherwise.
func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	r.clock++
	rec := hookRequest{at: r.clock, when: time.Now(), eventID: req.Header.Get(client.WebhookEventIDHeader)}
	rec.attempt, _ = strconv.Atoi(req.Header.Get(client.WebhookAttemptHeader))
	ev, verr := client.VerifyWebhook(req.Header, body, r.secret, 0)
	if err != nil || verr != nil || ev.ID != rec.eventID {
		r.badSignatures++
	} else {
		rec.signatureVerified = true
		rec.subject, rec.sequence = ev.Subject, ev.Sequence
	}
	if r.restarted {
		r.afterRestart++
	}
	n, ok := r.seen[rec.eventID]
	if !ok {
		n = len(r.seen) + 1
		r.seen[rec.eventID] = n
	}
	var delay time.Duration
	status := http.StatusNoContent
	switch {
	case r.bad || !rec.signatureVerified:
		status = http.StatusInternalServerError
	case r.behave.Load():
	case r.slowAll.Load():
		delay = 1500 * time.Millisecond
		r.slowed++
	case n%4 == 1 && !r.failed[rec.eventID]:
		r.failed[rec.eventID] = true
		r.failedFirst++
		status = http.StatusInternalServerError
	case n%5 == 2:
		delay = time.Duration(300+100*(n%8)) * time.Millisecond
		r.slowed++
	}
	r.mu.Unlock()

	time.Sleep(delay)

	r.mu.Lock()
	rec.status = status
	if status/100 == 2 {
		// The clock moves at the answer, before the shop can record the
		// delivery and send the subject's next event.
		r.clock++
		if r.firstAck[rec.eventID] == 0 {
			r.firstAck[rec.eventID] = r.clock
		}
		rec.at = r.clock
	}
	r.requests = append(r.requests, rec)
	r.mu.Unlock()
	w.WriteHeader(status)
}

// subscription is the answer of POST /v1/admin/webhooks.
type subscription struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

// subscribe creates a subscription of r to every event type and gives r
// its secret.
func subscribe(t *testing.T, c *http.Client, base, admin string, r *hookReceiver) subscription {
	t.Helper()
	code, b, err := httpDo(c, "POST", base+"/v1/admin/webhooks", admin, map[string]any{
		"url": r.url(), "eventTypes": domain.EventTypes, "description": "the " + r.name + " receiver of " + t.Name(),
	}, nil)
	if err != nil || code != http.StatusCreated {
		t.Fatalf("POST /v1/admin/webhooks (%s) = %d, %v: %s", r.url(), code, err, b)
	}
	var s subscription
	if err := json.Unmarshal(b, &s); err != nil || s.ID == "" || s.Secret == "" {
		t.Fatalf("subscription %s: %v", b, err)
	}
	r.mu.Lock()
	r.secret = s.Secret
	r.mu.Unlock()
	return s
}

// deliveries lists every delivery of the subscription with the status
// ("" for all), page by page.
func deliveries(t *testing.T, c *http.Client, base, admin, subID, status string) []domain.Delivery {
	t.Helper()
	var out []domain.Delivery
	cont := ""
	for {
		q := url.Values{"limit": {"100"}}
		if status != "" {
			q.Set("status", status)
		}
		if cont != "" {
			q.Set("continuation", cont)
		}
		code, b, err := httpDo(c, "GET", base+"/v1/admin/webhooks/"+subID+"/deliveries?"+q.Encode(), admin, nil, nil)
		if err != nil || code != http.StatusOK {
			t.Fatalf("deliveries of %s: %d, %v: %s", subID, code, err, b)
		}
		var page struct {
			Items        []domain.Delivery `json:"items"`
			Continuation *string           `json:"continuation"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Items...)
		if page.Continuation == nil || *page.Continuation == "" {
			return out
		}
		cont = *page.Continuation
	}
}

// feedsCaughtUp reports whether every processor /v1/admin/feeds shows,
// the webhook relay's among them, has caught up.
func feedsCaughtUp(c *http.Client, base, admin string) bool {
	code, b, err := httpDo(c, "GET", base+"/v1/admin/feeds", admin, nil, nil)
	var st struct {
		Processors []struct {
			Processor string `json:"processor"`
			CaughtUp  bool   `json:"caughtUp"`
		} `json:"processors"`
	}
	if err != nil || code != http.StatusOK || json.Unmarshal(b, &st) != nil {
		return false
	}
	relay := 0
	for _, p := range st.Processors {
		if !p.CaughtUp {
			return false
		}
		if p.Processor == "webhooks-orders" || p.Processor == "webhooks-products" {
			relay++
		}
	}
	return relay == 2
}

// storedOrderEvents opens the stopped shop's store in dir and reads every
// order event document.
func storedOrderEvents(t *testing.T, dir string) []domain.Event {
	t.Helper()
	st, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []domain.Event
	q := store.Query{Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeEvent}}, Limit: store.MaxQueryPageSize}
	for {
		page, err := st.Container(store.OrdersContainer).Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			ev, err := repo.Decode[domain.Event](it)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ev)
		}
		if page.Continuation == "" {
			return out
		}
		q.Continuation = page.Continuation
	}
}

// freeLoopbackAddr returns a loopback address whose port was free a
// moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// workCounts counts what the work did.
type workCounts struct {
	placed, declined, shipped, delivered, cancelled, priced atomic.Int64
	deleted                                                 atomic.Bool
}

func (c *workCounts) String() string {
	return fmt.Sprintf("%d orders placed, %d declined, %d shipped, %d delivered, %d cancelled, %d price changes, product deleted %v",
		c.placed.Load(), c.declined.Load(), c.shipped.Load(), c.delivered.Load(), c.cancelled.Load(), c.priced.Load(), c.deleted.Load())
}

// hookWork is the customers' and the admin's work: checkouts numbered
// from..to, four at once, each by a customer of its own, and after each
// half the admin's moves of the orders placed in it.
type hookWork struct {
	t           *testing.T
	c           *http.Client
	base, admin string
	products    []string
	counts      *workCounts
	mu          sync.Mutex
	orders      []placedOrder
	moved       int // orders already moved by the admin
}

type placedOrder struct{ user, id string }

// run checks out orders from..to-1 (the fourth declines its card), then
// changes prices, ships some of the orders and delivers or cancels
// others.
func (w *hookWork) run(from, to int) {
	t := w.t
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := from + g; i < to; i += 4 {
				user := fmt.Sprintf("hook-buyer-%02d", i)
				tok := testToken(t, user, false)
				p := w.products[i%len(w.products)]
				if code, b, err := httpDo(w.c, "PUT", w.base+"/v1/cart/items/"+p, tok, map[string]int{"quantity": 1 + i%2}, nil); err != nil || code != http.StatusOK {
					t.Errorf("PUT cart line: %d, %v: %s", code, err, b)
					return
				}
				body := addressBody
				if i == 3 {
					body = map[string]any{"paymentMethod": "pm_card_chargeDeclinedInsufficientFunds", "shippingAddress": addressBody["shippingAddress"]}
				}
				code, b, err := httpDo(w.c, "POST", w.base+"/v1/checkout", tok, body, map[string]string{"Idempotency-Key": fmt.Sprintf("hook-%d", i)})
				switch {
				case err != nil:
					t.Errorf("checkout %d: %v", i, err)
				case i == 3 && code == http.StatusPaymentRequired:
					w.counts.declined.Add(1)
				case code == http.StatusCreated:
					var o liveOrder
					if err := json.Unmarshal(b, &o); err != nil {
						t.Errorf("checkout %d: %v", i, err)
						continue
					}
					w.counts.placed.Add(1)
					w.mu.Lock()
					w.orders = append(w.orders, placedOrder{user, o.ID})
					w.mu.Unlock()
				default:
					t.Errorf("checkout %d = %d: %s", i, code, b)
				}
			}
		})
	}
	// The admin changes prices meanwhile.
	wg.Go(func() {
		for i := range 3 {
			p := w.products[(from/10+i)%len(w.products)]
			code, b, err := httpDo(w.c, "PATCH", w.base+"/v1/products/"+p, w.admin, map[string]int{"priceCents": 800 + from + i},
				map[string]string{"Content-Type": "application/merge-patch+json"})
			if err != nil || code != http.StatusOK {
				t.Errorf("PATCH price of %s: %d, %v: %s", p, code, err, b)
				continue
			}
			w.counts.priced.Add(1)
		}
	})
	wg.Wait()

	// Then the admin's moves, and the customers' cancels, over the
	// orders of this half: ships 3 (delivers 1 of them), cancels 2.
	w.mu.Lock()
	batch := w.orders[w.moved:]
	w.moved = len(w.orders)
	w.mu.Unlock()
	for i, o := range batch {
		switch {
		case i < 3:
			w.patchOrder(o, "shipped", &w.counts.shipped)
			if i == 0 {
				w.patchOrder(o, "delivered", &w.counts.delivered)
			}
		case i < 5:
			code, b, err := httpDo(w.c, "POST", w.base+"/v1/orders/"+o.id+"/cancel", testToken(t, o.user, false), nil, nil)
			if err != nil || code != http.StatusOK {
				t.Errorf("cancel %s: %d, %v: %s", o.id, code, err, b)
				continue
			}
			w.counts.cancelled.Add(1)
		}
	}
}

func (w *hookWork) patchOrder(o placedOrder, status string, n *atomic.Int64) {
	code, b, err := httpDo(w.c, "PATCH", w.base+"/v1/admin/orders/"+o.user+"/"+o.id, w.admin, map[string]string{"status": status}, nil)
	if err != nil || code != http.StatusOK {
		w.t.Errorf("PATCH order %s to %s: %d, %v: %s", o.id, status, code, err, b)
		return
	}
	n.Add(1)
}

// finish deletes the product nobody bought.
func (w *hookWork) finish() {
	code, b, err := httpDo(w.c, "DELETE", w.base+"/v1/products/doomed", w.admin, nil, nil)
	if err != nil || code/100 != 2 {
		w.t.Errorf("DELETE product: %d, %v: %s", code, err, b)
		return
	}
	w.counts.deleted.Store(true)
}

// TestWebhooksRetryHorizonSetting: SHOP_WEBHOOKS_RETRY_HORIZON is a
// duration above 0, a day by default (webhooks.RetryHorizon), and at most
// the events' retention, past which a pending delivery would expire
// before it was given up.
func TestWebhooksRetryHorizonSetting(t *testing.T) {
	c, err := parseConfig("serve", nil, envOf(), io.Discard)
	if err != nil || c.WebhooksRetryHorizon != 24*time.Hour {
		t.Errorf("default: %v, %v; want 24h", c.WebhooksRetryHorizon, err)
	}
	c, err = parseConfig("serve", []string{"--webhooks-retry-horizon", "15s"}, envOf(), io.Discard)
	if err != nil || c.WebhooksRetryHorizon != 15*time.Second {
		t.Errorf("set: %v, %v; want 15s", c.WebhooksRetryHorizon, err)
	}
	for _, bad := range []string{"0s", "-1m", "soon", "169h"} {
		if _, err := parseConfig("serve", nil, envOf("SHOP_WEBHOOKS_RETRY_HORIZON="+bad), io.Discard); err == nil {
			t.Errorf("SHOP_WEBHOOKS_RETRY_HORIZON=%s accepted", bad)
		}
	}
}
