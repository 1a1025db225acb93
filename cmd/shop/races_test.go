package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/store/faults"
)

// TestConcurrentCheckoutsOfOneCartMakeOneOrder: a user with two lines in
// the cart sends several checkouts at once, each with its own
// Idempotency-Key (several tabs, or a client retrying with fresh keys).
// The answer must be what running them one after another gives: exactly
// one 201, a 409 "the cart is empty" for every other, one order in the
// history and in /v1/me/summary, holding the two lines.
func TestConcurrentCheckoutsOfOneCartMakeOneOrder(t *testing.T) {
	for _, tc := range []struct {
		name               string
		at, rounds, lRound int
	}{
		{"10 at once", 10, 20, 100},
		{"2 tabs", 2, 30, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rounds := tc.rounds
			if longRun() {
				rounds = tc.lRound
			}
			s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
			products := createCatalog(t, s.URL, 2)
			var failed []string
			orders := 0
			for round := range rounds {
				user := fmt.Sprintf("tabs%d-%03d", tc.at, round)
				if bad := checkoutRound(t, s, user, products, tc.at); bad != "" {
					failed = append(failed, fmt.Sprintf("round %d: %s", round, bad))
				}
				orders += countOrders(t, s, testToken(t, user, false))
			}
			t.Logf("%d rounds of %d concurrent checkouts of a 2-line cart: %d rounds wrong, %d orders in all (want %d)",
				rounds, tc.at, len(failed), orders, rounds)
			if len(failed) > 0 {
				t.Errorf("%d of %d rounds were not as if run one after another:\n%s", len(failed), rounds, strings.Join(failed, "\n"))
			}
		})
	}
}

// checkoutRound fills user's cart with two lines, sends n checkouts at
// once and describes what went wrong ("" when the round is right).
func checkoutRound(t *testing.T, s *liveShop, user string, products []string, n int) string {
	t.Helper()
	tok := testToken(t, user, false)
	s.must("PUT", "/v1/cart/items/"+products[0], tok, map[string]int{"quantity": 2}, nil, http.StatusOK, nil)
	s.must("PUT", "/v1/cart/items/"+products[1], tok, map[string]int{"quantity": 1}, nil, http.StatusOK, nil)

	type answer struct {
		code int
		body []byte
		err  error
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			code, b, err := httpDo(s.client, "POST", s.URL+"/v1/checkout", tok, addressBody,
				map[string]string{"Idempotency-Key": fmt.Sprintf("%s-tab-%d", user, i)})
			answers[i] = answer{code, b, err}
		})
	}
	close(start)
	wg.Wait()

	var problems []string
	created, empty := 0, 0
	for i, a := range answers {
		var p liveProblem
		switch {
		case a.err != nil:
			problems = append(problems, fmt.Sprintf("checkout %d: %v", i, a.err))
		case a.code == http.StatusCreated:
			created++
			var o liveOrder
			if err := json.Unmarshal(a.body, &o); err != nil || len(o.Items) != 2 {
				problems = append(problems, fmt.Sprintf("checkout %d: 201 with %s, want the two lines", i, describe(a.body)))
			}
		case a.code == http.StatusConflict && json.Unmarshal(a.body, &p) == nil && p.Detail == "the cart is empty":
			empty++
		default:
			problems = append(problems, fmt.Sprintf("checkout %d: %d %s, want 201 or 409 the cart is empty", i, a.code, describe(a.body)))
		}
	}
	var sum liveSummary
	s.must("GET", "/v1/me/summary", tok, nil, nil, http.StatusOK, &sum)
	history := countOrders(t, s, tok)
	if created != 1 || empty != n-1 || sum.TotalOrders != 1 || history != 1 {
		problems = append([]string{fmt.Sprintf("%d × 201, %d × 409 empty; summary totalOrders %d; %d orders in the history",
			created, empty, sum.TotalOrders, history)}, problems...)
	}
	return strings.Join(problems, "; ")
}

// countOrders is the number of orders in the caller's history.
func countOrders(t *testing.T, s *liveShop, tok string) int {
	t.Helper()
	var page struct {
		Items []struct{ ID string } `json:"items"`
	}
	s.must("GET", "/v1/orders?limit=100", tok, nil, nil, http.StatusOK, &page)
	return len(page.Items)
}

// TestCartWritesRacingAPriceChangeConverge: a shopper keeps setting
// quantities in parallel, half of them on product P and the rest on other
// products, while an admin raises P's price; the writes stop shortly
// after. Once they have stopped and the change-feed workers have caught
// up, every open cart line must carry its product's current name, price,
// priceVersion and availability, and a checkout must charge the current
// price: a cart write that read P before the change must not pin the old
// price for good. Each trial is one shopper with a product P of its own,
// so no trial's price change can repair another's cart; several trials
// run at once, as several shoppers would.
func TestCartWritesRacingAPriceChangeConverge(t *testing.T) {
	trials := 10
	if longRun() {
		trials = 100
	}
	const (
		writers     = 40
		atOnce      = 10
		afterChange = 300 * time.Millisecond
		// converge bounds the wait for the feed: it takes milliseconds.
		converge = 5 * time.Second
	)
	// A Cosmos write takes milliseconds, the embedded store's microseconds:
	// the cart writes get a Cosmos-like latency, so the writers contend on
	// the cart as they would on a real account. Nothing fails.
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), &faults.Config{
		Rules: []faults.Rule{{Containers: []string{"carts"}, Ops: []faults.Op{faults.OpReplace, faults.OpCreate}, Latency: time.Millisecond}}})
	others := createCatalog(t, s.URL, 3)
	admin := testToken(t, "boss", true)
	users := map[string]string{}
	var puts, refused atomic.Int64
	for trial := range trials {
		user := fmt.Sprintf("racer-%03d", trial)
		users[user] = testToken(t, user, false)
	}
	var wgTrials sync.WaitGroup
	sem := make(chan struct{}, atOnce)
	for trial := range trials {
		p := fmt.Sprintf("hot-%03d", trial)
		s.must("POST", "/v1/products", admin, map[string]any{
			"productId": p, "name": "Hot " + p, "priceCents": 1000, "categoryId": "tea", "stock": 1_000_000,
		}, nil, http.StatusCreated, nil)
		tok := users[fmt.Sprintf("racer-%03d", trial)]
		sem <- struct{}{}
		wgTrials.Go(func() {
			defer func() { <-sem }()
			var done atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range writers {
				product := p
				if w%2 == 1 {
					product = others[w/2%len(others)]
				}
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						code, b, err := httpDo(s.client, "PUT", s.URL+"/v1/cart/items/"+product, tok,
							map[string]int{"quantity": 1 + (w+i)%99}, nil)
						puts.Add(1)
						done.Add(1)
						if err != nil || code != http.StatusOK {
							refused.Add(1)
							t.Errorf("trial %d: PUT %s = %d %v %s", trial, product, code, err, describe(b))
							return
						}
					}
				})
			}
			// Mid-burst: once every writer has had a few writes answered.
			for deadline := time.Now().Add(10 * time.Second); done.Load() < int64(3*writers) && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			code, b, err := httpDo(s.client, "PATCH", s.URL+"/v1/products/"+p, admin, map[string]int64{"priceCents": 1500},
				map[string]string{"Content-Type": "application/merge-patch+json"})
			if err != nil || code != http.StatusOK {
				t.Errorf("trial %d: PATCH %s = %d %v %s", trial, p, code, err, describe(b))
			}
			time.Sleep(afterChange) // the length of the burst after the change, not a synchronization
			close(stop)
			wg.Wait()
		})
	}
	wgTrials.Wait()

	stale := s.awaitConverged(users, converge)
	staleCarts := map[string]bool{}
	for _, l := range stale {
		if user, _, ok := strings.Cut(l, "'s line"); ok {
			staleCarts[user] = true
		}
	}
	// What a checkout now charges: the price of the line is the product's.
	overcharged := 0
	for _, user := range slices.Sorted(maps.Keys(users)) {
		var o liveOrder
		s.must("POST", "/v1/checkout", users[user], addressBody, map[string]string{"Idempotency-Key": user + "-after"}, http.StatusCreated, &o)
		for _, l := range o.Items {
			if p := s.product(l.ProductID); l.UnitPriceCents != p.PriceCents {
				overcharged++
				t.Errorf("%s's checkout charged %s at %d cents, its price is %d", user, l.ProductID, l.UnitPriceCents, p.PriceCents)
			}
		}
	}
	t.Logf("%d trials × %d writers (%d PUTs, %d refused), one price change each: %d carts stale %v after the writes stopped, %d checkout lines at another price than the product's",
		trials, writers, puts.Load(), refused.Load(), len(staleCarts), converge, overcharged)
	if len(stale) > 0 {
		t.Errorf("%d of %d carts never took the current product copies:\n%s", len(staleCarts), trials, strings.Join(stale, "\n"))
	}
}
