package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store/faults"
)

const outOfStockType = "https://shop.example/problems/out-of-stock"

// saleProblem is a problem answer as the flash sale reads it.
type saleProblem struct {
	Type   string            `json:"type"`
	Status int               `json:"status"`
	Detail string            `json:"detail"`
	Items  []domain.Shortage `json:"items"`
}

// saleAnswer is how one buyer's checkout ended.
type saleAnswer struct {
	user, key string
	code      int
	body      []byte
	charge    float64 // X-Request-Charge of the last answer
	retries   int     // 503s (and checkouts called off) retried with the same key
	err       error
}

// retryable says whether a buyer sends the same request again: a 503 (the
// store was throttled, unavailable or slow), or a 409 that is neither the
// stock's refusal nor an empty cart (a checkout called off because it took
// too long, or one still in progress).
func retryable(code int, body []byte) bool {
	if code == http.StatusServiceUnavailable {
		return true
	}
	var p saleProblem
	return code == http.StatusConflict && json.Unmarshal(body, &p) == nil &&
		p.Type != outOfStockType && p.Detail != "the cart is empty"
}

// buyOne is one buyer: one unit of productID in the cart, then one
// checkout under key, each retried (same key) while the answer is
// retryable, up to a bound.
func buyOne(s *liveShop, user, productID, key string) saleAnswer {
	a := saleAnswer{user: user, key: key}
	tok := liveToken(s.t, user, false)
	for try := 0; ; try++ {
		code, b, err := httpDo(s.client, "PUT", s.URL+"/v1/cart/items/"+productID, tok, map[string]int{"quantity": 1}, nil)
		if err != nil {
			a.err = err
			return a
		}
		if code == http.StatusOK {
			break
		}
		if !retryable(code, b) || try == 50 {
			a.code, a.body = code, b
			a.err = fmt.Errorf("cart PUT = %d %s", code, describe(b))
			return a
		}
		time.Sleep(10 * time.Millisecond)
	}
	return checkoutRetrying(s, tok, a)
}

// checkoutRetrying posts the checkout of a.key, through the generated
// client as a Go caller would, until its answer is not retryable. A 202
// (the order still in progress past the checkout's bound, as a loaded
// machine makes it) is asked again with the same key, which answers the
// order as it is then, carrying it on.
func checkoutRetrying(s *liveShop, tok string, a saleAnswer) saleAnswer {
	api, err := client.NewClientWithResponses(s.URL, client.WithHTTPClient(s.client))
	if err != nil {
		a.err = err
		return a
	}
	body := client.CheckoutRequest{PaymentMethod: "pm_card_visa", ShippingAddress: client.Address{
		Name: "Ada Lovelace", Line1: "1 Analytical St", City: "London", PostalCode: "N1 9GU", Country: "GB"}}
	for try := 0; ; try++ {
		r, err := api.CheckoutWithResponse(context.Background(), &client.CheckoutParams{IdempotencyKey: a.key}, body, client.Bearer(tok))
		if a.err = err; err == nil {
			a.code, a.body = r.StatusCode(), r.Body
			cost, _ := client.CostOf(r.HTTPResponse)
			a.charge = cost.RequestUnits
		}
		if a.err != nil || (a.code != http.StatusAccepted && !retryable(a.code, a.body)) || try == 50 {
			return a
		}
		a.retries++
		time.Sleep(time.Duration(5+try*5) * time.Millisecond)
	}
}

// saleResult is a flash sale's answers, counted.
type saleResult struct {
	answers            []saleAnswer
	created, refused   int
	unexpected         []string
	orderIDs           map[string]bool
	retries            int
	ruCreated, ruAll   float64
	elapsed            time.Duration
	checkoutsPerSecond float64
}

// flashSale has buyers distinct users each buy one unit of productID at
// once, and counts the answers: 201, or 409 out-of-stock naming exactly
// the product, 1 requested and fewer available.
func flashSale(t *testing.T, s *liveShop, productID string, buyers int, prefix string) saleResult {
	t.Helper()
	r := saleResult{answers: make([]saleAnswer, buyers), orderIDs: map[string]bool{}}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() {
			<-start
			user := fmt.Sprintf("%s-%04d", prefix, i)
			r.answers[i] = buyOne(s, user, productID, user+"-k1")
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	r.elapsed = time.Since(began)
	r.checkoutsPerSecond = float64(buyers) / r.elapsed.Seconds()
	for _, a := range r.answers {
		r.count(a, productID)
	}
	return r
}

// count adds one answer to the result.
func (r *saleResult) count(a saleAnswer, productID string) {
	r.retries += a.retries
	r.ruAll += a.charge
	switch {
	case a.err != nil:
		r.unexpected = append(r.unexpected, fmt.Sprintf("%s: %v", a.user, a.err))
	case a.code == http.StatusCreated:
		var o liveOrder
		if err := json.Unmarshal(a.body, &o); err != nil || len(o.Items) != 1 || o.Items[0].ProductID != productID || o.Items[0].Quantity != 1 {
			r.unexpected = append(r.unexpected, fmt.Sprintf("%s: 201 %s, want one unit of %s", a.user, describe(a.body), productID))
			return
		}
		if r.orderIDs[o.ID] {
			r.unexpected = append(r.unexpected, fmt.Sprintf("%s: order %s answered twice", a.user, o.ID))
		}
		r.orderIDs[o.ID] = true
		r.created++
		r.ruCreated += a.charge
	case a.code == http.StatusConflict:
		var p saleProblem
		if err := json.Unmarshal(a.body, &p); err != nil || p.Type != outOfStockType || len(p.Items) != 1 ||
			p.Items[0].ProductID != productID || p.Items[0].Requested != 1 || p.Items[0].Available >= 1 || p.Items[0].Available < 0 {
			r.unexpected = append(r.unexpected, fmt.Sprintf("%s: 409 %s, want out-of-stock naming %s, 1 requested, 0 available", a.user, describe(a.body), productID))
			return
		}
		r.refused++
	default:
		r.unexpected = append(r.unexpected, fmt.Sprintf("%s: %d %s", a.user, a.code, describe(a.body)))
	}
}

// saleProduct creates the category and one product with units in stock.
func saleProduct(s *liveShop, id string, units int64) {
	admin := liveToken(s.t, "boss", true)
	s.must("PUT", "/v1/categories/sale", admin, map[string]string{"name": "Sale"}, nil, http.StatusCreated, nil)
	s.must("POST", "/v1/products", admin, map[string]any{
		"productId": id, "name": "Flash " + id, "priceCents": 999, "categoryId": "sale", "stock": units,
	}, nil, http.StatusCreated, nil)
}

// stockOf is the admin's count of the product.
func (s *liveShop) stockOf(id string) int64 {
	s.t.Helper()
	var st struct{ Available int64 }
	s.must("GET", "/v1/admin/products/"+id+"/stock", liveToken(s.t, "boss", true), nil, nil, http.StatusOK, &st)
	return st.Available
}

// ledger reads the product's ledger from the shop's store.
func (s *liveShop) ledger(id string) ledger {
	s.t.Helper()
	l, err := readLedger(context.Background(), s.raw, id)
	if err != nil {
		s.t.Fatalf("ledger of %s: %v", id, err)
	}
	return l
}

// awaitLedger polls the ledger until ok says it is settled, or timeout.
func (s *liveShop) awaitLedger(id string, timeout time.Duration, ok func(ledger) bool) ledger {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := s.ledger(id)
		if ok(l) || time.Now().After(deadline) {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// saleSize is the buyers and units of a flash sale: the default run's, or
// with SHOP_LONG=1 the long run's.
func saleSize(buyers, units, longBuyers, longUnits int) (int, int) {
	if longRun() {
		return longBuyers, longUnits
	}
	return buyers, units
}

// TestFlashSaleNeverOversells: buyers (distinct users) each put one unit
// of a product with fewer units in the cart and check out at once, over
// real HTTP with the feed workers running. Exactly units checkouts answer
// 201 and the rest 409 out-of-stock naming the product; the stock ends at
// 0; for the product, units in placed orders + available + units held by
// unfinished checkouts = the initial stock; once the orders feed has run
// every reservation is committed (none held).
func TestFlashSaleNeverOversells(t *testing.T) {
	buyers, units := saleSize(500, 100, 2000, 400)
	if raceDetector && !longRun() {
		// 500 buyers at once take 3 to 16 s under -race on 2 cores (1 s
		// without): the CI run is 200 for 40, the same race.
		buyers, units = 200, 40
	}
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
	const id = "flash-1"
	saleProduct(s, id, int64(units))

	r := flashSale(t, s, id, buyers, "buyer")
	if len(r.unexpected) > 0 {
		t.Errorf("%d unexpected answers:\n%s", len(r.unexpected), strings.Join(r.unexpected[:min(10, len(r.unexpected))], "\n"))
	}
	if r.created != units || r.refused != buyers-units {
		t.Errorf("%d × 201 and %d × 409 out-of-stock, want %d and %d", r.created, r.refused, units, buyers-units)
	}
	if got := s.stockOf(id); got != 0 {
		t.Errorf("stock available after the sale = %d, want 0", got)
	}
	l := s.ledger(id)
	if !l.balances(int64(units)) || len(l.Wrong) > 0 || l.Unfinished != 0 {
		t.Errorf("after the sale: %s; want sold + available + unfinished = %d, nothing unfinished: %v", l, units, l.Wrong)
	}
	if l.Orders != units {
		t.Errorf("%d placed orders hold the product, want %d", l.Orders, units)
	}
	// The orders feed commits every reservation of a placed order.
	l = s.awaitLedger(id, 10*time.Second, func(l ledger) bool { return l.Held == 0 })
	if l.Held != 0 || !l.balances(int64(units)) {
		t.Errorf("10 s after the sale: %s; want no reservation held", l)
	}
	t.Logf("flash sale: %d buyers for %d units in %v: %.0f checkouts/s; %d × 201, %d × 409 out-of-stock (conflict rate %.2f); %.2f RU per successful checkout, %.2f RU per refused one (X-Request-Charge); %s",
		buyers, units, r.elapsed.Round(time.Millisecond), r.checkoutsPerSecond, r.created, r.refused,
		float64(r.refused)/float64(buyers), r.ruCreated/float64(max(r.created, 1)),
		(r.ruAll-r.ruCreated)/float64(max(r.refused, 1)), l)
}

// TestFlashSaleThroughStoreFaults is the flash sale on a store throttling,
// failing and timing out a few percent of every container's calls, the
// feed workers' and the sweeper's included, with the sweeper's timings
// shortened. Buyers retry a 503 with the same Idempotency-Key. Then the
// faults heal; once the sweeper has run no unit is held, the equation
// holds, and the buyers refused while units were held by failed
// checkouts come back (each with a new key) while stock remains: exactly
// min(buyers, units) orders exist and available + sold = units.
func TestFlashSaleThroughStoreFaults(t *testing.T) {
	buyers, units := saleSize(150, 100, 500, 100)
	fc := &faults.Config{Seed: 7, TimeoutAfter: 50 * time.Millisecond, RetryAfter: 20 * time.Millisecond, Disabled: true,
		Rules: []faults.Rule{{Throttle: 0.02, Unavailable: 0.02, Timeout: 0.01}}}
	wc := liveWorkers
	wc.Sweeper = feedworkers.Sweeper{Every: 100 * time.Millisecond, Stall: 500 * time.Millisecond}
	s := newLiveShopWith(t, filepath.Join(t.TempDir(), "shop.db"), fc, wc)
	const id = "flash-f"
	saleProduct(s, id, int64(units))

	s.faults.Break()
	r := flashSale(t, s, id, buyers, "fbuyer")
	counts := s.faults.Counts()
	s.faults.Heal()
	if len(r.unexpected) > 0 {
		t.Errorf("%d unexpected answers:\n%s", len(r.unexpected), strings.Join(r.unexpected[:min(10, len(r.unexpected))], "\n"))
	}
	if r.created > units {
		t.Errorf("%d × 201 for %d units", r.created, units)
	}
	if counts.Injected() == 0 {
		t.Fatal("no fault was injected: the test proves nothing")
	}

	// Healed: within the sweeper's bound (Stall + Every, and a margin for
	// the feed) nothing is held, and the equation holds.
	bound := wc.Sweeper.Stall + wc.Sweeper.Every
	l := s.awaitLedger(id, bound+10*time.Second, func(l ledger) bool { return l.Held == 0 && s.feedLag() == "" })
	if l.Held != 0 || !l.balances(int64(units)) || len(l.Wrong) > 0 {
		t.Fatalf("healed, %v after the sale: %s; want none held, sold + available = %d: %v", bound+10*time.Second, l, units, l.Wrong)
	}
	firstWave := r.created

	// The refused come back while there is stock: a few passes, since a
	// unit a failed checkout held may come back (the sweeper) while a pass
	// runs; each comeback has a key of its own.
	for pass := 2; pass <= 4 && s.stockOf(id) > 0; pass++ {
		for i, a := range r.answers {
			if a.code != http.StatusConflict || s.stockOf(id) == 0 {
				continue
			}
			b := checkoutRetrying(s, liveToken(t, a.user, false), saleAnswer{user: a.user, key: fmt.Sprintf("%s-k%d", a.user, pass)})
			r.count(b, id)
			r.answers[i] = b
		}
		l = s.awaitLedger(id, 10*time.Second, func(l ledger) bool { return l.Held == 0 && s.feedLag() == "" })
	}
	want := min(buyers, units)
	if l.Orders != want || len(r.orderIDs) != want || l.Sold+l.Available != int64(units) || l.Held != 0 || len(l.Wrong) > 0 {
		t.Errorf("after the faults healed and the refused came back: %d orders answered, %s; want %d orders, available + sold = %d, none held: %v",
			len(r.orderIDs), l, want, units, l.Wrong)
	}
	if got, want := s.stockOf(id), int64(units-want); got != want {
		t.Errorf("stock available = %d, want %d", got, want)
	}
	t.Logf("flash sale through faults: %d buyers for %d units in %v; %d store calls under faults, %d failed (%d throttled, %d unavailable, %d timed out); %d retries with the same key; %d orders in the first wave, %d after the refused came back; %s",
		buyers, units, r.elapsed.Round(time.Millisecond), counts.Calls, counts.Injected(), counts.Throttled, counts.Unavailable, counts.TimedOut,
		r.retries, firstWave, len(r.orderIDs), l)
}
