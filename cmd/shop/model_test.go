package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/writes/writestest"
)

// TestShopAgainstModel drives one customer's shop with random sequences
// of cart writes, checkouts (fresh keys, replays, replays with another
// body, several at once, cards that authorize and cards that decline),
// shipments, cancels, admin price changes, admin stock counts, feed
// catch-ups and restarts, with the payment provider failing a share of
// its calls (timeouts, 5xx, answers lost after the call took effect),
// and compares every answer with a sequential model kept in plain maps.
// The model's rules:
//   - an add grows the line by its quantity, and is 409 with the cart
//     unchanged when the line would pass 99;
//   - a cart line carries its product's current name and price (a price
//     change waits here for the feed to reach the carts before the next
//     step, which keeps the model deterministic);
//   - checkout of an empty cart is 409; of a cart with a line the stock
//     cannot serve, 409 out-of-stock naming exactly each such line (units
//     requested and available), nothing reserved and the cart unchanged;
//     with a card that declines, 402 with the card's decline code, the
//     order left rejected, the cart and the stock unchanged; otherwise it
//     charges the lines at the prices the cart shows, takes their units
//     from the stock and leaves the cart empty (a 202, the order still in
//     progress, is asked again with its key until it is final);
//   - several checkouts at once of one cart are as if one after another:
//     one order, 409 for the rest;
//   - a replayed key answers its first order again and takes no unit
//     again; another body is 422;
//   - a placed order ships once, then 409; a placed or shipped order
//     cancels once, its units back in stock, then 409;
//   - an admin's count sets the units available; after the feed the
//     product page shows the status of the units available;
//   - /v1/me/summary counts the placed and shipped orders;
//   - once the feeds have caught up, every order's money and units match
//     its state, and each product's units add up (writestest.Check).
//
// The default run stops exploring after a time budget (shrinking a failure
// is not cut short); SHOP_LONG=1 explores much longer.
func TestShopAgainstModel(t *testing.T) {
	budget, rounds := 10*time.Second, 1
	if longRun() {
		budget, rounds = 10*time.Minute, 20
	}
	shortShrink(t, 10*time.Second)
	e := newExplorer(t, budget)
	var steps, refused, declined int
	prop := func(rt *rapid.T) {
		ft, path, ok := e.start(rt, "shop")
		if !ok {
			return
		}
		m := newShopModel(ft, path)
		rt.Repeat(m.actions())
		steps += m.steps
		refused += m.refused
		declined += m.declined
	}
	for range rounds {
		rapid.Check(t, prop)
	}
	t.Logf("%d sequences run (%d steps, %d checkouts refused out of stock, %d declined), %d not run past the time budget, in %v",
		e.ran, steps, refused, declined, e.skipped, time.Since(e.began).Round(time.Millisecond))
}

// explorer runs the sequences of a property until its time budget is
// spent: past it a sequence is skipped, unless a failure is being shrunk.
type explorer struct {
	dir          string
	began        time.Time
	budget       time.Duration
	failing      atomic.Bool
	ran, skipped int
}

func newExplorer(t *testing.T, budget time.Duration) *explorer {
	return &explorer{dir: t.TempDir(), began: time.Now(), budget: budget}
}

// start begins one sequence: the tester to fail it with and the path of
// a new store file (removed with the sequence); ok is false past the
// budget.
func (e *explorer) start(rt *rapid.T, name string) (ft *flagT, path string, ok bool) {
	if time.Since(e.began) > e.budget && !e.failing.Load() {
		e.skipped++
		return nil, "", false
	}
	e.ran++
	path = filepath.Join(e.dir, fmt.Sprintf("%s-%d.db", name, e.ran))
	rt.Cleanup(func() { os.Remove(path) })
	return &flagT{T: rt, failing: &e.failing}, path, true
}

// shortShrink bounds the time rapid spends shrinking a failure to d,
// unless -rapid.shrinktime or RAPID_SHRINKTIME says otherwise: a racy
// failure shrinks to its few steps quickly, and the default bound would
// hold a failing run for much longer than the exploration itself.
func shortShrink(t *testing.T, d time.Duration) {
	t.Helper()
	set := os.Getenv("RAPID_SHRINKTIME") != ""
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.shrinktime" })
	f := flag.Lookup("rapid.shrinktime")
	if set || f == nil {
		return
	}
	old := f.Value.String()
	if err := f.Value.Set(d.String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// flagT is a rapid.T that remembers a failure was seen, so the time
// budget never cuts short the shrinking of a failing sequence.
type flagT struct {
	*rapid.T
	failing *atomic.Bool
}

func (t *flagT) Fatalf(format string, args ...any) {
	t.failing.Store(true)
	t.T.Fatalf(format, args...)
}

// modelOrder is an order as the model knows it.
type modelOrder struct {
	id     string
	lines  map[string]int   // productId → quantity
	prices map[string]int64 // productId → unit price charged
	total  int64
	status string
}

// shopModel is the sequential model of one customer's shop, and the live
// shop it is compared with.
type shopModel struct {
	t               *flagT
	s               *liveShop
	customer, admin string
	users           map[string]string

	products     []string
	name         map[string]string
	price        map[string]int64
	priceVersion map[string]int64
	stock        map[string]int64 // units available
	cart         map[string]int
	orders       []*modelOrder
	keys         []string // the keys that placed an order, in order
	byKey        map[string]*modelOrder
	nextKey      int
	steps        int
	refused      int                       // checkouts answered 409 out-of-stock
	declined     int                       // checkouts answered 402
	bodies       map[string]map[string]any // the body each key was sent with
}

func newShopModel(t *flagT, path string) *shopModel {
	// A Cosmos batch takes milliseconds, the embedded store's microseconds:
	// the order batch gets a Cosmos-like latency, so concurrent checkouts
	// overlap as they would on a real account. Nothing fails.
	s := newLiveShop(t, path, &faults.Config{Rules: []faults.Rule{
		{Containers: []string{"orders"}, Ops: []faults.Op{faults.OpBatch}, Latency: 2 * time.Millisecond}}})
	m := &shopModel{
		t: t, s: s,
		customer: liveToken(t, "model-customer", false),
		admin:    liveToken(t, "boss", true),
		name:     map[string]string{}, price: map[string]int64{}, priceVersion: map[string]int64{},
		stock: map[string]int64{}, cart: map[string]int{}, byKey: map[string]*modelOrder{}, bodies: map[string]map[string]any{},
	}
	m.users = map[string]string{"model-customer": m.customer}
	// The payment provider fails a share of its calls, drawn per
	// sequence; the workflow retries, and the feed carries effects out.
	if rate := rapid.SampledFrom([]float64{0, 0.05, 0.15}).Draw(t.T, "payment fault rate"); rate > 0 {
		s.payFaults = paymentFaults(rate, rapid.Uint64().Draw(t.T, "payment fault seed"))
		s.pay.InjectFaults(s.payFaults)
	}
	m.products = s.catalog(3)
	for _, id := range m.products {
		p := s.product(id)
		m.name[id], m.price[id], m.priceVersion[id] = p.Name, p.PriceCents, p.PriceVersion
		// A few units each, so that checkouts run out.
		n := rapid.Int64Range(0, 150).Draw(t.T, "stock of "+id)
		m.s.must("PUT", "/v1/admin/products/"+id+"/stock", m.admin, map[string]int64{"available": n}, nil, http.StatusOK, nil)
		m.stock[id] = n
	}
	return m
}

func (m *shopModel) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"put":         m.put,
		"add":         m.add,
		"delete":      m.delete,
		"checkout":    m.checkout,
		"checkoutAll": m.checkoutAtOnce,
		"replay":      m.replay,
		"replayOther": m.replayOther,
		"cancel":      m.cancel,
		"ship":        m.ship,
		"price":       m.changePrice,
		"restock":     m.restock,
		"feed":        m.feed,
		"restart":     m.restart,
		"":            m.check,
	}
}

func (m *shopModel) product(t *rapid.T) string {
	return rapid.SampledFrom(m.products).Draw(t, "product")
}

func (m *shopModel) put(t *rapid.T) {
	m.steps++
	p, q := m.product(t), rapid.IntRange(1, 99).Draw(t, "quantity")
	m.s.must("PUT", "/v1/cart/items/"+p, m.customer, map[string]int{"quantity": q}, nil, http.StatusOK, nil)
	m.cart[p] = q
}

// add is "Add to cart" (POST): the line grows by q, or the answer is 409
// and the cart unchanged when the line would pass 99.
func (m *shopModel) add(t *rapid.T) {
	m.steps++
	p, q := m.product(t), rapid.IntRange(1, 99).Draw(t, "quantity")
	if m.cart[p]+q > domain.MaxQuantity {
		m.s.must("POST", "/v1/cart/items/"+p, m.customer, map[string]int{"quantity": q}, nil, http.StatusConflict, nil)
		return
	}
	var c liveCart
	m.s.must("POST", "/v1/cart/items/"+p, m.customer, map[string]int{"quantity": q}, nil, http.StatusOK, &c)
	m.cart[p] += q
	got := 0
	for _, l := range c.Items {
		if l.ProductID == p {
			got = l.Quantity
		}
	}
	if got != m.cart[p] {
		m.t.Fatalf("add %d of %s answered the line's quantity %d, want %d", q, p, got, m.cart[p])
	}
}

func (m *shopModel) delete(t *rapid.T) {
	m.steps++
	p := m.product(t)
	m.s.must("DELETE", "/v1/cart/items/"+p, m.customer, nil, nil, http.StatusOK, nil)
	delete(m.cart, p)
}

func (m *shopModel) freshKey() string {
	m.nextKey++
	return fmt.Sprintf("model-%d", m.nextKey)
}

// placed records the order a 201 checkout of the model's cart answered
// and empties the cart; the order must hold the cart's lines at the
// cart's prices.
func (m *shopModel) placed(key string, body []byte) {
	var o liveOrder
	if err := json.Unmarshal(body, &o); err != nil {
		m.t.Fatalf("checkout %s: decode %s: %v", key, body, err)
	}
	want := &modelOrder{id: o.ID, lines: maps.Clone(m.cart), prices: map[string]int64{}, status: "placed"}
	for p, q := range m.cart {
		want.prices[p] = m.price[p]
		want.total += int64(q) * m.price[p]
	}
	m.compareOrder("checkout "+key, o, want)
	for p, q := range m.cart {
		m.stock[p] -= int64(q)
	}
	m.orders = append(m.orders, want)
	m.keys = append(m.keys, key)
	m.byKey[key] = want
	m.cart = map[string]int{}
}

func (m *shopModel) compareOrder(what string, o liveOrder, want *modelOrder) {
	lines, prices := map[string]int{}, map[string]int64{}
	for _, l := range o.Items {
		lines[l.ProductID], prices[l.ProductID] = l.Quantity, l.UnitPriceCents
	}
	// Order ids are random: the failure says whether they differ, so it
	// reads the same each time rapid runs the sequence again.
	if o.ID != want.id || !maps.Equal(lines, want.lines) || !maps.Equal(prices, want.prices) || o.TotalCents != want.total || o.Status != want.status {
		m.t.Fatalf("%s: order %v at %v total %d %s (same id as the model's: %v); model: %v at %v total %d %s",
			what, lines, prices, o.TotalCents, o.Status, o.ID == want.id, want.lines, want.prices, want.total, want.status)
	}
}

// paymentFaults fails rate of the provider's calls, a third each timed
// out, unavailable, or applied with the answer lost.
func paymentFaults(rate float64, seed uint64) func(op, key string) payembedded.Fault {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 1))
	return func(op, key string) payembedded.Fault {
		mu.Lock()
		defer mu.Unlock()
		if op == "get" || r.Float64() >= rate {
			return payembedded.NoFault
		}
		return []payembedded.Fault{payembedded.Timeout, payembedded.Unavailable, payembedded.LostAnswer}[r.IntN(3)]
	}
}

// paymentMethods are the cards the model's customer pays with: mostly
// ones that authorize, and two Stripe test cards that decline.
var paymentMethods = []string{"pm_card_visa", "pm_card_visa", "pm_card_mastercard", "pm_card_chargeDeclined", "pm_card_chargeDeclinedInsufficientFunds"}

func (m *shopModel) checkout(t *rapid.T) {
	m.steps++
	key := m.freshKey()
	method := rapid.SampledFrom(paymentMethods).Draw(t, "payment method")
	body := maps.Clone(addressBody)
	body["paymentMethod"] = method
	code, b := m.s.do("POST", "/v1/checkout", m.customer, body, map[string]string{"Idempotency-Key": key})
	code, b = m.final(key, body, code, b)
	m.bodies[key] = body
	m.checkoutAnswerWith(key, method, code, b)
}

// final asks a checkout answered 202 (its order still in progress past
// the checkout's bound: the payment provider's faults make it slow)
// again with its key, which carries the order on, until the answer is
// final.
func (m *shopModel) final(key string, body any, code int, b []byte) (int, []byte) {
	for try := 0; code == http.StatusAccepted && try < 100; try++ {
		time.Sleep(20 * time.Millisecond)
		code, b = m.s.do("POST", "/v1/checkout", m.customer, body, map[string]string{"Idempotency-Key": key})
	}
	return code, b
}

// shortages are the lines of the model's cart the stock cannot serve, by
// product id.
func (m *shopModel) shortages() []domain.Shortage {
	var short []domain.Shortage
	for _, p := range slices.Sorted(maps.Keys(m.cart)) {
		if q := int64(m.cart[p]); q > m.stock[p] {
			short = append(short, domain.Shortage{ProductID: p, Requested: q, Available: m.stock[p]})
		}
	}
	return short
}

// checkoutAnswer is checkoutAnswerWith of a card that authorizes.
func (m *shopModel) checkoutAnswer(key string, code int, b []byte) {
	m.checkoutAnswerWith(key, "pm_card_visa", code, b)
}

// checkoutAnswerWith compares one checkout's answer with the model: 409
// "the cart is empty" for an empty cart, 409 out-of-stock naming the
// short lines, 402 for a card that declines (the order rejected, the
// cart and the stock as they were), otherwise 201 and the order.
func (m *shopModel) checkoutAnswerWith(key, method string, code int, b []byte) {
	if len(m.cart) == 0 {
		var p liveProblem
		if code != http.StatusConflict || json.Unmarshal(b, &p) != nil || p.Detail != "the cart is empty" {
			m.t.Fatalf("checkout %s of an empty cart = %d %s, want 409 the cart is empty", key, code, describe(b))
		}
		return
	}
	if short := m.shortages(); len(short) > 0 {
		var p saleProblem
		if code != http.StatusConflict || json.Unmarshal(b, &p) != nil || p.Type != outOfStockType || !slices.Equal(p.Items, short) {
			m.t.Fatalf("checkout %s of %v with stock %v = %d %s, want 409 out-of-stock %v", key, m.cart, m.stock, code, describe(b), short)
		}
		m.refused++
		return
	}
	if card, _ := payments.LookupTestMethod(method); card.DeclineCode != "" {
		var p struct {
			Type, Instance, DeclineCode string
		}
		if code != http.StatusPaymentRequired || json.Unmarshal(b, &p) != nil || p.Type != declinedType || p.DeclineCode != card.DeclineCode || !strings.HasPrefix(p.Instance, "/v1/orders/") {
			m.t.Fatalf("checkout %s of %v with %s = %d %s, want 402 payment-declined %s naming its order", key, m.cart, method, code, describe(b), card.DeclineCode)
		}
		m.declined++
		m.orders = append(m.orders, &modelOrder{id: strings.TrimPrefix(p.Instance, "/v1/orders/"), status: "rejected"})
		return
	}
	if code != http.StatusCreated {
		m.t.Fatalf("checkout %s of %v = %d %s, want 201", key, m.cart, code, describe(b))
	}
	m.placed(key, b)
}

// declinedType is the problem type of a declined card.
const declinedType = "https://shop.example/problems/payment-declined"

// checkoutAtOnce sends several checkouts of the cart at once, each with
// its own key: as if one after another, one of them orders the cart and
// the others find it empty. A race shows only now and then, so the
// customer fills the cart again with the same lines and races again, a
// few times: the step then fails whenever the race is lost, which keeps a
// failing sequence reproducible while rapid shrinks it.
func (m *shopModel) checkoutAtOnce(t *rapid.T) {
	m.steps++
	n := rapid.IntRange(2, 8).Draw(t, "at once")
	lines := maps.Clone(m.cart)
	for race := range 5 {
		if race > 0 {
			if len(lines) == 0 {
				return
			}
			for p, q := range lines {
				m.s.must("PUT", "/v1/cart/items/"+p, m.customer, map[string]int{"quantity": q}, nil, http.StatusOK, nil)
				m.cart[p] = q
			}
		}
		m.raceCheckouts(n)
	}
}

func (m *shopModel) raceCheckouts(n int) {
	keys := make([]string, n)
	codes := make([]int, n)
	bodies := make([][]byte, n)
	errs := make([]error, n)
	for i := range keys {
		keys[i] = m.freshKey()
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			codes[i], bodies[i], errs[i] = httpDo(m.s.client, "POST", m.s.URL+"/v1/checkout", m.customer, addressBody,
				map[string]string{"Idempotency-Key": keys[i]})
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			m.t.Fatalf("checkout %s: %v", keys[i], errs[i])
		}
		codes[i], bodies[i] = m.final(keys[i], addressBody, codes[i], bodies[i])
		if codes[i] == http.StatusCreated {
			created++
		}
	}
	if short := m.shortages(); len(short) > 0 && created != 0 {
		m.t.Logf("%d checkouts at once of the cart %v, stock %v: %v", n, m.cart, m.stock, codes)
		m.t.Fatalf("checkouts at once of the cart %v that the stock cannot serve: one answered 201", m.cart)
	}
	if len(m.cart) > 0 && len(m.shortages()) == 0 && created != 1 {
		// The counts vary from run to run: logged, not in the failure,
		// which rapid compares across runs while it shrinks.
		m.t.Logf("%d checkouts at once of the cart %v: %v", n, m.cart, codes)
		m.t.Fatalf("checkouts at once of the cart %v: %s", m.cart, map[bool]string{true: "more than one answered 201", false: "none answered 201"}[created > 1])
	}
	// The one that ordered first, then the others against the empty cart.
	for i := range n {
		if codes[i] == http.StatusCreated {
			m.checkoutAnswer(keys[i], codes[i], bodies[i])
		}
	}
	for i := range n {
		if codes[i] != http.StatusCreated {
			m.checkoutAnswer(keys[i], codes[i], bodies[i])
		}
	}
}

func (m *shopModel) replay(t *rapid.T) {
	if len(m.keys) == 0 {
		t.Skip("no checkout to replay")
	}
	m.steps++
	key := rapid.SampledFrom(m.keys).Draw(t, "key")
	body, ok := m.bodies[key]
	if !ok {
		body = addressBody
	}
	var o liveOrder
	m.s.must("POST", "/v1/checkout", m.customer, body, map[string]string{"Idempotency-Key": key}, http.StatusCreated, &o)
	m.compareOrder("replay of "+key, o, m.byKey[key])
}

func (m *shopModel) replayOther(t *rapid.T) {
	if len(m.keys) == 0 {
		t.Skip("no checkout to replay")
	}
	m.steps++
	key := rapid.SampledFrom(m.keys).Draw(t, "key")
	other := map[string]any{"paymentMethod": "pm_card_visa", "shippingAddress": map[string]any{"name": "Someone Else", "line1": "2 Other Rd",
		"city": "Paris", "postalCode": "75001", "country": "FR"}}
	m.s.must("POST", "/v1/checkout", m.customer, other, map[string]string{"Idempotency-Key": key}, http.StatusUnprocessableEntity, nil)
}

func (m *shopModel) cancel(t *rapid.T) {
	if len(m.orders) == 0 {
		t.Skip("no order to cancel")
	}
	m.steps++
	o := rapid.SampledFrom(m.orders).Draw(t, "order")
	if o.status != "placed" && o.status != "shipped" {
		m.s.must("POST", "/v1/orders/"+o.id+"/cancel", m.customer, nil, nil, http.StatusConflict, nil)
		return
	}
	var got liveOrder
	m.s.must("POST", "/v1/orders/"+o.id+"/cancel", m.customer, nil, nil, http.StatusOK, &got)
	o.status = "cancelled"
	for p, q := range o.lines {
		m.stock[p] += int64(q)
	}
	m.compareOrder("cancel", got, o)
}

// ship is the admin's shipment of an order: a placed one is shipped (its
// authorization captured), any other is 409.
func (m *shopModel) ship(t *rapid.T) {
	if len(m.orders) == 0 {
		t.Skip("no order to ship")
	}
	m.steps++
	o := rapid.SampledFrom(m.orders).Draw(t, "order")
	path := "/v1/admin/orders/model-customer/" + o.id
	body := map[string]string{"status": "shipped"}
	if o.status != "placed" {
		m.s.must("PATCH", path, m.admin, body, nil, http.StatusConflict, nil)
		return
	}
	var got liveOrder
	m.s.must("PATCH", path, m.admin, body, nil, http.StatusOK, &got)
	o.status = "shipped"
	m.compareOrder("ship", got, o)
}

// changePrice is the admin's price change; it returns once the feed has
// carried it to the cart, so the model's cart shows the new price.
func (m *shopModel) changePrice(t *rapid.T) {
	m.steps++
	p := m.product(t)
	cents := rapid.Int64Range(100, 9999).Draw(t, "priceCents")
	var got liveProduct
	m.s.must("PATCH", "/v1/products/"+p, m.admin, map[string]int64{"priceCents": cents},
		map[string]string{"Content-Type": "application/merge-patch+json"}, http.StatusOK, &got)
	if cents != m.price[p] {
		m.price[p] = cents
		m.priceVersion[p]++
	}
	if got.PriceCents != m.price[p] || got.PriceVersion != m.priceVersion[p] {
		m.t.Fatalf("PATCH %s price %d: %d cents priceVersion %d, model %d priceVersion %d",
			p, cents, got.PriceCents, got.PriceVersion, m.price[p], m.priceVersion[p])
	}
	m.feed(t)
}

// restock is the admin's count of a product: few units, so checkouts
// run out.
func (m *shopModel) restock(t *rapid.T) {
	m.steps++
	p := m.product(t)
	n := rapid.Int64Range(0, 120).Draw(t, "available")
	var got struct{ Available int64 }
	m.s.must("PUT", "/v1/admin/products/"+p+"/stock", m.admin, map[string]int64{"available": n}, nil, http.StatusOK, &got)
	if got.Available != n {
		m.t.Fatalf("PUT stock of %s to %d answered %d", p, n, got.Available)
	}
	m.stock[p] = n
}

// feed waits until the workers have caught up and the cart shows every
// product's current copies, and each product page the status of its
// units available.
func (m *shopModel) feed(*rapid.T) {
	m.steps++
	if stale := m.s.awaitConverged(m.users, 10*time.Second); len(stale) > 0 {
		m.t.Fatalf("the feed did not converge: %v", stale)
	}
	// The feed's lag is the one its last poll saw, so a stock count made
	// just now may not show in it yet: the product page's status is
	// waited for, up to the same bound.
	for _, p := range m.products {
		want := domain.StatusOf(m.stock[p])
		var v struct{ Availability struct{ Status string } }
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			m.s.must("GET", "/v1/products/"+p, "", nil, nil, http.StatusOK, &v)
			if v.Availability.Status == want || time.Now().After(deadline) {
				break
			}
		}
		if v.Availability.Status != want {
			m.t.Fatalf("product %s 10 s after the feed: availability %q, model %q (%d units)", p, v.Availability.Status, want, m.stock[p])
		}
	}
	m.checkMoney()
}

// checkMoney checks the workflow's invariants over the whole shop
// (writestest.Check) once the feeds have caught up: every order's money
// and units match its state, and each product's units add up to what
// the model stocked (available + those of the orders that sold them).
func (m *shopModel) checkMoney() {
	stocked := map[string]int64{}
	for _, p := range m.products {
		stocked[p] = m.stock[p]
	}
	for _, o := range m.orders {
		if o.status == "placed" || o.status == "shipped" {
			for p, q := range o.lines {
				stocked[p] += int64(q)
			}
		}
	}
	// The feeds may still be retrying an effect the provider's faults
	// failed: wait until it shows, up to the feed's bound.
	var bad []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if bad, err = writestest.Check(context.Background(), m.s.raw, m.s.pay, stocked); err != nil {
			m.t.Fatalf("money check: %v", err)
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(bad) > 0 {
		m.t.Fatalf("the workflow's invariants, 10 s after the feeds caught up: %s", strings.Join(bad, "; "))
	}
}

func (m *shopModel) restart(*rapid.T) {
	m.steps++
	m.s.restart()
}

// check compares the cart, the stock, the summary and the order history
// with the model after every step.
func (m *shopModel) check(*rapid.T) {
	for _, p := range m.products {
		if got := m.s.stockOf(p); got != m.stock[p] {
			m.t.Fatalf("stock of %s: %d available, model %d", p, got, m.stock[p])
		}
	}
	var c liveCart
	m.s.must("GET", "/v1/cart", m.customer, nil, nil, http.StatusOK, &c)
	got := map[string]int{}
	count, subtotal := 0, int64(0)
	for _, l := range c.Items {
		got[l.ProductID] = l.Quantity
		if l.Name != m.name[l.ProductID] || l.UnitPriceCents != m.price[l.ProductID] || l.PriceVersion != m.priceVersion[l.ProductID] || !l.Available {
			m.t.Fatalf("cart line %s: %q %d cents priceVersion %d available %v; model: %q %d cents priceVersion %d",
				l.ProductID, l.Name, l.UnitPriceCents, l.PriceVersion, l.Available, m.name[l.ProductID], m.price[l.ProductID], m.priceVersion[l.ProductID])
		}
		if l.LineTotalCents != int64(l.Quantity)*l.UnitPriceCents {
			m.t.Fatalf("cart line %s: %d × %d ≠ %d", l.ProductID, l.Quantity, l.UnitPriceCents, l.LineTotalCents)
		}
		count += l.Quantity
		subtotal += l.LineTotalCents
	}
	if !maps.Equal(got, m.cart) || c.ItemCount != count || c.SubtotalCents != subtotal {
		m.t.Fatalf("cart %v itemCount %d subtotal %d; model %v", got, c.ItemCount, c.SubtotalCents, m.cart)
	}

	var sum liveSummary
	m.s.must("GET", "/v1/me/summary", m.customer, nil, nil, http.StatusOK, &sum)
	want := liveSummary{}
	for _, o := range m.orders {
		if o.status == "placed" || o.status == "shipped" {
			want.TotalOrders++
			want.TotalSpentCents += o.total
		}
	}
	if sum != want {
		m.t.Fatalf("summary %+v, model %+v", sum, want)
	}

	var page struct {
		Items []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"items"`
	}
	m.s.must("GET", "/v1/orders?limit=100", m.customer, nil, nil, http.StatusOK, &page)
	history := map[string]string{}
	for _, it := range page.Items {
		history[it.ID] = it.Status
	}
	model := map[string]string{}
	for _, o := range m.orders {
		model[o.id] = o.status
	}
	if !maps.Equal(history, model) {
		m.t.Logf("order history %v, model %v", history, model)
		m.t.Fatalf("order history: %v by status, model %v", countValues(history), countValues(model))
	}
}

func countValues(m map[string]string) map[string]int {
	n := map[string]int{}
	for _, v := range m {
		n[v]++
	}
	return n
}
