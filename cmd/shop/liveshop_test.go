package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// tester is what the live shop needs of a test: a *testing.T and a
// *rapid.T both have it.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// liveShop is the whole shop in process over one store file: the embedded
// store (behind store/faults when configured), the change-feed workers and
// the API behind a real HTTP listener. restart closes all of it and opens
// the same file again, as a process restart would.
type liveShop struct {
	t       tester
	path    string
	fc      *faults.Config
	workers feedworkers.Config

	raw *embedded.Store
	pay *payembedded.Provider // payments.db beside the store file
	// payFaults, when set, injects the payment provider's faults, again
	// after every restart.
	payFaults func(op, key string) payembedded.Fault
	faults    *faults.Store // nil without a fault configuration
	wk        *feedworkers.Workers
	srv       *httptest.Server
	client    *http.Client
	URL       string
}

// newLiveShop starts a shop on a new store file at path (in a directory
// the test removes); it is stopped when the test ends. With fc set the
// server and the workers run on a store injecting fc's faults (fc decides
// whether injection starts on).
func newLiveShop(t tester, path string, fc *faults.Config) *liveShop {
	t.Helper()
	return newLiveShopWith(t, path, fc, liveWorkers)
}

// newLiveShopWith is newLiveShop with the feed workers configured as wc
// (a test of the sweeper shortens its timings).
func newLiveShopWith(t tester, path string, fc *faults.Config, wc feedworkers.Config) *liveShop {
	t.Helper()
	s := &liveShop{t: t, path: path, fc: fc, workers: wc, client: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// liveWorkers is the feed workers' configuration of these tests: a short
// poll, so a test waits for the feed milliseconds, not seconds.
var liveWorkers = feedworkers.Config{Processor: changefeed.Config{Instance: "live", PollEvery: 5 * time.Millisecond,
	Backoff: time.Millisecond, LeaseExpiry: 2 * time.Second, RenewEvery: 200 * time.Millisecond},
	// An order left in progress (its checkout's answer lost, a 503) is
	// carried on within seconds, past the checkout's own bound.
	Sweeper: feedworkers.Sweeper{Every: 200 * time.Millisecond, Stall: 3 * time.Second}}

// awaitOrdersRest polls the order history of the token's user until no
// order is in progress (the sweeper carries such orders on), or fails
// the test after timeout.
func (s *liveShop) awaitOrdersRest(tok string, timeout time.Duration) {
	s.t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		var page struct {
			Items []struct{ ID, Status string } `json:"items"`
		}
		s.must("GET", "/v1/orders?limit=100", tok, nil, nil, http.StatusOK, &page)
		busy := slices.ContainsFunc(page.Items, func(o struct{ ID, Status string }) bool {
			st, _ := domain.StateOf(o.Status)
			return st.InProgress
		})
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("orders still in progress %v after the writes: %+v", timeout, page.Items)
		}
	}
}

func (s *liveShop) start() {
	s.t.Helper()
	ctx := context.Background()
	raw, err := embedded.Open(s.path, embedded.Options{NoSync: true})
	if err != nil {
		s.t.Fatalf("open %s: %v", s.path, err)
	}
	if err := migrations.Apply(ctx, raw, io.Discard); err != nil {
		raw.Close()
		s.t.Fatalf("migrations: %v", err)
	}
	var st store.Store = raw
	s.faults = nil
	if s.fc != nil {
		s.faults = faults.Wrap(raw, *s.fc)
		st = s.faults
	}
	pay, err := payembedded.Open(s.path + ".payments")
	if err != nil {
		raw.Close()
		s.t.Fatalf("open the payments: %v", err)
	}
	if s.payFaults != nil {
		pay.InjectFaults(s.payFaults)
	}
	wc := s.workers
	wk, err := feedworkers.Start(ctx, st, writes.New(repo.New(store.Metered(st), 0), pay, nil), wc)
	if err != nil {
		raw.Close()
		pay.Close()
		s.t.Fatalf("start the feed workers: %v", err)
	}
	s.raw, s.wk, s.pay = raw, wk, pay
	s.srv = httptest.NewServer(api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), pay, nil), Store: st, Secret: []byte(testJWTSecret), Feeds: wk}))
	s.URL = s.srv.URL
}

// stop stops the workers (their batches finish and are checkpointed),
// the server, and closes the store; stopping twice is a no-op.
func (s *liveShop) stop() {
	if s.raw == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.wk.Stop(ctx); err != nil {
		s.t.Fatalf("stop the feed workers: %v", err)
	}
	s.srv.Close()
	s.client.CloseIdleConnections()
	if err := s.raw.Close(); err != nil {
		s.t.Fatalf("close the store: %v", err)
	}
	if err := s.pay.Close(); err != nil {
		s.t.Fatalf("close the payments: %v", err)
	}
	s.raw = nil
}

// restart stops everything and starts again on the same store file.
func (s *liveShop) restart() {
	s.t.Helper()
	s.stop()
	s.start()
}

// do sends one request and returns the status and the body; a transport
// error fails the test.
func (s *liveShop) do(method, path, tok string, body any, header map[string]string) (int, []byte) {
	s.t.Helper()
	code, b, err := httpDo(s.client, method, s.URL+path, tok, body, header)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return code, b
}

// must is do that fails the test unless the status is want, and decodes
// the body into out when out is not nil.
func (s *liveShop) must(method, path, tok string, body any, header map[string]string, want int, out any) []byte {
	s.t.Helper()
	code, b := s.do(method, path, tok, body, header)
	if code != want {
		s.t.Fatalf("%s %s = %d, want %d: %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return b
}

// liveProduct is what a cart line copies from a product.
type liveProduct struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	PriceCents   int64  `json:"priceCents"`
	PriceVersion int64  `json:"priceVersion"`
}

// liveLine and liveCart are the cart screen as the API answers it.
type liveLine struct {
	ProductID      string `json:"productId"`
	Name           string `json:"name"`
	UnitPriceCents int64  `json:"unitPriceCents"`
	PriceVersion   int64  `json:"priceVersion"`
	Quantity       int    `json:"quantity"`
	LineTotalCents int64  `json:"lineTotalCents"`
	Available      bool   `json:"available"`
}

type liveCart struct {
	Items         []liveLine `json:"items"`
	ItemCount     int        `json:"itemCount"`
	SubtotalCents int64      `json:"subtotalCents"`
}

// liveOrder is an order as POST /v1/checkout and GET /v1/orders/{id}
// answer it.
type liveOrder struct {
	ID    string `json:"id"`
	Items []struct {
		ProductID      string `json:"productId"`
		UnitPriceCents int64  `json:"unitPriceCents"`
		Quantity       int    `json:"quantity"`
		LineTotalCents int64  `json:"lineTotalCents"`
	} `json:"items"`
	TotalCents int64  `json:"totalCents"`
	Status     string `json:"status"`
}

type liveSummary struct {
	TotalOrders     int   `json:"totalOrders"`
	TotalSpentCents int64 `json:"totalSpentCents"`
}

type liveProblem struct {
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// liveToken signs a token for the live shops' secret.
func liveToken(t tester, user string, admin bool) string {
	t.Helper()
	tok, err := api.IssueToken([]byte(testJWTSecret), user, "User "+user, user+"@example.com", admin, time.Hour)
	if err != nil {
		t.Fatalf("issue a token: %v", err)
	}
	return tok
}

// catalog is createCatalog for any tester: a category "tea" and n
// products tea-0.. created through the admin API.
func (s *liveShop) catalog(n int) []string {
	s.t.Helper()
	admin := liveToken(s.t, "boss", true)
	s.must("PUT", "/v1/categories/tea", admin, map[string]string{"name": "Tea"}, nil, http.StatusCreated, nil)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("tea-%d", i)
		s.must("POST", "/v1/products", admin, map[string]any{
			"productId": id, "name": "Tea " + id, "priceCents": 500 + i, "categoryId": "tea", "stock": 1_000_000,
		}, nil, http.StatusCreated, nil)
		ids = append(ids, id)
	}
	return ids
}

func (s *liveShop) product(id string) liveProduct {
	s.t.Helper()
	var p liveProduct
	s.must("GET", "/v1/products/"+id, "", nil, nil, http.StatusOK, &p)
	return p
}

// feedLag describes the first lease of the workers that still has changes
// ahead of it ("" when every lease has read and applied all it saw).
func (s *liveShop) feedLag() string {
	st, err := s.wk.FeedStatus(context.Background())
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
	return ""
}

// staleLines lists every line of the users' carts whose copies (name,
// price, priceVersion, availability) are not those of the product now;
// every product of these tests exists, so each line must be available.
func (s *liveShop) staleLines(users map[string]string) []string {
	s.t.Helper()
	current := map[string]liveProduct{}
	var stale []string
	for _, user := range slices.Sorted(maps.Keys(users)) {
		var c liveCart
		s.must("GET", "/v1/cart", users[user], nil, nil, http.StatusOK, &c)
		for _, l := range c.Items {
			p, ok := current[l.ProductID]
			if !ok {
				p = s.product(l.ProductID)
				current[l.ProductID] = p
			}
			if l.Name != p.Name || l.UnitPriceCents != p.PriceCents || l.PriceVersion != p.PriceVersion || !l.Available {
				stale = append(stale, fmt.Sprintf("%s's line %s: %q %d cents priceVersion %d available %v; product: %q %d cents priceVersion %d",
					user, l.ProductID, l.Name, l.UnitPriceCents, l.PriceVersion, l.Available, p.Name, p.PriceCents, p.PriceVersion))
			}
		}
	}
	return stale
}

// awaitConverged polls, up to timeout, until the feed has no lag and
// every line of the users' carts carries its product's current copies;
// it returns what was still stale when the time ran out (nil: converged).
func (s *liveShop) awaitConverged(users map[string]string, timeout time.Duration) []string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	wait := 2 * time.Millisecond
	for {
		lag := s.feedLag()
		stale := s.staleLines(users)
		if lag == "" && len(stale) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if lag != "" {
				stale = append(stale, "feed: "+lag)
			}
			return stale
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// describe shortens a response body for a failure message.
func describe(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
