package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

var long = flag.Bool("long", false, "run the long reliability tests (also SHOP_LONG=1)")

func longRun() bool { return *long || os.Getenv("SHOP_LONG") == "1" }

// cartDoc and orderDoc are the parts of the API's cart and order the
// invariants look at.
type cartDoc struct {
	Items []struct {
		ProductID      string
		UnitPriceCents int64
		PriceVersion   int64
		Quantity       int
		LineTotalCents int64
		Available      bool
	}
	ItemCount     int
	SubtotalCents int64
}

type orderDoc struct {
	ID    string
	Items []struct {
		ProductID      string
		UnitPriceCents int64
		Quantity       int
		LineTotalCents int64
	}
	ItemCount  int
	TotalCents int64
}

// tally counts what a run tried and what held.
type tally struct {
	ops, ok2xx, refused4xx, unexpected, orders, replays, priceChanges, retries atomic.Int64
}

// TestInvariantsUnderConcurrency: many users over real HTTP against the
// in-process server, the feed workers running and an admin changing
// prices all along. Each user is a sequential client with a model of its
// own cart; at the end every add-to-cart that got a 2xx is in its cart
// (unless removed or checked out since), no quantity is out of 1..99,
// each order's total is the sum of quantity × price paid, each
// Idempotency-Key produced at most one order, and the feed lag returns to
// 0 with every cart line at its product's latest price.
func TestInvariantsUnderConcurrency(t *testing.T) {
	users, opsPerUser := 20, 30
	if longRun() {
		users, opsPerUser = 50, 400
	}
	checkInvariants(t, users, opsPerUser, nil)
}

// TestInvariantsUnderStoreFaults is the same run on a store failing 5% of
// its calls (throttled or unavailable), the feed workers' included. The
// clients retry each 503 as a well-behaved client does, with the same
// Idempotency-Key for a checkout; the promises are the same.
func TestInvariantsUnderStoreFaults(t *testing.T) {
	users, opsPerUser := 10, 30
	if longRun() {
		users, opsPerUser = 30, 300
	}
	checkInvariants(t, users, opsPerUser, &faults.Config{Seed: 5, Disabled: true,
		Rules: []faults.Rule{{Throttle: 0.025, Unavailable: 0.025}}, RetryAfter: time.Millisecond})
}

// checkInvariants runs users × opsPerUser operations and checks the
// promises; with fc set, the server and the feed workers run on a store
// injecting its faults (switched on once the catalog exists, off for the
// final checks).
func checkInvariants(t *testing.T, users, opsPerUser int, fc *faults.Config) {
	ctx := t.Context()
	raw, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	if err := migrations.Apply(ctx, raw, io.Discard); err != nil {
		t.Fatal(err)
	}
	var st store.Store = raw
	var fs *faults.Store
	if fc != nil {
		fs = faults.Wrap(raw, *fc)
		st = fs
	}
	pay := paymentstest.Embedded(t)
	wk, err := feedworkers.Start(ctx, st, writes.New(repo.New(store.Metered(st), 0), pay, nil), feedworkers.Config{Processor: changefeed.Config{Instance: "inv", PollEvery: 5 * time.Millisecond,
		Backoff: time.Millisecond, LeaseExpiry: 2 * time.Second, RenewEvery: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wk.Stop(context.Background()) })
	srv := httptest.NewServer(api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), pay, nil), Store: st, Secret: []byte(testJWTSecret), Feeds: wk}))
	t.Cleanup(srv.Close)
	products := createCatalog(t, srv.URL, 8)
	if fs != nil {
		fs.Break()
	}

	var n tally
	stop := make(chan struct{})
	var admin sync.WaitGroup
	admin.Add(1)
	go func() {
		defer admin.Done()
		tok := testToken(t, "boss", true)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			code, _, err := httpDo(http.DefaultClient, "PATCH", srv.URL+"/v1/products/"+products[i%len(products)], tok,
				map[string]int{"priceCents": 700 + i}, map[string]string{"Content-Type": "application/merge-patch+json"})
			if err == nil && code == http.StatusOK {
				n.priceChanges.Add(1)
			}
		}
	}()

	type placed struct {
		user, key string
		order     orderDoc
		want      map[string]int // the cart the order was made from
	}
	var (
		mu     sync.Mutex
		orders []placed
		models = map[string]map[string]int{}
	)
	var clients sync.WaitGroup
	for u := range users {
		clients.Add(1)
		go func() {
			defer clients.Done()
			user := fmt.Sprintf("shopper-%03d", u)
			tok := testToken(t, user, false)
			rng := rand.New(rand.NewPCG(uint64(u), 42))
			model := map[string]int{}
			do := func(method, path string, body any, header map[string]string, want ...int) []byte {
				n.ops.Add(1)
				code, b, err := httpDo(http.DefaultClient, method, srv.URL+path, tok, body, header)
				for try := 0; err == nil && code == http.StatusServiceUnavailable && try < 100; try++ {
					n.retries.Add(1)
					code, b, err = httpDo(http.DefaultClient, method, srv.URL+path, tok, body, header)
				}
				if err != nil {
					t.Errorf("%s %s %s: %v", user, method, path, err)
					return nil
				}
				switch {
				case code < 300:
					n.ok2xx.Add(1)
				case code < 500:
					n.refused4xx.Add(1)
				}
				for _, w := range want {
					if code == w {
						return b
					}
				}
				n.unexpected.Add(1)
				t.Errorf("%s %s %s = %d, want %v: %s", user, method, path, code, want, b)
				return nil
			}
			lastKey, lastBody := "", map[string]any(nil)
			for op := range opsPerUser {
				p := products[rng.IntN(len(products))]
				switch r := rng.IntN(100); {
				case r < 45:
					q := 1 + rng.IntN(99)
					if do("PUT", "/v1/cart/items/"+p, map[string]int{"quantity": q}, nil, http.StatusOK) != nil {
						model[p] = q
					}
				case r < 50:
					// Out of bounds: refused, the cart unchanged.
					do("PUT", "/v1/cart/items/"+p, map[string]int{"quantity": []int{0, 100, -1}[rng.IntN(3)]}, nil, http.StatusBadRequest)
				case r < 60:
					if do("DELETE", "/v1/cart/items/"+p, nil, nil, http.StatusOK) != nil {
						delete(model, p)
					}
				case r < 70:
					var c cartDoc
					if b := do("GET", "/v1/cart", nil, nil, http.StatusOK); b != nil && json.Unmarshal(b, &c) == nil {
						checkCart(t, user, c, model)
					}
				case r < 90:
					key := fmt.Sprintf("%s-%d", user, op)
					if len(model) == 0 {
						do("POST", "/v1/checkout", addressBody, map[string]string{"Idempotency-Key": key}, http.StatusConflict)
						continue
					}
					b := do("POST", "/v1/checkout", addressBody, map[string]string{"Idempotency-Key": key}, http.StatusCreated)
					var o orderDoc
					if b == nil || json.Unmarshal(b, &o) != nil {
						continue
					}
					n.orders.Add(1)
					want := model
					model = map[string]int{}
					mu.Lock()
					orders = append(orders, placed{user: user, key: key, order: o, want: want})
					mu.Unlock()
					lastKey, lastBody = key, addressBody
				default:
					if lastKey == "" {
						continue
					}
					// A retry of the last checkout replays its order; the same
					// key with another body is refused.
					if rng.IntN(2) == 0 {
						b := do("POST", "/v1/checkout", lastBody, map[string]string{"Idempotency-Key": lastKey}, http.StatusCreated)
						var o orderDoc
						if b != nil && json.Unmarshal(b, &o) == nil {
							n.replays.Add(1)
							mu.Lock()
							if prev := orders[len(orders)-1]; prev.key == lastKey && prev.order.ID != o.ID {
								t.Errorf("%s: retry of key %s gave order %s, first was %s", user, lastKey, o.ID, prev.order.ID)
							}
							mu.Unlock()
						}
					} else {
						other := map[string]any{"paymentMethod": "pm_card_visa", "shippingAddress": map[string]any{"name": "Someone Else", "line1": "2 Other Rd",
							"city": "Paris", "postalCode": "75001", "country": "FR"}}
						do("POST", "/v1/checkout", other, map[string]string{"Idempotency-Key": lastKey}, http.StatusUnprocessableEntity)
					}
				}
			}
			mu.Lock()
			models[user] = model
			mu.Unlock()
		}()
	}
	clients.Wait()
	close(stop)
	admin.Wait()
	var injected faults.Counts
	if fs != nil {
		injected = fs.Counts()
		fs.Heal()
	}

	invariants := 0
	// Every 2xx add-to-cart is in its cart, quantities in bounds, totals
	// consistent.
	for user, model := range models {
		var c cartDoc
		if err := json.Unmarshal(mustDo(t, "GET", srv.URL+"/v1/cart", testToken(t, user, false), nil, http.StatusOK), &c); err != nil {
			t.Fatal(err)
		}
		invariants += checkCart(t, user, c, model)
	}
	// Each order's total is the sum of quantity × price paid, its lines
	// are the cart it was made from, and it is in the history once.
	history := map[string]map[string]int{}
	for _, p := range orders {
		o := p.order
		var sum int64
		got := map[string]int{}
		for _, l := range o.Items {
			if l.LineTotalCents != int64(l.Quantity)*l.UnitPriceCents {
				t.Errorf("order %s line %s: %d × %d ≠ %d", o.ID, l.ProductID, l.Quantity, l.UnitPriceCents, l.LineTotalCents)
			}
			if l.Quantity < 1 || l.Quantity > 99 {
				t.Errorf("order %s line %s: quantity %d out of 1..99", o.ID, l.ProductID, l.Quantity)
			}
			sum += l.LineTotalCents
			got[l.ProductID] = l.Quantity
		}
		if sum != o.TotalCents {
			t.Errorf("order %s: total %d, lines sum to %d", o.ID, o.TotalCents, sum)
		}
		if fmt.Sprint(got) != fmt.Sprint(p.want) {
			t.Errorf("order %s of %s holds %v, the cart held %v", o.ID, p.user, got, p.want)
		}
		if history[p.user] == nil {
			var page struct{ Items []struct{ ID string } }
			_ = json.Unmarshal(mustDo(t, "GET", srv.URL+"/v1/orders?limit=100", testToken(t, p.user, false), nil, http.StatusOK), &page)
			history[p.user] = map[string]int{}
			for _, it := range page.Items {
				history[p.user][it.ID]++
			}
		}
		if c := history[p.user][o.ID]; c != 1 {
			t.Errorf("order %s of %s appears %d times in the history", o.ID, p.user, c)
		}
		invariants += 4
	}
	// One key, at most one order: the history holds exactly the orders
	// that got a 201, no more.
	placedBy := map[string]int{}
	for _, p := range orders {
		placedBy[p.user]++
	}
	for user, ids := range history {
		if got, want := len(ids), placedBy[user]; got != want {
			t.Errorf("%s has %d orders, %d checkouts got a 201", user, got, want)
		}
		invariants++
	}

	// The feed lag returns to 0 and every cart line reaches its product's
	// latest price.
	latest := map[string]int64{}
	for _, p := range products {
		var v struct{ PriceVersion int64 }
		_ = json.Unmarshal(mustDo(t, "GET", srv.URL+"/v1/products/"+p, "", nil, http.StatusOK), &v)
		latest[p] = v.PriceVersion
	}
	converged := func() string {
		st, err := wk.FeedStatus(ctx)
		if err != nil {
			return err.Error()
		}
		for _, ps := range st {
			for _, l := range ps.Leases {
				if l.LagEstimate != 0 {
					return fmt.Sprintf("%s lease %s lag %d", ps.Processor, l.Lease, l.LagEstimate)
				}
			}
		}
		for user := range models {
			var c cartDoc
			_ = json.Unmarshal(mustDo(t, "GET", srv.URL+"/v1/cart", testToken(t, user, false), nil, http.StatusOK), &c)
			for _, l := range c.Items {
				if l.PriceVersion != latest[l.ProductID] {
					return fmt.Sprintf("%s's line of %s at price version %d, latest %d", user, l.ProductID, l.PriceVersion, latest[l.ProductID])
				}
			}
		}
		return ""
	}
	for end := time.Now().Add(20 * time.Second); ; {
		s := converged()
		if s == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("20 s after the load the feed has not converged: %s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	invariants++
	t.Logf("%d users × %d ops: %d requests (%d 2xx, %d 4xx as expected, %d unexpected, %d retries of a 503), %d orders, %d replays, %d price changes; %d store faults injected; %d invariants held",
		users, opsPerUser, n.ops.Load(), n.ok2xx.Load(), n.refused4xx.Load(), n.unexpected.Load(), n.retries.Load(),
		n.orders.Load(), n.replays.Load(), n.priceChanges.Load(), injected.Injected(), invariants)
}

// checkCart compares a cart with the user's model of it and checks its
// arithmetic; it returns how many invariants it checked.
func checkCart(t *testing.T, user string, c cartDoc, model map[string]int) int {
	t.Helper()
	got := map[string]int{}
	count := 0
	var subtotal int64
	for _, l := range c.Items {
		got[l.ProductID] = l.Quantity
		count += l.Quantity
		if l.Quantity < 1 || l.Quantity > 99 {
			t.Errorf("%s: line %s quantity %d out of 1..99", user, l.ProductID, l.Quantity)
		}
		if l.LineTotalCents != int64(l.Quantity)*l.UnitPriceCents {
			t.Errorf("%s: line %s: %d × %d ≠ %d", user, l.ProductID, l.Quantity, l.UnitPriceCents, l.LineTotalCents)
		}
		if l.Available {
			subtotal += l.LineTotalCents
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(model) {
		t.Errorf("%s: cart holds %v, the 2xx answers say %v", user, got, model)
	}
	if c.ItemCount != count || c.SubtotalCents != subtotal {
		t.Errorf("%s: itemCount %d subtotal %d, lines say %d and %d", user, c.ItemCount, c.SubtotalCents, count, subtotal)
	}
	return 4
}
