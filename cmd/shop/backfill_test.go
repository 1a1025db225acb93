package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/backfill"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// A shop whose every document is of version 1 (schemaVersion 1, no
// variant field) keeps answering every screen as it did while the
// backfill runs beside it, on a small budget, while a customer changes
// the cart, and after it; then the audit finds every copy derived from
// its sources, and no document below version 2 is left but those with a
// ttl, which the backfill reports as left to expire.
func TestBackfillUnderTheShop(t *testing.T) {
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
	ids := s.catalog(4)
	admin := liveToken(t, "boss", true)
	buyer, changer := liveToken(t, "buyer", false), liveToken(t, "changer", false)
	s.must("POST", "/v1/products/"+ids[0]+"/reviews", buyer, map[string]any{"rating": 4, "title": "Fine", "body": "A fine tea."}, nil, http.StatusCreated, nil)
	s.must("PUT", "/v1/cart/items/"+ids[1], buyer, map[string]int{"quantity": 2}, nil, http.StatusOK, nil)
	var o liveOrder
	s.must("POST", "/v1/checkout", buyer, addressBody, map[string]string{"Idempotency-Key": "k-buyer"}, http.StatusCreated, &o)
	s.must("PUT", "/v1/cart/items/"+ids[2], buyer, map[string]int{"quantity": 1}, nil, http.StatusOK, nil)
	s.must("PUT", "/v1/cart/items/"+ids[3], changer, map[string]int{"quantity": 1}, nil, http.StatusOK, nil)
	s.awaitOrdersRest(buyer, 20*time.Second)
	users := map[string]string{"buyer": buyer, "changer": changer}
	if stale := s.awaitConverged(users, 20*time.Second); stale != nil {
		t.Fatalf("not converged before the downgrade: %v", stale)
	}

	// Every document as the shop wrote it before variants.
	downgraded := downgradeAll(t, s.raw)
	if stale := s.awaitConverged(users, 20*time.Second); stale != nil {
		t.Fatalf("not converged after the downgrade: %v", stale)
	}
	v1 := belowCurrent(t, s.raw)
	if len(v1) < downgraded/2 {
		t.Fatalf("only %d of %d documents still of version 1 once the feeds caught up", len(v1), downgraded)
	}

	screens := []struct{ path, tok string }{
		{"/v1/categories", ""}, {"/v1/categories/tea/products", ""}, {"/v1/products/" + ids[0], ""},
		{"/v1/products/" + ids[0] + "/reviews", ""}, {"/v1/search?q=tea", ""},
		{"/v1/cart", buyer}, {"/v1/orders", buyer}, {"/v1/orders/" + o.ID, buyer}, {"/v1/me/summary", buyer},
		{"/v1/admin/products/" + ids[1] + "/stock", admin},
	}
	want := map[string]string{}
	for _, sc := range screens {
		want[sc.path] = string(s.must("GET", sc.path, sc.tok, nil, nil, http.StatusOK, nil))
	}
	same := func(when string) {
		t.Helper()
		for _, sc := range screens {
			if got := string(s.must("GET", sc.path, sc.tok, nil, nil, http.StatusOK, nil)); got != want[sc.path] {
				t.Errorf("%s: GET %s changed:\n%s\nwas\n%s", when, sc.path, describe([]byte(got)), describe([]byte(want[sc.path])))
			}
		}
	}

	// The backfill on a small budget, the screens read and a cart
	// changed all the while.
	var rep backfill.Report
	var berr error
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		rep, berr = backfill.Run(context.Background(), s.raw, backfill.Options{RUPerSecond: 400, PageSize: 5})
	})
	rounds := 0
	for q := 1; ; q = q%3 + 1 {
		select {
		case <-done:
		default:
			same("during the backfill")
			s.must("PUT", "/v1/cart/items/"+ids[3], changer, map[string]int{"quantity": q}, nil, http.StatusOK, nil)
			var c liveCart
			s.must("GET", "/v1/cart", changer, nil, nil, http.StatusOK, &c)
			if len(c.Items) != 1 || c.Items[0].Quantity != q {
				t.Errorf("during the backfill the changer's cart shows %+v, want %d of %s", c.Items, q, ids[3])
			}
			rounds++
			continue
		}
		break
	}
	wg.Wait()
	if berr != nil {
		t.Fatal(berr)
	}
	if rounds < 2 {
		t.Errorf("only %d rounds of screens during the backfill: it ran too fast to tell", rounds)
	}
	t.Logf("backfill: %+v; %d rounds of screens during it", rep.Total, rounds)
	same("after the backfill")
	if stale := s.awaitConverged(users, 20*time.Second); stale != nil {
		t.Fatalf("not converged after the backfill: %v", stale)
	}
	h := feedworkers.NewHandlers(s.raw, writes.New(repo.New(s.raw, 0), s.pay, nil), feedworkers.HandlersConfig{})
	r, err := h.Audit(context.Background(), feedworkers.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Differences {
		t.Errorf("audit: %s", d)
	}
	if rep.Total.Upgraded == 0 {
		t.Error("the backfill upgraded nothing")
	}
	for _, doc := range belowCurrent(t, s.raw) {
		if !doc.ttl {
			t.Errorf("%s is still of version %d after the backfill, and has no ttl", doc.name, doc.version)
		}
	}
	if rep.Total.Expiring == 0 {
		t.Error("the backfill reports no document left to expire; the carts carry a ttl")
	}
}

// A document a newer build wrote (schemaVersion 3, a field this build
// does not know) is never written back by this one: the product's
// update and the cart's write answer 503 as problem+json, the cart
// fan-out of a price change fails its batch EUNAVAILABLE (and retries),
// the backfill skips both, and the stored bytes keep version 3 and the
// field.
func TestNewerDocumentsAreNotDowngraded(t *testing.T) {
	refused := make(chan string, 1)
	wc := liveWorkers
	wc.TraceBatch = func(ctx context.Context, processor, lease string) (context.Context, func(int, float64, error)) {
		return ctx, func(_ int, _ float64, err error) {
			if domain.IsCode(err, domain.EUNAVAILABLE) && strings.Contains(err.Error(), "schema version 3") {
				select {
				case refused <- processor + ": " + err.Error():
				default:
				}
			}
		}
	}
	s := newLiveShopWith(t, filepath.Join(t.TempDir(), "shop.db"), nil, wc)
	ids := s.catalog(1)
	admin, fut := liveToken(t, "boss", true), liveToken(t, "fut", false)
	ctx := context.Background()
	product := fmt.Sprintf(`{"id":"future","type":"product","schemaVersion":3,"name":"Future tea","categoryId":"tea","categoryName":"Tea","priceCents":900,"currency":"USD","version":1,"priceVersion":1,"futureField":{"kept":true}}`)
	if _, err := s.raw.Container(store.ProductsContainer).Upsert(ctx, "future", []byte(product), nil); err != nil {
		t.Fatal(err)
	}
	cart := fmt.Sprintf(`{"id":"fut","type":"cart","schemaVersion":3,"userId":"fut","items":[{"productId":%q,"name":"Tea %s","unitPriceCents":500,"priceVersion":1,"quantity":1,"lineTotalCents":500,"available":true}],"productIds":[%q],"itemCount":1,"subtotalCents":500,"lastUpdated":"2026-11-02T10:00:00Z","futureField":"kept"}`, ids[0], ids[0], ids[0])
	if _, err := s.raw.Container(store.CartsContainer).Upsert(ctx, "fut", []byte(cart), nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		method, path, tok string
		body              any
		header            map[string]string
	}{
		{"PATCH", "/v1/products/future", admin, map[string]string{"name": "Downgraded"}, map[string]string{"Content-Type": "application/merge-patch+json"}},
		{"PUT", "/v1/cart/items/" + ids[0], fut, map[string]int{"quantity": 3}, nil},
	} {
		code, ctype, body := doWithType(t, s, w.method, w.path, w.tok, w.body, w.header)
		var p liveProblem
		if code != http.StatusServiceUnavailable || ctype != "application/problem+json" || json.Unmarshal(body, &p) != nil || p.Status != http.StatusServiceUnavailable {
			t.Errorf("%s %s on a version-3 document = %d %s %s, want a 503 problem", w.method, w.path, code, ctype, describe(body))
		}
	}
	// A price change fans out to the carts holding the product: the
	// version-3 cart's rewrite is refused, and the batch retried.
	s.must("PATCH", "/v1/products/"+ids[0], admin, map[string]int64{"priceCents": 777}, map[string]string{"Content-Type": "application/merge-patch+json"}, http.StatusOK, nil)
	select {
	case why := <-refused:
		t.Logf("the feed refused: %s", why)
	case <-time.After(20 * time.Second):
		t.Error("no feed batch was refused for the version-3 cart")
	}
	rep, err := backfill.Run(ctx, s.raw, backfill.Options{RUPerSecond: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Containers[store.ProductsContainer].Newer != 1 || rep.Containers[store.CartsContainer].Newer != 1 {
		t.Errorf("the backfill counts newer: products %+v, carts %+v", rep.Containers[store.ProductsContainer], rep.Containers[store.CartsContainer])
	}
	for _, d := range []struct{ container, pk, field string }{{store.ProductsContainer, "future", "futureField"}, {store.CartsContainer, "fut", "futureField"}} {
		r, err := s.raw.Container(d.container).Read(ctx, d.pk, d.pk)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(r.Item, &m)
		if m["schemaVersion"] != 3.0 || m[d.field] == nil {
			t.Errorf("%s %s stored as %s", d.container, d.pk, r.Item)
		}
	}
	// A newer instance would take the cart over; here it goes, so the
	// retried fan-out ends and the workers stop.
	if _, err := s.raw.Container(store.CartsContainer).Delete(ctx, "fut", "fut", nil); err != nil {
		t.Fatal(err)
	}
}

// doWithType is liveShop.do that returns the Content-Type too.
func doWithType(t *testing.T, s *liveShop, method, path, tok string, body any, header map[string]string) (int, string, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+tok)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := s.client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

// downgradeAll rewrites every document of the shop's containers as
// version 1: schemaVersion 1, no variant field. It returns how many.
func downgradeAll(t *testing.T, st store.Store) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, name := range backfill.Containers {
		c := st.Container(name)
		pkProp := ""
		for _, d := range containerDefs() {
			if d.ID == name {
				pkProp = strings.TrimPrefix(d.PartitionKeyPath, "/")
			}
		}
		q := store.Query{Limit: store.MaxQueryPageSize}
		for {
			page, err := c.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				// A feed worker may rewrite the document meanwhile (the
				// shop runs): read it again and downgrade what it is now.
				for attempt := 0; ; attempt++ {
					var m map[string]any
					if err := json.Unmarshal(it, &m); err != nil {
						t.Fatal(err)
					}
					etag, _ := m["_etag"].(string)
					for _, f := range []string{"_etag", "_ts", "_rid", "_self", "_lsn"} {
						delete(m, f)
					}
					b, err := backfill.VersionOne(m)
					if err != nil {
						t.Fatal(err)
					}
					pk, _ := m[pkProp].(string)
					_, err = c.Replace(ctx, pk, m["id"].(string), b, &store.WriteOptions{IfMatch: etag})
					if domain.IsCode(err, domain.EPRECONDITION) && attempt < 20 {
						r, rerr := c.Read(ctx, pk, m["id"].(string))
						if rerr != nil {
							t.Fatalf("downgrade %s %s: read again: %v", name, b, rerr)
						}
						it = r.Item
						continue
					}
					if err != nil {
						t.Fatalf("downgrade %s %s: %v", name, b, err)
					}
					break
				}
				n++
			}
			if page.Continuation == "" {
				break
			}
			q.Continuation = page.Continuation
		}
	}
	return n
}

type oldDoc struct {
	name    string
	version int
	ttl     bool
}

// belowCurrent lists the documents of the shop's containers below
// domain.SchemaVersion, and whether each carries a ttl (its own, or its
// container's default).
func belowCurrent(t *testing.T, st store.Store) []oldDoc {
	t.Helper()
	var out []oldDoc
	for _, def := range containerDefs() {
		if def.ID == store.LeasesContainer {
			continue
		}
		q := store.Query{Limit: store.MaxQueryPageSize}
		for {
			page, err := st.Container(def.ID).Query(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				var h struct {
					ID, Type      string
					SchemaVersion int
					TTL           *int
				}
				if err := json.Unmarshal(it, &h); err != nil {
					t.Fatal(err)
				}
				if h.SchemaVersion < domain.SchemaVersion {
					ttl := (h.TTL != nil && *h.TTL != -1) || (h.TTL == nil && def.DefaultTTL != nil && *def.DefaultTTL > 0)
					out = append(out, oldDoc{fmt.Sprintf("%s/%s/%s", def.ID, h.Type, h.ID), h.SchemaVersion, ttl})
				}
			}
			if page.Continuation == "" {
				break
			}
			q.Continuation = page.Continuation
		}
	}
	return out
}

func containerDefs() []store.ContainerDef { return migrations.Containers }

// migrate's own flags come out of the arguments and leave the settings'
// flags to parseConfig; a budget that is not a number from 1 up is
// refused.
func TestBackfillFlags(t *testing.T) {
	rest, o, err := backfillFlags([]string{"--data-dir", "/tmp/x", "--backfill", "--ru-per-second", "50"})
	if err != nil || !o.on || o.ruPerSecond != 50 || strings.Join(rest, " ") != "--data-dir /tmp/x" {
		t.Errorf("got %v %+v %v", rest, o, err)
	}
	if _, o, err := backfillFlags([]string{"-ru-per-second=300"}); err != nil || o.on || o.ruPerSecond != 300 {
		t.Errorf("got %+v %v", o, err)
	}
	if _, o, _ := backfillFlags(nil); o.on || o.ruPerSecond != backfill.DefaultRUPerSecond {
		t.Errorf("defaults: %+v", o)
	}
	for _, bad := range [][]string{{"--ru-per-second"}, {"--ru-per-second", "0"}, {"--ru-per-second=lots"}, {"--ru-per-second", "-5"}} {
		if _, _, err := backfillFlags(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}
