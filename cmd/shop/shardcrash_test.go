package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes/writestest"
)

// The split stock (domain/shards.go) attacked from outside: the real
// binary over HTTP, buyers and admins racing, SIGKILL at random moments.

const (
	shardHot     = "shard-hot" // a product sold as one
	shardVariant = "shard-var" // a product sold in variants
	shardSKU     = "v-m"       // the variant whose stock is split
	shardOther   = "v-s"       // its sibling, never split
)

// shardShop is a shop binary on one data directory, started again after
// each kill on the same data; its clients follow it to its new address.
type shardShop struct {
	t     *testing.T
	bin   string
	dir   string
	env   []string
	admin string

	mu   sync.Mutex
	cur  *child
	base atomic.Pointer[string]

	client *http.Client
	// held pauses the buyers and the admin between two requests.
	held atomic.Bool
	// bad lists every answer the shop must never give: a 5xx other than a
	// 503 with Retry-After.
	badMu sync.Mutex
	bad   []string
}

func newShardShop(t *testing.T, bin string, env ...string) *shardShop {
	s := &shardShop{t: t, bin: bin, dir: t.TempDir(), env: env, admin: testToken(t, "boss", true),
		client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	s.start()
	return s
}

func (s *shardShop) start() {
	c := startChild(s.t, s.bin, s.dir, s.env...)
	s.mu.Lock()
	s.cur = c
	s.mu.Unlock()
	s.base.Store(&c.base)
}

// kill sends SIGKILL and waits for the process to die.
func (s *shardShop) kill() {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// stop stops the shop cleanly (SIGTERM), so its files can be opened.
func (s *shardShop) stop() {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		s.t.Errorf("clean stop: %v", err)
	}
}

// do sends one request to the shop as it now is, and notes a 5xx that
// is not a 503 with Retry-After. body is JSON-encoded unless it is raw
// bytes (sent as they are, with the content type in header).
func (s *shardShop) do(method, path, tok string, body any, header map[string]string) (int, []byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(j)
		header = mergeHeader(map[string]string{"Content-Type": "application/json"}, header)
	}
	r, err := http.NewRequest(method, *s.base.Load()+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := s.client.Do(r)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 && (resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "") {
		s.badMu.Lock()
		s.bad = append(s.bad, fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, b))
		s.badMu.Unlock()
	}
	return resp.StatusCode, b, err
}

func mergeHeader(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// must sends a request and fails the test unless it answers want.
func (s *shardShop) must(method, path, tok string, body any, want int, out any) {
	s.t.Helper()
	code, b, err := s.do(method, path, tok, body, nil)
	if err != nil || code != want {
		s.t.Fatalf("%s %s = %d, %v, want %d: %s", method, path, code, err, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// catalog creates the two products: shardHot with hot units, and
// shardVariant whose variant shardSKU has variant units (shardOther 5).
func (s *shardShop) catalog(hot, variant int64) {
	s.must("PUT", "/v1/categories/sale", s.admin, map[string]string{"name": "Sale"}, http.StatusCreated, nil)
	s.must("POST", "/v1/products", s.admin, map[string]any{
		"productId": shardHot, "name": "Hot", "priceCents": 999, "categoryId": "sale", "stock": hot,
	}, http.StatusCreated, nil)
	s.must("POST", "/v1/products", s.admin, map[string]any{
		"productId": shardVariant, "name": "Shirt", "categoryId": "sale",
		"variants": []map[string]any{
			{"sku": shardOther, "attributes": map[string]string{"size": "S"}, "priceCents": 1500, "stock": 5},
			{"sku": shardSKU, "attributes": map[string]string{"size": "M"}, "priceCents": 1600, "stock": variant},
		},
	}, http.StatusCreated, nil)
}

// shardsPath is the stock/shards route of a product's variant ("" for
// none).
func shardsPath(product, sku string) string {
	return "/v1/admin/products/" + product + "/stock/shards" + skuQuery(sku)
}

// layout reads a stock's shards through the API.
func (s *shardShop) layout(product, sku string) domain.StockLayout {
	s.t.Helper()
	var l domain.StockLayout
	s.must("GET", shardsPath(product, sku), s.admin, nil, http.StatusOK, &l)
	return l
}

// shardOrder is an order a buyer placed (201), and whether a cancel of
// it was answered 200.
type shardOrder struct {
	user, id  string
	cancelled bool
}

// shardBuyers is the buyers' record of what the shop answered them.
type shardBuyers struct {
	mu       sync.Mutex
	placed   map[string]*shardOrder // by order id, answered 201
	users    map[string]string      // user → token
	answered map[int]int            // checkout answers by status
	// wrongRefusals lists the out-of-stock refusals that named a line
	// with enough units: "a refusal naming a line with enough is no
	// answer" (writes.take).
	wrongRefusals []string
	n             atomic.Int64 // orders answered 201
}

func (b *shardBuyers) note(code int) {
	b.mu.Lock()
	b.answered[code]++
	b.mu.Unlock()
}

// buyer checks out lines of 1 to 3 units (or of one of quantities), mostly
// of shardHot, one about every pace milliseconds, until stop is closed; it cancels some of its placed orders, itself or through the
// admin. A checkout whose answer was lost (the shop was killed) is sent
// again with its key once the shop is back: the key replays its order.
func (s *shardShop) buyer(b *shardBuyers, user string, seed uint64, pace int64, stop <-chan struct{}, quantities ...int) {
	rng := rand.New(rand.NewPCG(seed, 35))
	tok := testToken(s.t, user, false)
	b.mu.Lock()
	b.users[user] = tok
	b.mu.Unlock()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for n := 0; !stopped(); n++ {
		for s.held.Load() && !stopped() {
			time.Sleep(5 * time.Millisecond)
		}
		product, sku := shardHot, ""
		if rng.IntN(5) == 0 {
			product, sku = shardVariant, shardSKU
		}
		q := 1 + rng.IntN(3)
		if len(quantities) > 0 {
			q = quantities[rng.IntN(len(quantities))]
		}
		if code, _, err := s.do("PUT", "/v1/cart/items/"+product+skuQuery(sku), tok, map[string]int{"quantity": q}, nil); err != nil || code != http.StatusOK {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		key := fmt.Sprintf("%s-%d", user, n)
		var (
			code int
			body []byte
			err  error
		)
		for try := 0; try < 100; try++ {
			code, body, err = s.do("POST", "/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": key})
			if err == nil && code != http.StatusServiceUnavailable {
				break
			}
			time.Sleep(50 * time.Millisecond) // killed: wait for the restart, then replay
		}
		if err != nil {
			continue
		}
		b.note(code)
		switch code {
		case http.StatusCreated:
			var o liveOrder
			if err := json.Unmarshal(body, &o); err != nil || o.Status != domain.StatusPlaced {
				s.t.Errorf("checkout %s answered 201 with %s (%v)", key, body, err)
				continue
			}
			rec := &shardOrder{user: user, id: o.ID}
			b.mu.Lock()
			b.placed[o.ID] = rec
			b.mu.Unlock()
			b.n.Add(1)
			switch rng.IntN(5) {
			case 0: // the buyer cancels
				if code, _, err := s.do("POST", "/v1/orders/"+o.ID+"/cancel", tok, nil, nil); err == nil && code == http.StatusOK {
					b.mu.Lock()
					rec.cancelled = true
					b.mu.Unlock()
				}
			case 1: // the admin cancels
				if code, _, err := s.do("PATCH", "/v1/admin/orders/"+user+"/"+o.ID, s.admin, map[string]string{"status": domain.StatusCancelled}, nil); err == nil && code == http.StatusOK {
					b.mu.Lock()
					rec.cancelled = true
					b.mu.Unlock()
				}
			}
		case http.StatusConflict:
			var p struct {
				Type  string            `json:"type"`
				Items []domain.Shortage `json:"items"`
			}
			if json.Unmarshal(body, &p) == nil && strings.HasSuffix(p.Type, "/out-of-stock") {
				// Refused: the buyer takes the lines out of the cart, and
				// tries again later.
				s.do("DELETE", "/v1/cart/items/"+shardHot, tok, nil, nil)
				s.do("DELETE", "/v1/cart/items/"+shardVariant+skuQuery(shardSKU), tok, nil, nil)
				for _, it := range p.Items {
					if it.Available >= it.Requested {
						b.mu.Lock()
						b.wrongRefusals = append(b.wrongRefusals, fmt.Sprintf("%s at %s: %s", key, time.Now().Format("15:04:05.000"), body))
						b.mu.Unlock()
					}
				}
			}
		}
		time.Sleep(time.Duration(pace/2+rng.Int64N(pace)) * time.Millisecond)
	}
}

// shardAdmin splits and merges the two split stocks through the API until
// stop is closed. Before each PUT of shardHot's shards it sets inFlight;
// armed, it sends the next one at once (the kill is timed from it).
type shardAdmin struct {
	inFlight atomic.Bool
	arm      chan struct{}
	took     atomic.Int64 // how long the last PUT of shardHot's shards took to answer, in µs
	last     atomic.Int64 // the shards it asked for
	puts     atomic.Int64 // PUTs answered 200
	cut      atomic.Int64 // PUTs whose answer never came
}

func (s *shardShop) splitter(a *shardAdmin, seed uint64, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(seed, 36))
	seq := []int{16, 2, 1, 8, 3, 1, 4, 16, 5, 1, 12, 2}
	armed := false
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-a.arm:
			armed = true
		case <-time.After(time.Duration(40+rng.IntN(120)) * time.Millisecond):
		}
		for s.held.Load() && !armed {
			time.Sleep(5 * time.Millisecond)
		}
		product, sku := shardHot, ""
		if i%4 == 3 && !armed {
			product, sku = shardVariant, shardSKU
		}
		n := seq[i%len(seq)]
		if armed {
			// The most transfers: all units to or from 16 shards.
			n = map[bool]int{true: 16, false: 1}[a.last.Load() < 8]
		}
		armed = false
		sent := time.Now()
		if product == shardHot {
			a.inFlight.Store(true)
		}
		code, body, err := s.do("PUT", shardsPath(product, sku), s.admin, map[string]int{"shards": n}, nil)
		a.inFlight.Store(false)
		if product == shardHot && err == nil {
			a.took.Store(time.Since(sent).Microseconds())
			a.last.Store(int64(n))
		}
		if err != nil {
			a.cut.Add(1)
			continue
		}
		if code != http.StatusOK {
			if code != http.StatusServiceUnavailable {
				s.t.Errorf("PUT %s shards %d = %d: %s", domain.LineLabel(product, sku), n, code, body)
			}
			continue
		}
		a.puts.Add(1)
		var l domain.StockLayout
		if err := json.Unmarshal(body, &l); err != nil || l.Shards != n || l.ShardsMade < n || len(l.Units) != l.ShardsMade || slices.Min(l.Units) < 0 {
			s.t.Errorf("PUT %s shards %d answered %s (%v)", domain.LineLabel(product, sku), n, body, err)
		}
		if n > 1 {
			// Split: the admin's count is refused, and nothing is lost.
			code, body, err := s.do("PUT", "/v1/admin/products/"+product+"/stock"+skuQuery(sku), s.admin, map[string]int64{"available": 1000}, nil)
			if err == nil && code != http.StatusConflict && code != http.StatusServiceUnavailable {
				s.t.Errorf("PUT stock of %s split into %d = %d, want 409: %s", domain.LineLabel(product, sku), n, code, body)
			}
		}
	}
}

// watchShards reads both split stocks' shards through the API every few
// milliseconds until stop is closed: no shard ever holds fewer than no
// units (a take or a transfer takes only units that are there).
func (s *shardShop) watchShards(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
		for _, c := range [][2]string{{shardHot, ""}, {shardVariant, shardSKU}} {
			code, body, err := s.do("GET", shardsPath(c[0], c[1]), s.admin, nil, nil)
			var l domain.StockLayout
			if err == nil && code == http.StatusOK && (json.Unmarshal(body, &l) != nil || slices.Min(l.Units) < 0) {
				s.t.Errorf("GET %s shards: %s", domain.LineLabel(c[0], c[1]), body)
			}
		}
	}
}

// atKill is what a killed shop left of its split stocks, read from its
// files: units in flight between shards, orders in progress.
type atKill struct {
	transfers  int   // transfers sent, not delivered
	inFlight   int64 // their units
	sending    int64 // units counted in flight by the shards
	inProgress int   // orders still in progress
	orphans    int   // shard documents a split made before counting them
	sent       []domain.Transfer
}

func (k atKill) String() string {
	return fmt.Sprintf("%d transfers in flight (%d units; shards count %d sending), %d orders in progress, %d shards made but not counted",
		k.transfers, k.inFlight, k.sending, k.inProgress, k.orphans)
}

func readAtKill(t *testing.T, dir string) atKill {
	t.Helper()
	st, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return readAtKillFrom(t, st)
}

// TestSplitStockThroughKills sells a product whose stock is split into
// shards, and a variant's, to buyers of 1 to 3 units who cancel some of
// their orders, while an admin splits and merges them (16, 2, 1, 8 …)
// through the API, and kills the shop with SIGKILL twice: once while a
// PUT of stock/shards is in flight, once at a random moment of the sale;
// each time it starts again on the same data, the sweeper's timings
// shortened. At rest (every order settled, the feeds caught up: polled)
// it checks, from the shop's files: the workflow's invariants
// (writestest.Check: every unit in a shard, held, sold or in flight; no
// order holding units in two shards; the money), no unit left in flight
// and none in a retired shard; every order answered 201 there, placed or
// cancelled as its cancel was answered; through the API, each product's
// availability is the status of the sum of its shards, and a buyer is
// served while a unit is left; `shop audit` finds no copy differing; and
// no answer was a 5xx other than a 503 with Retry-After.
func TestSplitStockThroughKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	const (
		hotUnits     = 500
		variantUnits = 60
		buyers       = 6
		stall        = time.Second
		every        = 200 * time.Millisecond
	)
	began := time.Now()
	bin := buildShop(t)
	built := time.Since(began)
	s := newShardShop(t, bin, "SHOP_CHECKOUT_STALL="+stall.String(), "SHOP_SWEEP_EVERY="+every.String())
	s.catalog(hotUnits, variantUnits)
	for _, c := range []struct {
		product, sku string
		units        int64
	}{{shardHot, "", hotUnits}, {shardVariant, shardSKU, variantUnits}} {
		var l domain.StockLayout
		s.must("PUT", shardsPath(c.product, c.sku), s.admin, map[string]int{"shards": 4}, http.StatusOK, &l)
		if l.Shards != 4 || l.Available != c.units || len(l.Units) != 4 {
			t.Fatalf("split %s into 4: %+v", domain.LineLabel(c.product, c.sku), l)
		}
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	b := &shardBuyers{placed: map[string]*shardOrder{}, users: map[string]string{}, answered: map[int]int{}}
	a := &shardAdmin{arm: make(chan struct{}, 1)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() { s.buyer(b, fmt.Sprintf("sbuyer-%d", i), seed+uint64(i), 80, stop) })
	}
	wg.Go(func() { s.splitter(a, seed, stop) })
	wg.Go(func() { s.watchShards(stop) })

	awaitPlaced := func(n int64, within time.Duration) {
		for deadline := time.Now().Add(within); b.n.Load() < n && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Kill 1: while a PUT of the hot product's shards is in flight.
	time.Sleep(time.Duration(1500+rng.IntN(1500)) * time.Millisecond)
	awaitPlaced(10, 20*time.Second)
	for len(a.arm) > 0 {
		<-a.arm
	}
	cutBefore := a.cut.Load()
	a.arm <- struct{}{}
	for deadline := time.Now().Add(10 * time.Second); !a.inFlight.Load() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	// Somewhere in the middle of it, as long as the last one took.
	took := max(a.took.Load(), 2000)
	time.Sleep(time.Duration(took/5+rng.Int64N(took*3/5)) * time.Microsecond)
	putInFlight := a.inFlight.Load()
	killedAt := time.Now()
	s.held.Store(true)
	s.kill()
	first := readAtKill(t, s.dir)
	s.start()
	// The PUT's client sees its connection end once the process is gone.
	for deadline := time.Now().Add(5 * time.Second); a.inFlight.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	t.Logf("kill 1 at %s (a PUT of stock/shards in flight: %v, its answer lost: %v) after %d × 201: %s",
		killedAt.Format("15:04:05.000"), putInFlight, a.cut.Load() > cutBefore, b.n.Load(), first)
	// Units the kill left in flight are the feed's to deliver, once the
	// dead instance's lease expires: a buyer meanwhile whom only they can
	// serve is served, not refused with a count that has them.
	for _, o := range s.buyInFlight(first.sent) {
		b.placed[o.id] = o
	}
	s.held.Store(false)

	// Kill 2: at a random moment of the sale.
	time.Sleep(time.Duration(1500+rng.IntN(2000)) * time.Millisecond)
	killedAt = time.Now()
	s.kill()
	second := readAtKill(t, s.dir)
	s.start()
	t.Logf("kill 2 at %s after %d × 201: %s", killedAt.Format("15:04:05.000"), b.n.Load(), second)

	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	// Merged at the end into fewer shards than most orders took from
	// (still split, so the page must show a sum); then late cancels give
	// units back to shards now retired, which the feed drains.
	s.must("PUT", shardsPath(shardHot, ""), s.admin, map[string]int{"shards": 2}, http.StatusOK, nil)
	s.must("PUT", shardsPath(shardVariant, shardSKU), s.admin, map[string]int{"shards": 1}, http.StatusOK, nil)
	late := 0
	for _, o := range b.placed {
		if late == 40 {
			break
		}
		if o.cancelled {
			continue
		}
		if code, _, err := s.do("PATCH", "/v1/admin/orders/"+o.user+"/"+o.id, s.admin, map[string]string{"status": domain.StatusCancelled}, nil); err == nil && code == http.StatusOK {
			o.cancelled = true
			late++
		}
	}

	// At rest: every order settled (the sweeper carries on those the
	// kills left), then the feeds caught up (the dead instance's leases
	// expire first).
	s.awaitOrdersSettled(b, 60*time.Second)
	s.awaitFeedsOwned(60 * time.Second)
	// The feed drained what came back to the retired shards.
	for _, c := range [][2]string{{shardHot, ""}, {shardVariant, shardSKU}} {
		if l := s.layout(c[0], c[1]); slices.ContainsFunc(l.Units[l.Shards:], func(u int64) bool { return u != 0 }) {
			t.Errorf("%s at rest: %v, units in shards past the %d active", domain.LineLabel(c[0], c[1]), l.Units, l.Shards)
		}
	}
	// Bought down, then split so that no shard holds more than a low
	// stock's units while the sum is in stock: the page must show the
	// sum's status, not one shard's.
	for _, c := range []struct {
		product, sku string
		keep         int64
		shards       int
	}{{shardHot, "", 13, 4}, {shardVariant, shardSKU, 8, 4}} {
		s.must("PUT", shardsPath(c.product, c.sku), s.admin, map[string]int{"shards": 1}, http.StatusOK, nil)
		for _, id := range s.buyDownTo(c.product, c.sku, c.keep) {
			b.placed[id] = &shardOrder{user: "closer", id: id}
		}
		s.must("PUT", shardsPath(c.product, c.sku), s.admin, map[string]int{"shards": c.shards}, http.StatusOK, nil)
	}
	// A buyer is served while a unit is left in any shard.
	if l := s.layout(shardHot, ""); l.Available > 0 {
		tok := testToken(t, "last-buyer", false)
		s.must("PUT", "/v1/cart/items/"+shardHot, tok, map[string]int{"quantity": 1}, http.StatusOK, nil)
		var o liveOrder
		code, body, err := s.do("POST", "/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": "last"})
		switch {
		case err == nil && code == http.StatusAccepted:
			// In progress past the checkout's bound: the sweeper places it.
		case err != nil || code != http.StatusCreated || json.Unmarshal(body, &o) != nil:
			t.Fatalf("a buyer of 1 unit, with %d left in the shards %v: %d %s (%v)", l.Available, l.Units, code, body, err)
		default:
			b.placed[o.ID] = &shardOrder{user: "last-buyer", id: o.ID}
		}
	}
	s.awaitFeedsOwned(60 * time.Second)
	s.awaitAvailability(shardHot, "", 20*time.Second)
	s.awaitAvailability(shardVariant, shardSKU, 30*time.Second)
	s.stop()

	stocked := map[string]int64{shardHot: hotUnits, domain.LineLabel(shardVariant, shardSKU): variantUnits, domain.LineLabel(shardVariant, shardOther): 5}
	checkMoneyAt(t, s.dir, stocked)
	s.checkShardsAtRest(b)
	s.checkAudit()
	for _, bad := range s.bad {
		t.Error("answered:", bad)
	}
	for _, w := range b.wrongRefusals {
		t.Error("refused with enough:", w)
	}
	t.Logf("%d orders placed (%d cancelled by the test, %d after the last merge), checkout answers %v; %d PUTs of stock/shards answered, %d cut by a kill; built in %v, ran %v",
		len(b.placed), countCancelled(b), late, b.answered, a.puts.Load(), a.cut.Load(), built.Round(time.Second), time.Since(began).Round(time.Second))
}

func countCancelled(b *shardBuyers) int {
	n := 0
	for _, o := range b.placed {
		if o.cancelled {
			n++
		}
	}
	return n
}

// buyInFlight, with the buyers held, buys out every shard of the stock
// of the first transfer in sent (a line of as many units as the fullest
// shard holds, again and again), so that only its units in flight are
// left, and then one of them: the buyer must be served, not refused with
// a count that has them (refused with none, the feed delivered them
// first and the buy-outs took them). Then it cancels the buy-outs, which give their
// units back. It returns the orders placed, the buy-outs cancelled.
func (s *shardShop) buyInFlight(sent []domain.Transfer) []*shardOrder {
	s.t.Helper()
	if len(sent) == 0 {
		return nil
	}
	x := sent[0]
	product, label := x.Product(), domain.LineLabel(x.Product(), x.SKU)
	const user = "inflight-buyer"
	tok := testToken(s.t, user, false)
	buy := func(q int64, key string) (int, []byte) {
		s.must("PUT", "/v1/cart/items/"+product+skuQuery(x.SKU), tok, map[string]int64{"quantity": q}, http.StatusOK, nil)
		code, body, err := s.do("POST", "/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": key})
		if err != nil {
			s.t.Fatalf("buying %d of %s: %v", q, label, err)
		}
		return code, body
	}
	var placed []*shardOrder
	for i := range 100 {
		l := s.layout(product, x.SKU)
		q := min(slices.Max(l.Units), 99)
		if q <= 0 {
			break
		}
		var o liveOrder
		code, body := buy(q, fmt.Sprintf("out-%d", i))
		if code != http.StatusCreated || json.Unmarshal(body, &o) != nil {
			// Raced by the feed's drain, or still in progress (202, the
			// sweeper places it): read the shards again.
			s.t.Logf("buying out %d of %s (shards %v): %d %.200s", q, label, l.Units, code, body)
			s.do("DELETE", "/v1/cart/items/"+product+skuQuery(x.SKU), tok, nil, nil)
			continue
		}
		placed = append(placed, &shardOrder{user: user, id: o.ID})
	}
	l := s.layout(product, x.SKU)
	code, body := buy(1, "inflight")
	var o liveOrder
	switch {
	case code == http.StatusCreated && json.Unmarshal(body, &o) == nil:
		s.t.Logf("bought 1 of %s with its shards %v bought out and %d units in flight to shard %d", label, l.Units, x.Units, x.To)
		placed = append(placed, &shardOrder{user: user, id: o.ID})
	default:
		// Refused for want of units: the feed delivered them first, and
		// the buy-outs took them. Refused naming them: wrong.
		var p struct {
			Items []domain.Shortage `json:"items"`
		}
		if json.Unmarshal(body, &p) != nil || len(p.Items) == 0 || slices.ContainsFunc(p.Items, func(it domain.Shortage) bool { return it.Available >= it.Requested }) {
			s.t.Errorf("a buyer of 1 of %s, its shards %v bought out, %d units in flight to shard %d: %d %s", label, l.Units, x.Units, x.To, code, body)
		} else {
			s.t.Logf("the %d units in flight to shard %d of %s were delivered before the buyer came, and bought out", x.Units, x.To, label)
		}
		s.must("DELETE", "/v1/cart/items/"+product+skuQuery(x.SKU), tok, nil, http.StatusOK, nil)
	}
	for _, o := range placed[:len(placed)-min(len(placed), 1)] {
		s.must("PATCH", "/v1/admin/orders/"+user+"/"+o.id, s.admin, map[string]string{"status": domain.StatusCancelled}, http.StatusOK, nil)
		o.cancelled = true
	}
	return placed
}

// buyDownTo buys the units of a stock held in one shard down to keep (a
// line holds 99 at most, and is never split across shards), and returns
// the orders placed. A stock with keep or fewer is left as it is.
func (s *shardShop) buyDownTo(product, sku string, keep int64) []string {
	s.t.Helper()
	var ids []string
	for i := 0; ; i++ {
		l := s.layout(product, sku)
		if l.Available <= keep {
			return ids
		}
		tok := testToken(s.t, "closer", false)
		q := min(l.Available-keep, 99)
		s.must("PUT", "/v1/cart/items/"+product+skuQuery(sku), tok, map[string]int64{"quantity": q}, http.StatusOK, nil)
		code, body, err := s.do("POST", "/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": fmt.Sprintf("close-%s-%d", product, i)})
		var o liveOrder
		switch {
		case err == nil && code == http.StatusAccepted:
			// In progress past the checkout's bound: the sweeper places it.
		case err != nil || code != http.StatusCreated || json.Unmarshal(body, &o) != nil:
			s.t.Fatalf("buying %d of %s down to %d (shards %v): %d %s (%v)", q, domain.LineLabel(product, sku), keep, l.Units, code, body, err)
		default:
			ids = append(ids, o.ID)
		}
	}
}

// awaitOrdersSettled polls every buyer's orders through the API until
// none is in progress, or fails the test after timeout.
func (s *shardShop) awaitOrdersSettled(b *shardBuyers, timeout time.Duration) {
	s.t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		var busy []string
		for user, tok := range b.users {
			cont := ""
			for {
				var page struct {
					Items        []struct{ ID, Status string } `json:"items"`
					Continuation *string                       `json:"continuation"`
				}
				path := "/v1/orders?limit=100"
				if cont != "" {
					path += "&continuation=" + urlQueryEscape(cont)
				}
				s.must("GET", path, tok, nil, http.StatusOK, &page)
				for _, o := range page.Items {
					if st, _ := domain.StateOf(o.Status); st.InProgress {
						busy = append(busy, user+"/"+o.ID+" "+o.Status)
					}
				}
				if page.Continuation == nil || *page.Continuation == "" {
					break
				}
				cont = *page.Continuation
			}
		}
		if len(busy) == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("orders still in progress %v after the sale: %v", timeout, busy)
		}
	}
}

func urlQueryEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", "=", "%3D", "#", "%23", " ", "%20", "/", "%2F", "?", "%3F")
	return r.Replace(s)
}

// awaitFeedsOwned polls GET /v1/admin/feeds until one instance, the
// live one, holds every lease of every processor and each has caught up.
// A killed instance's lease shows the lag it last wrote until it expires
// (changefeed.Summarize): caught up, while the changes since wait for
// the live instance to take the lease. Past timeout it fails the test.
func (s *shardShop) awaitFeedsOwned(timeout time.Duration) {
	s.t.Helper()
	var since time.Time
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		var st struct {
			Processors []struct {
				Processor string `json:"processor"`
				CaughtUp  bool   `json:"caughtUp"`
				Leases    []struct {
					Owner string `json:"owner"`
				} `json:"leases"`
			} `json:"processors"`
		}
		code, b, err := s.do("GET", "/v1/admin/feeds", s.admin, nil, nil)
		ok := err == nil && code == http.StatusOK && json.Unmarshal(b, &st) == nil && len(st.Processors) > 0
		owners := map[string]bool{}
		for _, p := range st.Processors {
			ok = ok && p.CaughtUp
			for _, l := range p.Leases {
				owners[l.Owner] = true
			}
		}
		// A lease's lag is the one its loop saw on its last read (every
		// PollEvery, 200 ms, when idle): caught up for a second on end.
		if !ok || len(owners) != 1 || owners[""] {
			since = time.Time{}
		} else if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > time.Second {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the feeds did not catch up under one live instance within %v: %d %s", timeout, code, b)
		}
	}
}

// awaitAvailability polls until the product page shows the variant's
// status as the status of the sum of its shards (the inventory feed's
// copy), and GET stock answers that sum; past timeout it fails the test.
func (s *shardShop) awaitAvailability(product, sku string, timeout time.Duration) {
	s.t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		wrong := s.availabilityDiffers(product, sku)
		if wrong == "" {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal(wrong)
		}
	}
}

// availabilityDiffers says how the product page's status of the variant
// and GET stock differ from the sum of its shards ("" if they agree).
func (s *shardShop) availabilityDiffers(product, sku string) string {
	s.t.Helper()
	l := s.layout(product, sku)
	var page struct {
		Availability struct{ Status string } `json:"availability"`
		Variants     []struct {
			SKU          string                  `json:"sku"`
			Availability struct{ Status string } `json:"availability"`
		} `json:"variants"`
	}
	s.must("GET", "/v1/products/"+product, "", nil, http.StatusOK, &page)
	shown := page.Availability.Status
	if sku != "" {
		shown = ""
		for _, v := range page.Variants {
			if v.SKU == sku {
				shown = v.Availability.Status
			}
		}
	}
	var stock struct {
		Available int64  `json:"available"`
		Status    string `json:"status"`
		Shards    int    `json:"shards"`
	}
	s.must("GET", "/v1/admin/products/"+product+"/stock"+skuQuery(sku), s.admin, nil, http.StatusOK, &stock)
	want := domain.StatusOf(l.Available)
	if shown == want && stock.Available == l.Available && stock.Status == want && stock.Shards == l.Shards {
		return ""
	}
	return fmt.Sprintf("%s: the page shows %q and GET stock %+v, but its shards %v hold %d (%s)",
		domain.LineLabel(product, sku), shown, stock, l.Units, l.Available, want)
}

// checkShardsAtRest reads the stopped shop's files: no transfer in
// flight, no shard counting units sending or holding fewer than none, no
// unit in a retired shard; every order answered 201 there, cancelled if
// its cancel was answered 200 and placed otherwise.
func (s *shardShop) checkShardsAtRest(b *shardBuyers) {
	t := s.t
	t.Helper()
	st, err := embedded.Open(filepath.Join(s.dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	k := readAtKillFrom(t, st)
	if k.transfers != 0 || k.sending != 0 || k.inProgress != 0 {
		t.Errorf("at rest: %s; want nothing in flight, nothing in progress", k)
	}
	r := repo.NewInventory(st)
	for _, c := range [][2]string{{shardHot, ""}, {shardVariant, shardSKU}} {
		all, err := r.Shards(ctx, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		for i, sh := range all {
			if sh.Available < 0 || sh.Sending != 0 || (i >= all[0].Active() && sh.Available != 0) {
				t.Errorf("%s shard %d of %d active: %d available, %d sending", domain.LineLabel(c[0], c[1]), i, all[0].Active(), sh.Available, sh.Sending)
			}
		}
	}
	for _, o := range b.placed {
		got, err := repo.ReadDoc[domain.Order](ctx, st.Container(store.OrdersContainer), o.user, o.id)
		want := domain.StatusPlaced
		if o.cancelled {
			want = domain.StatusCancelled
		}
		switch {
		case err != nil:
			t.Errorf("order %s of %s answered 201: %v", o.id, o.user, err)
		case got.Status != want && !(got.Status == domain.StatusCancelled && !o.cancelled):
			// A cancel whose answer a kill lost may have happened.
			t.Errorf("order %s of %s answered 201 is %s, want %s", o.id, o.user, got.Status, want)
		}
	}
}

func readAtKillFrom(t *testing.T, st store.Store) atKill {
	t.Helper()
	ctx := context.Background()
	var k atKill
	inv := st.Container(store.InventoryContainer)
	xfers, err := writestest.QueryAll[domain.Transfer](ctx, inv, store.Query{Filters: []store.Filter{
		{Path: "type", Op: store.OpEqual, Value: domain.TypeTransfer}, {Path: "state", Op: store.OpEqual, Value: domain.TransferSent}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xfers {
		k.transfers++
		k.inFlight += x.Units
	}
	k.sent = xfers
	var stocks []domain.Stock
	for _, typ := range []string{domain.TypeStock, domain.TypeStockShard} {
		some, err := writestest.QueryAll[domain.Stock](ctx, inv, store.Query{Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: typ}}})
		if err != nil {
			t.Fatal(err)
		}
		stocks = append(stocks, some...)
	}
	r := repo.NewInventory(st)
	for _, sh := range stocks {
		k.sending += sh.Sending
		if sh.Type != domain.TypeStockShard {
			continue
		}
		if home, err := r.Stock(ctx, sh.Product(), sh.SKU); err == nil && sh.Shard >= home.Made() {
			k.orphans++
		}
	}
	orders, err := writestest.QueryAll[domain.Order](ctx, st.Container(store.OrdersContainer), store.Query{Filters: []store.Filter{
		{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orders {
		if st, _ := domain.StateOf(o.Status); st.InProgress {
			k.inProgress++
		}
	}
	return k
}

// checkAudit runs `shop audit` over the stopped shop's files: no copy
// may differ from its source.
func (s *shardShop) checkAudit() {
	s.t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), []string{"shop", "audit", "--data-dir", s.dir, "--ru-per-second", "0"}, func(string) string { return "" }, &out)
	if err != nil || strings.Contains(out.String(), "DIFFERS") {
		s.t.Errorf("shop audit: %v\n%s", err, out.String())
	}
}

// TestSplitStockAttacks tries the split stock where its author may not
// have looked, over HTTP on the real binary: bad bodies and parameters
// for stock/shards (a problem+json 4xx each, never a 5xx); a variant's
// stock split alone (?sku=), its sibling's count still accepted; two
// admins splitting and merging the same stock at once while buyers of 3
// units race for it. At rest the shop keeps the workflow's invariants,
// holds no unit in flight or in a retired shard, its pages show the sum
// of the shards, and `shop audit` finds no copy differing.
func TestSplitStockAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	const hotUnits, variantUnits = 300, 40
	s := newShardShop(t, buildShop(t), "SHOP_CHECKOUT_STALL=1s", "SHOP_SWEEP_EVERY=200ms")
	s.catalog(hotUnits, variantUnits)
	stocked := map[string]int64{shardHot: hotUnits, domain.LineLabel(shardVariant, shardSKU): variantUnits, domain.LineLabel(shardVariant, shardOther): 5}
	user := testToken(t, "nobody", false)

	t.Run("BadInputs", func(t *testing.T) {
		json := map[string]string{"Content-Type": "application/json"}
		path := shardsPath(shardHot, "")
		for _, c := range []struct {
			name, method, path, tok string
			body                    []byte
			header                  map[string]string
			want                    int
		}{
			{"zero", "PUT", path, s.admin, []byte(`{"shards":0}`), json, 400},
			{"65", "PUT", path, s.admin, []byte(`{"shards":65}`), json, 400},
			{"negative", "PUT", path, s.admin, []byte(`{"shards":-1}`), json, 400},
			{"a string", "PUT", path, s.admin, []byte(`{"shards":"4"}`), json, 400},
			{"a fraction", "PUT", path, s.admin, []byte(`{"shards":4.5}`), json, 400},
			{"an exponent", "PUT", path, s.admin, []byte(`{"shards":4e0}`), json, 400},
			{"past int64", "PUT", path, s.admin, []byte(`{"shards":99999999999999999999}`), json, 400},
			{"true", "PUT", path, s.admin, []byte(`{"shards":true}`), json, 400},
			{"null", "PUT", path, s.admin, []byte(`{"shards":null}`), json, 400},
			{"missing", "PUT", path, s.admin, []byte(`{}`), json, 400},
			{"an extra field", "PUT", path, s.admin, []byte(`{"shards":4,"units":[1,2,3,4]}`), json, 400},
			{"another case", "PUT", path, s.admin, []byte(`{"Shards":4}`), json, 400},
			{"twice", "PUT", path, s.admin, []byte(`{"shards":4,"shards":2}`), json, 400},
			{"two values", "PUT", path, s.admin, []byte(`{"shards":4}{"shards":2}`), json, 400},
			{"an array", "PUT", path, s.admin, []byte(`[4]`), json, 400},
			{"a number", "PUT", path, s.admin, []byte(`4`), json, 400},
			{"empty", "PUT", path, s.admin, []byte(``), json, 400},
			{"deep", "PUT", path, s.admin, []byte(`{"shards":4,"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`), json, 400},
			{"huge", "PUT", path, s.admin, []byte(`{"shards":4,"pad":"` + strings.Repeat("x", 70_000) + `"}`), json, 413},
			{"no type", "PUT", path, s.admin, []byte(`{"shards":4}`), nil, 415},
			{"text", "PUT", path, s.admin, []byte(`{"shards":4}`), map[string]string{"Content-Type": "text/plain"}, 415},
			{"a form", "PUT", path, s.admin, []byte(`shards=4`), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
			{"no token", "PUT", path, "", []byte(`{"shards":4}`), json, 401},
			{"a customer", "PUT", path, user, []byte(`{"shards":4}`), json, 403},
			{"a customer reads", "GET", path, user, nil, nil, 403},
			{"POST", "POST", path, s.admin, []byte(`{"shards":4}`), json, 405},
			{"DELETE", "DELETE", path, s.admin, nil, nil, 405},
			{"no product", "PUT", shardsPath("no-such", ""), s.admin, []byte(`{"shards":4}`), json, 404},
			{"no product read", "GET", shardsPath("no-such", ""), s.admin, nil, nil, 404},
			{"a bad id", "PUT", "/v1/admin/products/a%23b/stock/shards", s.admin, []byte(`{"shards":4}`), json, 400},
			{"a shard's key as id", "GET", "/v1/admin/products/" + shardHot + "%231/stock/shards", s.admin, nil, nil, 400},
			{"a SKU it does not sell", "PUT", shardsPath(shardHot, "v-x"), s.admin, []byte(`{"shards":4}`), json, 404},
			{"no SKU of a variant product", "PUT", shardsPath(shardVariant, ""), s.admin, []byte(`{"shards":4}`), json, 400},
			{"no SKU of a variant product read", "GET", shardsPath(shardVariant, ""), s.admin, nil, nil, 404},
			{"a bad SKU", "GET", shardsPath(shardVariant, "") + "?sku=a%20b", s.admin, nil, nil, 400},
			{"two SKUs", "PUT", shardsPath(shardVariant, "") + "?sku=v-m&sku=v-s", s.admin, []byte(`{"shards":4}`), json, 400},
		} {
			code, body, err := s.doRaw(c.method, c.path, c.tok, c.body, c.header)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if code != c.want || !strings.HasPrefix(body.contentType, "application/problem+json") {
				t.Errorf("%s: %s %s = %d (%s), want %d, a problem: %.300s", c.name, c.method, c.path, code, body.contentType, c.want, body.bytes)
			}
		}
		// None of it split anything.
		if l := s.layout(shardHot, ""); l.Shards != 1 || l.ShardsMade != 1 || l.Available != hotUnits {
			t.Errorf("after the bad requests: %+v", l)
		}
	})

	t.Run("Variant", func(t *testing.T) {
		var l domain.StockLayout
		s.must("PUT", shardsPath(shardVariant, shardSKU), s.admin, map[string]int{"shards": 4}, http.StatusOK, &l)
		if l.SKU != shardSKU || l.Shards != 4 || l.Available != variantUnits || !slices.Equal(l.Units, []int64{10, 10, 10, 10}) {
			t.Errorf("the variant split into 4: %+v", l)
		}
		if o := s.layout(shardVariant, shardOther); o.Shards != 1 || o.ShardsMade != 1 || o.Available != 5 {
			t.Errorf("its sibling: %+v, want it as it was", o)
		}
		code, body, _ := s.do("PUT", "/v1/admin/products/"+shardVariant+"/stock?sku="+shardSKU, s.admin, map[string]int64{"available": 7}, nil)
		if code != http.StatusConflict {
			t.Errorf("PUT stock of the split variant = %d, want 409: %s", code, body)
		}
		s.must("PUT", "/v1/admin/products/"+shardVariant+"/stock?sku="+shardOther, s.admin, map[string]int64{"available": 6}, http.StatusOK, nil)
		stocked[domain.LineLabel(shardVariant, shardOther)] = 6
		// Buyers of the variant, the sibling in the same carts.
		for i := range 8 {
			tok := testToken(t, fmt.Sprintf("vbuyer-%d", i), false)
			s.must("PUT", "/v1/cart/items/"+shardVariant+"?sku="+shardSKU, tok, map[string]int{"quantity": 1 + i%3}, http.StatusOK, nil)
			s.must("PUT", "/v1/cart/items/"+shardVariant+"?sku="+shardOther, tok, map[string]int{"quantity": 1}, http.StatusOK, nil)
			code, body, err := s.do("POST", "/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": "v"})
			if err != nil || (code != http.StatusCreated && code != http.StatusAccepted && code != http.StatusConflict) {
				t.Errorf("checkout of the variant: %d %s (%v)", code, body, err)
			}
		}
		var stock struct {
			Available int64 `json:"available"`
			Shards    int   `json:"shards"`
		}
		s.must("GET", "/v1/admin/products/"+shardVariant+"/stock?sku="+shardSKU, s.admin, nil, http.StatusOK, &stock)
		if l := s.layout(shardVariant, shardSKU); stock.Shards != 4 || stock.Available != l.Available {
			t.Errorf("GET stock of the split variant: %+v, its shards %+v", stock, l)
		}
		// Merged, it counts again; what the shards held is the count's
		// to set (stocked follows it).
		s.must("PUT", shardsPath(shardVariant, shardSKU), s.admin, map[string]int{"shards": 1}, http.StatusOK, &l)
		if l.Shards != 1 || l.Units[0] != l.Available {
			t.Errorf("the variant merged: %+v, want every unit in shard 0", l)
		}
	})

	t.Run("TwoAdmins", func(t *testing.T) {
		b := &shardBuyers{placed: map[string]*shardOrder{}, users: map[string]string{}, answered: map[int]int{}}
		stop := make(chan struct{})
		var buyers, admins sync.WaitGroup
		for i := range 5 {
			buyers.Go(func() { s.buyer(b, fmt.Sprintf("tbuyer-%d", i), uint64(i), 6, stop, 3, 3, 1) })
		}
		for a := range 2 {
			admins.Go(func() {
				tok := testToken(t, fmt.Sprintf("admin-%d", a), true)
				rng := rand.New(rand.NewPCG(uint64(a), 37))
				for range 25 {
					n := []int{1, 1, 2, 3, 4, 8, 16, 32}[rng.IntN(8)]
					code, body, err := s.do("PUT", shardsPath(shardHot, ""), tok, map[string]int{"shards": n}, nil)
					var l domain.StockLayout
					switch {
					case err != nil:
						t.Errorf("admin %d: PUT shards %d: %v", a, n, err)
					case code == http.StatusServiceUnavailable:
					case code != http.StatusOK || json.Unmarshal(body, &l) != nil:
						t.Errorf("admin %d: PUT shards %d = %d: %s", a, n, code, body)
					case l.Shards < 1 || l.ShardsMade < l.Shards || len(l.Units) != l.ShardsMade || l.Available < 0:
						t.Errorf("admin %d: PUT shards %d answered %+v", a, n, l)
					}
					time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
				}
			})
		}
		admins.Wait()
		close(stop)
		buyers.Wait()
		s.awaitOrdersSettled(b, 60*time.Second)
		for _, w := range b.wrongRefusals {
			t.Error("refused with enough:", w)
		}
		t.Logf("checkout answers %v", b.answered)
	})

	s.awaitFeedsOwned(60 * time.Second)
	s.awaitAvailability(shardHot, "", 30*time.Second)
	s.awaitAvailability(shardVariant, shardSKU, 30*time.Second)
	s.stop()
	checkMoneyAt(t, s.dir, stocked)
	s.checkShardsAtRest(&shardBuyers{})
	s.checkAudit()
	for _, bad := range s.bad {
		t.Error("answered:", bad)
	}
}

// rawBody is an answer's bytes and content type.
type rawBody struct {
	bytes       []byte
	contentType string
}

// doRaw sends body as it is, with header, and answers the status, the
// bytes and their type; a 5xx other than 503 with Retry-After is noted
// as do notes it.
func (s *shardShop) doRaw(method, path, tok string, body []byte, header map[string]string) (int, rawBody, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequest(method, *s.base.Load()+path, rd)
	if err != nil {
		return 0, rawBody{}, err
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := s.client.Do(r)
	if err != nil {
		return 0, rawBody{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 && (resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "") {
		s.badMu.Lock()
		s.bad = append(s.bad, fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, b))
		s.badMu.Unlock()
	}
	return resp.StatusCode, rawBody{b, resp.Header.Get("Content-Type")}, err
}

// TestAMergeAtRestEvensTheShards: with nobody buying, a PUT of
// stock/shards leaves the units even over the active shards (at most
// one apart) and none in a retired shard, merge or split, again and
// again.
func TestAMergeAtRestEvensTheShards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	s := newShardShop(t, buildShop(t))
	s.catalog(300, 1)
	for round := range 8 {
		for _, n := range []int{16, 3, 8, 2} {
			var l domain.StockLayout
			s.must("PUT", shardsPath(shardHot, ""), s.admin, map[string]int{"shards": n}, http.StatusOK, &l)
			if l.Available != 300 || !evenOver(l) {
				t.Errorf("round %d, PUT shards %d answered %v: want 300 units even over the %d active shards, none in the others", round, n, l.Units, n)
			}
		}
	}
	// And so they stay once the inventory feed has seen every change.
	s.awaitFeedsOwned(30 * time.Second)
	if l := s.layout(shardHot, ""); l.Available != 300 || !evenOver(l) {
		t.Errorf("at rest after the feed: %v on %d active shards, want 300 units even over them", l.Units, l.Shards)
	}
	for _, bad := range s.bad {
		t.Error("answered:", bad)
	}
}

// evenOver reports whether l's units are at most one apart over its
// active shards, and none in the retired ones.
func evenOver(l domain.StockLayout) bool {
	active := l.Units[:l.Shards]
	if slices.Max(active)-slices.Min(active) > 1 {
		return false
	}
	for _, u := range l.Units[l.Shards:] {
		if u != 0 {
			return false
		}
	}
	return true
}

// TestACountDuringAMergeIsTheCount: an admin merges a split stock back
// into one shard while another counts it (PUT stock) at once. A count
// refused (409: still split) changes nothing; a count accepted is the
// stock's units from then on, the sum of its shards, as for a stock
// never split: the units the merge was still moving home from the
// retired shards must not come on top of it.
func TestACountDuringAMergeIsTheCount(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	const rounds = 8
	s := newShardShop(t, buildShop(t))
	s.catalog(300, 1)
	other := testToken(t, "boss-2", true)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 38))
	accepted := 0
	for round := range rounds {
		s.must("PUT", shardsPath(shardHot, ""), s.admin, map[string]int{"shards": 16}, http.StatusOK, nil)
		var wg sync.WaitGroup
		var code int
		var body []byte
		wg.Go(func() {
			s.do("PUT", shardsPath(shardHot, ""), s.admin, map[string]int{"shards": 1}, nil)
		})
		wg.Go(func() {
			// During the merge's transfers, or after them.
			time.Sleep(time.Duration(rng.IntN([]int{10_000, 150_000}[round%2])) * time.Microsecond)
			code, body, _ = s.do("PUT", "/v1/admin/products/"+shardHot+"/stock", other, map[string]int64{"available": 300}, nil)
		})
		wg.Wait()
		switch code {
		case http.StatusConflict:
			continue
		case http.StatusOK:
			accepted++
		default:
			t.Fatalf("round %d: PUT stock during a merge = %d: %s", round, code, body)
		}
		// The feed drains whatever the merge left; then the count stands.
		s.awaitFeedsOwned(30 * time.Second)
		if l := s.layout(shardHot, ""); l.Available != 300 {
			t.Errorf("round %d: counted 300 during a merge, the shards then hold %v = %d", round, l.Units, l.Available)
			s.must("PUT", shardsPath(shardHot, ""), s.admin, map[string]int{"shards": 1}, http.StatusOK, nil)
			s.must("PUT", "/v1/admin/products/"+shardHot+"/stock", s.admin, map[string]int64{"available": 300}, http.StatusOK, nil)
		}
	}
	t.Logf("%d of %d counts accepted during the merge", accepted, rounds)
	for _, bad := range s.bad {
		t.Error("answered:", bad)
	}
}

// TestAVariantAddedBackShowsItsShardsSum: a variant whose stock is split
// is taken off the product and put back. The product then shows the
// status of the sum of the variant's shards (in stock), as the inventory
// feed keeps it and `shop audit` checks it, not the status of the units
// of its first shard alone (low stock): nothing moves the stock after,
// so nothing would correct it.
func TestAVariantAddedBackShowsItsShardsSum(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	s := newShardShop(t, buildShop(t))
	s.catalog(10, 12)
	var l domain.StockLayout
	s.must("PUT", shardsPath(shardVariant, shardSKU), s.admin, map[string]int{"shards": 4}, http.StatusOK, &l)
	if !slices.Equal(l.Units, []int64{3, 3, 3, 3}) {
		t.Fatalf("split into 4: %v", l.Units)
	}
	s.awaitFeedsOwned(30 * time.Second) // the feed is done with the split
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	small := map[string]any{"sku": shardOther, "attributes": map[string]string{"size": "S"}, "priceCents": 1500}
	medium := map[string]any{"sku": shardSKU, "attributes": map[string]string{"size": "M"}, "priceCents": 1600}
	for _, vs := range [][]map[string]any{{small}, {small, medium}} {
		code, body, err := s.do("PATCH", "/v1/products/"+shardVariant, s.admin, map[string]any{"variants": vs}, merge)
		if err != nil || code != http.StatusOK {
			t.Fatalf("PATCH variants %v: %d %s (%v)", vs, code, body, err)
		}
	}
	s.awaitFeedsOwned(30 * time.Second)
	if wrong := s.availabilityDiffers(shardVariant, shardSKU); wrong != "" {
		t.Error(wrong)
	}
	s.stop()
	s.checkAudit()
}
