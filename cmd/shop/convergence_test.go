package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestEveryCopyConverges is the shop's convergence property: random
// interleavings of every write the API offers (categories created and
// renamed; products created, with ids that collide, patched, moved and
// deleted, given variants, changed and taken away; stock counted, per
// variant too, and split into shards and merged back; reviews; cart
// lines, of variants too; checkouts, cancels and shipping), several at
// once, while the feeds run behind (latency on
// every feed read), their batches fail half way and run again (injected
// unavailability on the copies' writes) and the processors restart. When
// the writes stop and the feeds have caught up, the audit
// (feedworkers.Audit) derives every copy from its sources and none may
// differ, be missing, or outlive its source. The audit refuses a
// document type it does not know, so a new copy fails here until the
// audit derives it.
//
// The default run explores for a few seconds; SHOP_LONG=1 explores ten
// minutes.
func TestEveryCopyConverges(t *testing.T) {
	budget := 8 * time.Second
	if longRun() {
		budget = 10 * time.Minute
	}
	shortShrink(t, 20*time.Second)
	e := newExplorer(t, budget)
	var steps, writes, refused, audits, compared int
	prop := func(rt *rapid.T) {
		ft, path, ok := e.start(rt, "converge")
		if !ok {
			return
		}
		c := newConvergence(ft, path)
		rt.Repeat(c.actions())
		c.settle()
		steps += c.steps
		writes += int(c.writes.Load())
		refused += int(c.refused.Load())
		audits += c.audits
		compared += c.compared
	}
	// rapid.Check runs 100 sequences; the long run checks again, each
	// time from a new seed, until its budget is spent.
	for rapid.Check(t, prop); longRun() && time.Since(e.began) < budget && !t.Failed(); {
		rapid.Check(t, prop)
	}
	t.Logf("%d sequences run (%d steps, %d writes answered 2xx, %d refused; %d audits compared %d copies, none left differing), %d not run past the time budget, in %v",
		e.ran, steps, writes, refused, audits, compared, e.skipped, time.Since(e.began).Round(time.Millisecond))
}

// convergence is one random run of the shop: a few categories, products,
// customers and their orders, all drawn from small pools so that writes
// meet.
type convergence struct {
	t     *flagT
	s     *liveShop
	admin string
	users []convUser
	steps int
	// audits and compared count the audits run and the copies they
	// compared.
	audits, compared int
	// second is another instance's feed workers on the same store; crash
	// cancels them in the middle of whatever batch they run, unfinished
	// and not checkpointed.
	second *feedworkers.Workers
	crash  context.CancelFunc

	writes, refused atomic.Int64
}

var (
	convCategories = []string{"tea", "mugs", "books"}
	convProducts   = []string{"p1", "p2", "p3", "p4", "p5", "p6"}
	convNames      = []string{"Green Tea", "Black Tea", "Blue Mug", "Red Mug", "Old Book", "New Book", "Tea Mug"}
	convCatNames   = []string{"Tea", "Teas", "Mugs", "Cups", "Books", "Reading", "Gifts"}
	convTags       = []string{"gift", "organic", "sale", "new"}
	// convSKUs are the variants products may be given ("" names a
	// product's implicit one): a line, a count or a change may name one
	// the product does not sell at the time, and the shop must refuse it.
	convSKUs = []string{"", "v-s", "v-m", "v-l"}
)

// convVariants draws a product's variants: sizes from convSKUs with
// prices, or none (back to one implicit variant).
func convVariants(t *rapid.T) []map[string]any {
	skus := rapid.SliceOfNDistinct(rapid.SampledFrom(convSKUs[1:]), 0, 3, rapid.ID[string]).Draw(t, "variant skus")
	out := []map[string]any{}
	for _, sku := range skus {
		out = append(out, map[string]any{"sku": sku, "attributes": map[string]string{"size": strings.ToUpper(sku[2:])},
			"priceCents": rapid.Int64Range(100, 5000).Draw(t, "variant price"), "stock": rapid.Int64Range(0, 4).Draw(t, "variant stock")})
	}
	return out
}

// skuQuery is the ?sku= of a drawn SKU, "" for none.
func skuQuery(sku string) string {
	if sku == "" {
		return ""
	}
	return "?sku=" + sku
}

func newConvergence(t *flagT, path string) *convergence {
	// The feeds run behind: every change-feed read waits, every copy's
	// write fails now and then, so a batch stops half way and runs again.
	fc := &faults.Config{Seed: rapid.Uint64().Draw(t.T, "fault seed"), Rules: []faults.Rule{
		{Ops: []faults.Op{faults.OpReadChangeFeed}, Latency: time.Duration(rapid.IntRange(0, 3).Draw(t.T, "feed latency ms")) * time.Millisecond},
		{Ops: faults.Writes, Containers: []string{store.ProductsByCategoryContainer, store.ProductsByTermContainer, store.OrdersByStatusContainer},
			Unavailable: rapid.SampledFrom([]float64{0, 0.02, 0.1}).Draw(t.T, "copy write failures")},
	}}
	c := &convergence{t: t, s: newLiveShop(t, path, fc), admin: liveToken(t, "boss", true)}
	// A second instance shares the feeds' leases: batches of one feed run
	// on two processes, and every restart hands leases over.
	c.startSecond()
	t.Cleanup(c.stopSecond)
	for i := range 3 {
		id := fmt.Sprintf("buyer-%d", i)
		c.users = append(c.users, convUser{id, liveToken(t, id, false)})
	}
	// One category and three of its products to start from.
	c.must("PUT", "/v1/categories/tea", c.admin, map[string]string{"name": "Tea"})
	for _, id := range convProducts[:2] {
		c.must("POST", "/v1/products", c.admin, map[string]any{"productId": id, "name": "Green Tea", "priceCents": 500, "categoryId": "tea", "stock": 5})
	}
	// And one sold in two sizes, a few units each, so that sales and
	// counts move its variants' statuses.
	c.must("POST", "/v1/products", c.admin, map[string]any{"productId": convProducts[2], "name": "Tea Mug", "categoryId": "tea", "stock": 2,
		"variants": []map[string]any{
			{"sku": "v-s", "attributes": map[string]string{"size": "S"}, "priceCents": 700},
			{"sku": "v-m", "attributes": map[string]string{"size": "M"}, "priceCents": 900},
		}})
	return c
}

func (c *convergence) startSecond() {
	var st store.Store = c.s.raw
	if c.s.faults != nil {
		st = c.s.faults
	}
	cfg := liveWorkers
	cfg.Processor.Instance = "live-2"
	ctx, cancel := context.WithCancel(context.Background())
	w, err := feedworkers.Start(ctx, st, writes.New(repo.New(store.Metered(st), 0), c.s.pay, nil), cfg)
	if err != nil {
		cancel()
		c.t.Fatalf("start the second instance's feed workers: %v", err)
	}
	c.second, c.crash = w, cancel
}

func (c *convergence) stopSecond() {
	if c.second == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A crashed instance's batches end in errors of their own.
	_ = c.second.Stop(ctx)
	c.crash()
	c.second = nil
}

func (c *convergence) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"burst":   c.burst,
		"restart": c.restart,
		"settle":  func(*rapid.T) { c.steps++; c.settle() },
	}
}

// burst sends a few writes at once: the interleavings nobody wrote down.
func (c *convergence) burst(t *rapid.T) {
	c.steps++
	n := rapid.IntRange(1, 6).Draw(t, "writes at once")
	var reqs []func()
	for range n {
		reqs = append(reqs, c.write(t))
	}
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Go(r)
	}
	wg.Wait()
}

// write draws one write the API offers and returns the call that sends it.
func (c *convergence) write(t *rapid.T) func() {
	product := rapid.SampledFrom(convProducts).Draw(t, "product")
	category := rapid.SampledFrom(convCategories).Draw(t, "category")
	u := rapid.SampledFrom(c.users).Draw(t, "user")
	user := u.token
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	sku := rapid.SampledFrom(convSKUs).Draw(t, "sku")
	switch kind := rapid.SampledFrom([]string{
		"category", "create", "create", "price", "rename", "tags", "move", "move", "delete",
		"stock", "review", "cart", "cart", "checkout", "cancel", "ship", "variants", "variants", "shards", "shards",
	}).Draw(t, "write"); kind {
	case "category":
		name := rapid.SampledFrom(convCatNames).Draw(t, "category name")
		return c.send("PUT", "/v1/categories/"+category, c.admin, map[string]string{"name": name}, nil)
	case "create":
		body := map[string]any{"productId": product, "name": rapid.SampledFrom(convNames).Draw(t, "name"),
			"priceCents": rapid.Int64Range(100, 5000).Draw(t, "price"), "categoryId": category,
			"stock": rapid.Int64Range(0, 12).Draw(t, "stock"), "tags": rapid.SliceOfNDistinct(rapid.SampledFrom(convTags), 0, 3, rapid.ID[string]).Draw(t, "tags")}
		if vs := convVariants(t); len(vs) > 0 {
			delete(body, "priceCents")
			body["variants"] = vs
		}
		return c.send("POST", "/v1/products", c.admin, body, nil)
	case "variants":
		return c.send("PATCH", "/v1/products/"+product, c.admin, map[string]any{"variants": convVariants(t)}, merge)
	case "price":
		return c.send("PATCH", "/v1/products/"+product, c.admin, map[string]int64{"priceCents": rapid.Int64Range(100, 5000).Draw(t, "price")}, merge)
	case "rename":
		return c.send("PATCH", "/v1/products/"+product, c.admin, map[string]string{"name": rapid.SampledFrom(convNames).Draw(t, "name")}, merge)
	case "tags":
		return c.send("PATCH", "/v1/products/"+product, c.admin, map[string][]string{"tags": rapid.SliceOfNDistinct(rapid.SampledFrom(convTags), 0, 3, rapid.ID[string]).Draw(t, "tags")}, merge)
	case "move":
		return c.send("PATCH", "/v1/products/"+product, c.admin, map[string]string{"categoryId": category}, merge)
	case "delete":
		return c.send("DELETE", "/v1/products/"+product, c.admin, nil, nil)
	case "stock":
		return c.send("PUT", "/v1/admin/products/"+product+"/stock"+skuQuery(sku), c.admin, map[string]int64{"available": rapid.Int64Range(0, 12).Draw(t, "available")}, nil)
	case "shards":
		return c.send("PUT", "/v1/admin/products/"+product+"/stock/shards"+skuQuery(sku), c.admin, map[string]int{"shards": rapid.IntRange(1, 4).Draw(t, "shards")}, nil)
	case "review":
		body := map[string]any{"rating": rapid.IntRange(1, 5).Draw(t, "rating"), "title": "Fine", "body": "It is fine."}
		return c.send("POST", "/v1/products/"+product+"/reviews", user, body, nil)
	case "cart":
		return c.send("PUT", "/v1/cart/items/"+product+skuQuery(sku), user, map[string]int{"quantity": rapid.IntRange(1, 3).Draw(t, "quantity")}, nil)
	case "checkout":
		key := fmt.Sprintf("k-%d", rapid.IntRange(0, 1<<30).Draw(t, "key"))
		return c.send("POST", "/v1/checkout", user, addressBody, map[string]string{"Idempotency-Key": key})
	case "cancel", "ship":
		// The user's newest order, read when the call runs.
		return func() {
			var page struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			if !c.try("GET", "/v1/orders?limit=1", user, nil, nil, &page) || len(page.Items) == 0 {
				return
			}
			id := page.Items[0].ID
			if kind == "cancel" {
				c.try("POST", "/v1/orders/"+id+"/cancel", user, nil, nil, nil)
				return
			}
			c.try("PATCH", "/v1/admin/orders/"+u.id+"/"+id, c.admin, map[string]string{"status": "shipped"}, nil, nil)
		}
	default:
		panic("unknown write " + kind)
	}
}

type convUser struct{ id, token string }

// send returns a call of one write. Any answer but a 5xx is the shop's to
// give: a write that collides with another is refused (409, 404, 412),
// and convergence must hold whatever was refused. A 503 (an injected
// fault the request did not ride through) is allowed too: the write may
// have been applied in part, which is what the audit is for.
func (c *convergence) send(method, path, tok string, body any, header map[string]string) func() {
	return func() { c.try(method, path, tok, body, header, nil) }
}

func (c *convergence) try(method, path, tok string, body any, header map[string]string, out any) bool {
	code, b, err := httpDo(c.s.client, method, c.s.URL+path, tok, body, header)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	switch {
	case code >= 500 && code != http.StatusServiceUnavailable:
		c.t.Fatalf("%s %s = %d %s", method, path, code, describe(b))
	case code >= 400:
		c.refused.Add(1)
		return false
	}
	c.writes.Add(1)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, describe(b), err)
		}
	}
	return true
}

func (c *convergence) must(method, path, tok string, body any) {
	if !c.try(method, path, tok, body, nil, nil) {
		c.t.Fatalf("%s %s was refused", method, path)
	}
}

// restart restarts the shop's process, or only the second instance's
// workers (their leases go to the first, then some come back); the
// second instance is stopped as a crash would stop it, in the middle of
// its batches, which the first then runs again from their checkpoints.
func (c *convergence) restart(t *rapid.T) {
	c.steps++
	if rapid.Bool().Draw(t, "crash") {
		c.crash()
	}
	c.stopSecond()
	if rapid.Bool().Draw(t, "whole shop") {
		c.s.restart()
	}
	c.startSecond()
}

// settle heals the store, waits until the feeds have caught up and then
// audits every copy: any difference still there once the feeds have been
// caught up for a while fails the run.
//
// A lease's lag is the one its last poll saw, and a handler's own writes
// (a product renamed to its category's name, a repair) land on the feed
// after the batch that made them was checkpointed: "caught up" can be said
// a moment before the last such change is read, longer on a loaded
// machine. So a difference sends the settle back to waiting, and only one
// that outlives several rounds of caught-up feeds, past a few seconds,
// counts: a copy that diverged for good stays so.
func (c *convergence) settle() {
	if c.s.faults != nil {
		c.s.faults.Heal()
		defer c.s.faults.Break()
	}
	deadline := time.Now().Add(30 * time.Second)
	settled := time.Now().Add(3 * time.Second)
	for {
		c.awaitCaughtUp(deadline)
		h := feedworkers.NewHandlers(c.s.raw, writes.New(repo.New(c.s.raw, 0), c.s.pay, nil), feedworkers.HandlersConfig{})
		r, err := h.Audit(context.Background(), feedworkers.AuditOptions{})
		if err != nil {
			c.t.Fatalf("audit: %v", err)
		}
		c.audits++
		for _, n := range r.Checked {
			c.compared += n
		}
		if len(r.Differences) == 0 {
			return
		}
		if time.Now().Before(settled) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		var lines []string
		for _, d := range r.Differences {
			lines = append(lines, d.String())
		}
		// The ids vary from run to run; the failure names the copies, so
		// rapid compares like with like while it shrinks. The differences
		// go to stderr too: rapid keeps only the log of the sequence it
		// shrank to, and a race may not fail again there.
		c.t.Logf("after the feeds caught up:\n%s", strings.Join(lines, "\n"))
		fmt.Fprintf(os.Stderr, "TestEveryCopyConverges: after the feeds caught up:\n%s\n", strings.Join(lines, "\n"))
		c.t.Fatalf("copies differ from their sources: %v", r.ByCopy())
	}
}

// awaitCaughtUp waits until every lease of both instances has no change
// ahead of it in 5 polls in a row.
func (c *convergence) awaitCaughtUp(deadline time.Time) {
	for still := 0; still < 5; time.Sleep(10 * time.Millisecond) {
		lag := c.feedLag()
		if lag == "" {
			still++
		} else {
			still = 0
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the feeds did not catch up in 30 s: %s", lag)
		}
	}
}

// feedLag describes the first lease, of either instance, that still has
// changes ahead of it ("" when none has): each lease as its owner sees it.
func (c *convergence) feedLag() string {
	lag := map[string]int64{}
	for _, w := range []*feedworkers.Workers{c.s.wk, c.second} {
		if w == nil {
			continue
		}
		st, err := w.FeedStatus(context.Background())
		if err != nil {
			return err.Error()
		}
		for _, ps := range st {
			for _, l := range ps.Leases {
				key := ps.Processor + " lease " + l.Lease
				if old, seen := lag[key]; !seen || old != 0 {
					lag[key] = l.LagEstimate
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(lag)) {
		if lag[k] != 0 {
			return fmt.Sprintf("%s lag %d", k, lag[k])
		}
	}
	return ""
}

// GoString keeps rapid's log of a drawn user to its id.
func (u convUser) GoString() string { return u.id }
