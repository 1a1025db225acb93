package backfill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

func openStore(t *testing.T) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := migrations.Apply(t.Context(), s, io.Discard); err != nil {
		t.Fatal(err)
	}
	return s
}

// v1 is doc as the shop wrote it before variants: schemaVersion 1 and
// none of the fields version 2 added.
func v1(t *testing.T, doc any) []byte {
	t.Helper()
	b, err := backfill.VersionOne(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, s store.Store, container, pk string, raw []byte) {
	t.Helper()
	if _, err := s.Container(container).Upsert(context.Background(), pk, raw, nil); err != nil {
		t.Fatalf("%s %s: %v", container, raw, err)
	}
}

// seedV1 writes a small shop of version-1 documents: products, their
// stock, reservations, summaries and search entries, a review, carts with
// lines, orders with lines and their summaries. It returns how many are
// to be rewritten (every one without a ttl) and how many carry one.
func seedV1(t *testing.T, s store.Store, products int) (rewrite, expiring int) {
	t.Helper()
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	for i := range products {
		id := fmt.Sprintf("p%03d", i)
		p := domain.Product{Meta: domain.Meta{ID: id, Type: domain.TypeProduct}, Name: "Tea " + id, CategoryID: "tea", CategoryName: "Tea",
			PriceCents: 500 + int64(i), Currency: "USD", Version: 3, PriceVersion: 2}
		p.Availability.Status = domain.InStock
		put(t, s, store.ProductsContainer, id, v1(t, p))
		put(t, s, store.InventoryContainer, id, v1(t, domain.Stock{Meta: domain.Meta{ID: domain.StockIDOf(""), Type: domain.TypeStock}, ProductID: id, Available: 10, Version: 1, LastUpdated: now}))
		put(t, s, store.ProductsByCategoryContainer, "tea", v1(t, domain.SummaryOfProduct(p)))
		e := domain.EntryOfProduct(p, "tea", []string{"tea"})
		put(t, s, store.ProductsByTermContainer, "tea", v1(t, e))
		rewrite += 4
	}
	put(t, s, store.ReviewsContainer, "p000", v1(t, domain.Review{Meta: domain.Meta{ID: "r1", Type: domain.TypeReview}, ProductID: "p000", UserID: "u1", Rating: 5, Title: "Good", CreatedAt: now}))
	rewrite++
	for u := range 3 {
		user := fmt.Sprintf("u%d", u)
		line := domain.CartLine{ProductID: "p000", Name: "Tea p000", UnitPriceCents: 500, PriceVersion: 2, Quantity: 2, LineTotalCents: 1000, Available: true}
		put(t, s, store.CartsContainer, user, v1(t, domain.Cart{Meta: domain.Meta{ID: user, Type: domain.TypeCart}, UserID: user,
			Items: []domain.CartLine{line}, ProductIDs: []string{"p000"}, ItemCount: 2, SubtotalCents: 1000, LastUpdated: now}))
		expiring++ // carts: the container's default ttl
		o := domain.Order{Meta: domain.Meta{ID: "o-" + user, Type: domain.TypeOrder}, UserID: user, Status: domain.StatusPlaced, TotalCents: 1000, CreatedAt: now,
			Items: []domain.OrderLine{{ProductID: "p000", Name: "Tea p000", UnitPriceCents: 500, Quantity: 2, LineTotalCents: 1000}}}
		put(t, s, store.OrdersContainer, user, v1(t, o))
		put(t, s, store.InventoryContainer, "p000", v1(t, domain.Reservation{Meta: domain.Meta{ID: domain.ReservationID(o.ID, ""), Type: domain.TypeReservation},
			ProductID: "p000", OrderID: o.ID, UserID: user, Quantity: 2, State: domain.ReservationHeld, CreatedAt: now}))
		sum := domain.SummaryOf(o, 1)
		put(t, s, store.OrdersByStatusContainer, sum.StatusDay, v1(t, sum))
		rewrite += 3
		ttl := 3600
		put(t, s, store.OrdersContainer, user, v1(t, domain.Idempotency{Meta: domain.Meta{ID: domain.IdempotencyID("k-" + user), Type: domain.TypeIdempotency, TTL: &ttl},
			UserID: user, Key: "k-" + user, OrderID: o.ID, CreatedAt: now}))
		expiring++ // its own ttl
	}
	return rewrite, expiring
}

// counting counts the writes to the containers of shop documents, by
// document, and calls hook after each.
type counting struct {
	store.Store
	mu     sync.Mutex
	writes map[string]int
	hook   func(n int)
}

func (c *counting) Container(name string) store.Container {
	inner := c.Store.Container(name)
	if name == store.LeasesContainer {
		return inner
	}
	return countingContainer{inner, c, name}
}

func (c *counting) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.writes {
		n += v
	}
	return n
}

type countingContainer struct {
	store.Container
	c    *counting
	name string
}

func (cc countingContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := cc.Container.Replace(ctx, pk, id, item, opts)
	if err == nil {
		cc.c.mu.Lock()
		if cc.c.writes == nil {
			cc.c.writes = map[string]int{}
		}
		cc.c.writes[cc.name+"/"+pk+"/"+id]++
		n := len(cc.c.writes)
		cc.c.mu.Unlock()
		if cc.c.hook != nil {
			cc.c.hook(n)
		}
	}
	return r, err
}

// below lists every document of the shop's containers below version 2.
func below(t *testing.T, s store.Store) []string {
	t.Helper()
	var out []string
	for _, name := range backfill.Containers {
		q := store.Query{Limit: store.MaxQueryPageSize}
		for {
			page, err := s.Container(name).Query(context.Background(), q)
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
					out = append(out, fmt.Sprintf("%s/%s/%s", name, h.Type, h.ID))
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

// The backfill rewrites every version-1 document without a ttl once,
// leaves those with one to expire and says so; a second run reads
// everything again and writes nothing.
func TestBackfillUpgradesOnceThenWritesNothing(t *testing.T) {
	raw := openStore(t)
	rewrite, expiring := seedV1(t, raw, 12)
	s := &counting{Store: raw}
	var log bytes.Buffer
	rep, err := backfill.Run(t.Context(), s, backfill.Options{RUPerSecond: 1e6, PageSize: 7, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Upgraded != rewrite || rep.Total.Expiring != expiring || s.total() != rewrite {
		t.Errorf("upgraded %d, left to expire %d, writes %d; want %d, %d, %d", rep.Total.Upgraded, rep.Total.Expiring, s.total(), rewrite, expiring, rewrite)
	}
	for id, n := range s.writes {
		if n != 1 {
			t.Errorf("%s written %d times", id, n)
		}
	}
	if left := below(t, raw); len(left) != expiring {
		t.Errorf("below version %d after the backfill: %v, want only the %d with a ttl", domain.SchemaVersion, left, expiring)
	}
	for _, want := range []string{"backfill products", "left to expire 3", "RU so far", "left to expire (they carry a ttl"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the output says nothing of %q:\n%s", want, log.String())
		}
	}
	if rep.Total.RURead <= 0 || rep.Total.RUWritten <= 0 {
		t.Errorf("charges not reported: %+v", rep.Total)
	}

	again, err := backfill.Run(t.Context(), s, backfill.Options{RUPerSecond: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if again.Total.Upgraded != 0 || s.total() != rewrite || again.Total.RUWritten != 0 || again.Resumed {
		t.Errorf("second run: %+v (resumed %v), %d writes in all; want no write", again.Total, again.Resumed, s.total())
	}
	if again.Total.Read != rep.Total.Read {
		t.Errorf("second run read %d documents, the first %d", again.Total.Read, rep.Total.Read)
	}
}

// domain.Upgrade applied twice changes nothing the second time.
func TestUpgradeTwiceChangesNothing(t *testing.T) {
	var p domain.Product
	if err := json.Unmarshal(v1(t, domain.Product{Meta: domain.Meta{ID: "p", Type: domain.TypeProduct}, Name: "Tea", PriceCents: 5}), &p); err != nil {
		t.Fatal(err)
	}
	if !domain.Upgrade(&p) || p.SchemaVersion != domain.SchemaVersion {
		t.Fatalf("first upgrade: version %d", p.SchemaVersion)
	}
	once, _ := json.Marshal(p)
	if domain.Upgrade(&p) {
		t.Error("the second upgrade reports a change")
	}
	twice, _ := json.Marshal(p)
	if !bytes.Equal(once, twice) {
		t.Errorf("the second upgrade changed\n%s\ninto\n%s", once, twice)
	}
}

// A document a newer build wrote is never rewritten: counted as newer,
// its bytes kept; and this build's repositories refuse to write it.
func TestBackfillNeverDowngrades(t *testing.T) {
	s := openStore(t)
	seedV1(t, s, 1)
	future := []byte(`{"id":"p9","type":"product","schemaVersion":3,"name":"Future","categoryId":"tea","priceCents":700,"currency":"USD","version":1,"futureField":{"kept":true}}`)
	put(t, s, store.ProductsContainer, "p9", future)
	rep, err := backfill.Run(t.Context(), s, backfill.Options{RUPerSecond: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Containers[store.ProductsContainer].Newer != 1 {
		t.Errorf("newer: %+v", rep.Containers[store.ProductsContainer])
	}
	stored := func() map[string]any {
		r, err := s.Container(store.ProductsContainer).Read(t.Context(), "p9", "p9")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(r.Item, &m)
		return m
	}
	if m := stored(); m["schemaVersion"] != 3.0 || m["futureField"] == nil {
		t.Errorf("the version-3 product after the backfill: %v", m)
	}
	repos := repo.New(s, 0)
	p, err := repos.Products.Get(t.Context(), "p9")
	if err != nil {
		t.Fatal(err)
	}
	p.Name = "Downgraded"
	if _, err := repo.ReplaceDoc(t.Context(), s.Container(store.ProductsContainer), p.ID, p.ID, p, &store.WriteOptions{IfMatch: p.ETag}); !domain.IsCode(err, domain.EUNAVAILABLE) {
		t.Errorf("writing a version-3 product back: %v, want EUNAVAILABLE", err)
	}
	if m := stored(); m["schemaVersion"] != 3.0 || m["futureField"] == nil || m["name"] != "Future" {
		t.Errorf("the version-3 product after a refused write: %v", m)
	}
}

// Cancelled part-way, the backfill goes on from its checkpoint and ends
// with every document upgraded exactly once.
func TestBackfillResumes(t *testing.T) {
	raw := openStore(t)
	rewrite, _ := seedV1(t, raw, 40)
	ctx, cancel := context.WithCancel(t.Context())
	s := &counting{Store: raw, hook: func(n int) {
		if n == rewrite/3 {
			cancel()
		}
	}}
	first, err := backfill.Run(ctx, s, backfill.Options{RUPerSecond: 1e6, PageSize: 10})
	if err == nil {
		t.Fatal("the cancelled run ended without an error")
	}
	if done := s.total(); done < rewrite/3 || done >= rewrite {
		t.Fatalf("the cancelled run wrote %d of %d", done, rewrite)
	}
	s.hook = nil
	rep, err := backfill.Run(t.Context(), s, backfill.Options{RUPerSecond: 1e6, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed {
		t.Error("the second run did not resume")
	}
	if len(s.writes) != rewrite || s.total() != rewrite {
		t.Errorf("%d documents written %d times in all, want %d once each (first run: %+v)", len(s.writes), s.total(), rewrite, first.Total)
	}
	for id, n := range s.writes {
		if n != 1 {
			t.Errorf("%s written %d times", id, n)
		}
	}
	if rep.Total.Upgraded != rewrite {
		t.Errorf("the resumed run's report counts %d upgraded in all, want %d", rep.Total.Upgraded, rewrite)
	}
}

// Every document type the audit knows in a container the backfill
// visits is one the backfill knows how to decode and write.
func TestKindsCoverTheAudit(t *testing.T) {
	known := backfill.KindTypes()
	for _, c := range backfill.Containers {
		kinds, ok := feedworkers.Kinds[c]
		if !ok {
			t.Errorf("the audit does not know container %s", c)
		}
		for typ := range kinds {
			if !known[typ] {
				t.Errorf("%s: the backfill does not know type %s", c, typ)
			}
		}
	}
}

// A version-1 document its Go type would not store as it is (a field the
// type lacks), or of a type the backfill does not know, is kept as it
// is, and the run fails naming it: nothing is lost silently.
func TestBackfillKeepsWhatItCannotRoundTrip(t *testing.T) {
	s := openStore(t)
	lossy := []byte(`{"id":"p1","type":"product","schemaVersion":1,"name":"Tea","categoryId":"tea","priceCents":500,"currency":"USD","legacyField":"x"}`)
	put(t, s, store.ProductsContainer, "p1", lossy)
	put(t, s, store.ProductsContainer, "m1", []byte(`{"id":"m1","type":"mystery","schemaVersion":1}`))
	rep, err := backfill.Run(t.Context(), s, backfill.Options{RUPerSecond: 1e6})
	if err == nil || !strings.Contains(err.Error(), "products/p1/p1") || !strings.Contains(err.Error(), "legacyField") || !strings.Contains(err.Error(), "mystery") {
		t.Errorf("the run ended with %v, want an error naming both documents", err)
	}
	if rep.Total.Kept != 2 || rep.Total.Upgraded != 0 {
		t.Errorf("counts %+v, want 2 kept and nothing upgraded", rep.Total)
	}
	r, err := s.Container(store.ProductsContainer).Read(t.Context(), "p1", "p1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(r.Item, []byte(`"legacyField":"x"`)) || !bytes.Contains(r.Item, []byte(`"schemaVersion":1`)) {
		t.Errorf("the kept product is stored as %s", r.Item)
	}
}
