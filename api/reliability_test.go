package api_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// faultyShop is the fixture shop served over a store that injects cfg's
// faults; the fixture itself is written to the healthy store underneath.
// opts adjust the server's Deps.
func faultyShop(t *testing.T, cfg faults.Config, opts ...func(*api.Deps)) (*shop, *faults.Store) {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(context.Background(), st, io.Discard); err != nil {
		t.Fatal(err)
	}
	f := faults.Wrap(st, cfg)
	d := api.Deps{Writes: writes.New(repo.New(store.Metered(f), 0), paymentstest.Embedded(t), nil), Store: f, Secret: testSecret, DevMode: true}
	for _, o := range opts {
		o(&d)
	}
	s := &shop{t: t, store: st, repos: repo.New(st, 0), handler: api.NewServer(d)}
	s.fixture()
	return s, f
}

// everyScreenAndWrite is one request to each endpoint that reaches the
// store, for a customer alice and an admin.
func everyScreenAndWrite(t *testing.T) []req {
	alice, admin := token(t, "alice", false), token(t, "boss", true)
	return []req{
		{method: "GET", path: "/v1/categories"},
		{method: "GET", path: "/v1/categories/books/products"},
		{method: "GET", path: "/v1/products/book-1"},
		{method: "GET", path: "/v1/products/book-1/reviews"},
		{method: "POST", path: "/v1/products/book-2/reviews", token: alice, body: map[string]any{"rating": 5, "title": "Yes", "body": "Good."}},
		{method: "GET", path: "/v1/cart", token: alice},
		{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}},
		{method: "DELETE", path: "/v1/cart/items/book-1", token: alice},
		{method: "POST", path: "/v1/checkout", token: alice, body: address, header: map[string]string{"Idempotency-Key": "k1"}},
		{method: "GET", path: "/v1/me/summary", token: alice},
		{method: "GET", path: "/v1/orders", token: alice},
		{method: "GET", path: "/v1/orders/o-1", token: alice},
		{method: "POST", path: "/v1/orders/o-1/cancel", token: alice},
		{method: "POST", path: "/v1/products", token: admin, body: map[string]any{"name": "New", "priceCents": 100, "categoryId": "books"}},
		{method: "PATCH", path: "/v1/products/book-1", token: admin, body: `{"priceCents":4100}`,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}},
		{method: "DELETE", path: "/v1/products/game-1", token: admin},
		{method: "PUT", path: "/v1/categories/toys", token: admin, body: map[string]string{"name": "Toys"}},
		{method: "GET", path: "/v1/admin/orders?status=placed&day=2026-11-29", token: admin},
		{method: "PATCH", path: "/v1/admin/orders/alice/o-1", token: admin, body: map[string]string{"status": "shipped"}},
		{method: "GET", path: "/v1/admin/webhooks", token: admin},
		{method: "POST", path: "/v1/admin/webhooks", token: admin, body: map[string]any{"url": "https://r.example.com/", "eventTypes": []string{"order.placed"}}},
		{method: "GET", path: "/v1/admin/webhooks/wh-1/deliveries?status=dead", token: admin},
	}
}

// TestStoreFaultsAre503WithRetryAfter: whatever way the store fails, every
// endpoint answers 503 with Retry-After, never a 500 (Cosmos: retry on
// 429 after x-ms-retry-after-ms; a 503 is transient too).
func TestStoreFaultsAre503WithRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rule           faults.Rule
		wantRetryAfter string
	}{
		{"Throttled", faults.Rule{Throttle: 1}, "3"},
		{"Unavailable", faults.Rule{Unavailable: 1}, "1"},
		{"TimedOut", faults.Rule{Timeout: 1}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := faultyShop(t, faults.Config{Rules: []faults.Rule{tc.rule},
				RetryAfter: 2500 * time.Millisecond, TimeoutAfter: 5 * time.Millisecond})
			for _, r := range everyScreenAndWrite(t) {
				if r.header["Content-Type"] == "" && r.body != nil {
					r.header = mergeHeader(r.header, "Content-Type", "application/json")
				}
				w := s.do(r)
				if got, want := w.Code, http.StatusServiceUnavailable; got != want {
					t.Errorf("%s %s = %d, want %d; body %s", r.method, r.path, got, want, w.Body.String())
					continue
				}
				if got := w.Header().Get("Retry-After"); got != tc.wantRetryAfter {
					t.Errorf("%s %s: Retry-After = %q, want %q", r.method, r.path, got, tc.wantRetryAfter)
				}
			}
			if f.Counts().Injected() == 0 {
				t.Error("no fault was injected")
			}
		})
	}
}

// TestFullPartitionIs507: a write to a logical partition that reached
// Cosmos's 20 GB (403, substatus 1014) is a 507 problem naming it, never a
// 500, and not a 503 either: retrying cannot help. Reads still work.
func TestFullPartitionIs507(t *testing.T) {
	s, f := faultyShop(t, faults.Config{Rules: []faults.Rule{{PartitionFull: 1}}})
	writes := 0
	for _, r := range everyScreenAndWrite(t) {
		if r.header["Content-Type"] == "" && r.body != nil {
			r.header = mergeHeader(r.header, "Content-Type", "application/json")
		}
		before := f.Counts().Full
		w := s.do(r)
		if f.Counts().Full == before {
			if w.Code >= 500 {
				t.Errorf("%s %s = %d without a full partition: %s", r.method, r.path, w.Code, w.Body.String())
			}
			continue
		}
		writes++
		if got, want := w.Code, http.StatusInsufficientStorage; got != want {
			t.Errorf("%s %s = %d, want %d; body %s", r.method, r.path, got, want, w.Body.String())
			continue
		}
		p := decodeBody[struct{ Type, Detail string }](t, w)
		if got, want := p.Type, "https://shop.example/problems/partition-full"; got != want || p.Detail == "" {
			t.Errorf("%s %s: problem type %q, detail %q; want %q and a detail", r.method, r.path, got, p.Detail, want)
		}
		if got := w.Header().Get("Content-Type"); got != "application/problem+json" {
			t.Errorf("%s %s: Content-Type %q, want application/problem+json", r.method, r.path, got)
		}
	}
	if writes == 0 {
		t.Error("no request met the full partition")
	}
}

func mergeHeader(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

// TestIntermittentFaultsNeverA500 sends 200 random requests through a store
// failing a third of its calls in every way: each answer is the one a
// healthy store gives, or a 503 with Retry-After.
func TestIntermittentFaultsNeverA500(t *testing.T) {
	s, f := faultyShop(t, faults.Config{Seed: 1, Rules: []faults.Rule{{Throttle: 0.1, Unavailable: 0.1, Timeout: 0.1}},
		TimeoutAfter: time.Millisecond})
	reqs := everyScreenAndWrite(t)
	rng := rand.New(rand.NewPCG(1, 2))
	unavailable := 0
	for i := range 200 {
		r := reqs[rng.IntN(len(reqs))]
		if r.header["Idempotency-Key"] != "" {
			r.header = map[string]string{"Idempotency-Key": "k" + strconv.Itoa(i)}
		}
		if r.header["Content-Type"] == "" && r.body != nil {
			r.header = mergeHeader(r.header, "Content-Type", "application/json")
		}
		w := s.do(r)
		switch {
		case w.Code >= 500 && w.Code != http.StatusServiceUnavailable:
			t.Fatalf("%s %s = %d: %s", r.method, r.path, w.Code, w.Body.String())
		case w.Code == http.StatusServiceUnavailable:
			unavailable++
			if w.Header().Get("Retry-After") == "" {
				t.Errorf("%s %s: 503 without Retry-After", r.method, r.path)
			}
		}
	}
	c := f.Counts()
	t.Logf("200 requests, %d store calls, %d faults injected, %d answered 503", c.Calls, c.Injected(), unavailable)
	if unavailable == 0 {
		t.Error("no request met a fault: the test proves nothing")
	}
}

// TestCheckoutRetriedThroughFaultsPlacesOneOrder: a client retrying its
// checkout with the same Idempotency-Key while the store fails gets one
// order, never two (the order and its idempotency record commit in one
// transactional batch).
func TestCheckoutRetriedThroughFaultsPlacesOneOrder(t *testing.T) {
	s, f := faultyShop(t, faults.Config{Seed: 3, Rules: []faults.Rule{{Unavailable: 0.3}}})
	alice := token(t, "alice", false)
	retry := func(r req) response {
		for range 200 {
			if w := s.do(r); w.Code != http.StatusServiceUnavailable {
				return w
			}
		}
		t.Fatalf("%s %s: still 503 after 200 tries", r.method, r.path)
		return response{}
	}
	retry(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	var ids []string
	for i := range 5 {
		w := retry(req{method: "POST", path: "/v1/checkout", token: alice, body: address, header: map[string]string{"Idempotency-Key": "once"}})
		if w.Code != http.StatusCreated && w.Code != http.StatusOK {
			t.Fatalf("checkout try %d = %d: %s", i, w.Code, w.Body.String())
		}
		ids = append(ids, decodeBody[orderBody](t, w).ID)
	}
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("one key gave orders %v", ids)
		}
	}
	f.Heal()
	page, err := s.repos.Orders.Page(context.Background(), "alice", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	orders, err := page.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(orders), 1; got != want {
		t.Errorf("alice has %d orders, want %d", got, want)
	}
}

// TestHungStoreIs503WithinTheRequestTimeout: with RequestTimeout set, a
// store that hangs or crawls costs the client the timeout, then a 503.
func TestHungStoreIs503WithinTheRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule faults.Rule
	}{
		{"Hung", faults.Rule{Timeout: 1}},
		{"Crawling", faults.Rule{Latency: time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := faultyShop(t, faults.Config{Rules: []faults.Rule{tc.rule}, TimeoutAfter: time.Hour},
				func(d *api.Deps) { d.RequestTimeout = 20 * time.Millisecond })
			for _, r := range everyScreenAndWrite(t) {
				if r.header["Content-Type"] == "" && r.body != nil {
					r.header = mergeHeader(r.header, "Content-Type", "application/json")
				}
				w := s.do(r)
				if got, want := w.Code, http.StatusServiceUnavailable; got != want {
					t.Errorf("%s %s = %d, want %d: %s", r.method, r.path, got, want, w.Body.String())
				}
				if w.Header().Get("Retry-After") == "" {
					t.Errorf("%s %s: 503 without Retry-After", r.method, r.path)
				}
			}
		})
	}
}

// TestRequestAbandonedDuringFaultIs503: a store call that hangs ends with
// the request's context, and the answer is still a 503, not a 500.
func TestRequestAbandonedDuringFaultIs503(t *testing.T) {
	s, _ := faultyShop(t, faults.Config{Rules: []faults.Rule{{Timeout: 1}}, TimeoutAfter: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, "GET", "/v1/products/book-1", nil)
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	if got, want := w.Code, http.StatusServiceUnavailable; got != want {
		t.Fatalf("status = %d, want %d", got, want)
	}
}
