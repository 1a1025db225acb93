package feedworkers_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// convergedSample is a store with the sample catalog, carts and orders,
// whose feeds have caught up.
func convergedSample(t *testing.T) (store.Store, *repo.Set) {
	t.Helper()
	st := openStore(t)
	ctx := t.Context()
	if _, err := sample.Load(ctx, st, sample.Options{Products: 40, Reviews: 120, Users: 12, Categories: 4}); err != nil {
		t.Fatal(err)
	}
	repos := repo.New(st, 0)
	pay := paymentstest.Embedded(t)
	wc := workersConfig("audit")
	w, err := feedworkers.Start(ctx, st, writes.New(repo.New(store.Metered(st), 0), pay, nil), wc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })
	// Three of the carts are ordered through the checkout (stock taken,
	// reservations made), and one of those orders is cancelled.
	ws := writes.New(repos, pay, nil)
	for i, c := range sampleCarts(t, st)[:3] {
		for _, l := range c.Items {
			if _, err := repos.Inventory.SetStock(ctx, l.ProductID, l.SKU, 500, "", now); err != nil {
				t.Fatal(err)
			}
		}
		o, err := ws.Checkout(ctx, writes.CheckoutRequest{UserID: c.UserID, Customer: domain.Customer{Name: "A", Email: "a@example.com"},
			Address: domain.Address{Name: "A", Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"},
			Key:     "k-" + c.UserID, RequestHash: "h", PaymentMethod: "pm_card_visa"})
		if err != nil {
			t.Fatalf("checkout of %s: %v", c.UserID, err)
		}
		if i == 0 {
			if _, err := ws.SetOrderStatus(ctx, o.UserID, o.ID, "", domain.StatusCancelled); err != nil {
				t.Fatal(err)
			}
		}
	}
	quiesce(t, w)
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return st, repos
}

// quiesce waits until the feeds have caught up and stayed so for a few
// polls: a lease's lag is the one its last poll saw, so a change written
// by another feed's handler just now may not show in it yet.
func quiesce(t *testing.T, w *feedworkers.Workers) {
	t.Helper()
	still := 0
	eventually(t, 30*time.Second, "the feeds caught up", func() (bool, string) {
		if caughtUp(t, w) {
			still++
		} else {
			still = 0
		}
		return still >= 5, ""
	})
}

// sampleCarts is every cart of the store.
func sampleCarts(t *testing.T, st store.Store) []domain.Cart {
	t.Helper()
	var out []domain.Cart
	for _, it := range snapshot(t, st, store.CartsContainer) {
		var c domain.Cart
		if err := json.Unmarshal([]byte(it[len(store.CartsContainer)+1:]), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func audit(t *testing.T, st store.Store, opts feedworkers.AuditOptions) feedworkers.AuditReport {
	t.Helper()
	h := feedworkers.NewHandlers(store.Metered(st), writes.New(repo.New(store.Metered(st), 0), nil, nil), feedworkers.HandlersConfig{})
	r, err := h.Audit(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAuditOfAConvergedShopFindsNothing: the sample shop, once its feeds
// caught up, has every copy its sources derive; every copy the audit knows
// is checked at least once.
func TestAuditOfAConvergedShopFindsNothing(t *testing.T) {
	st, _ := convergedSample(t)
	r := audit(t, st, feedworkers.AuditOptions{})
	for _, d := range r.Differences {
		t.Errorf("difference: %s", d)
	}
	for _, c := range feedworkers.Copies {
		if r.Checked[c] == 0 {
			t.Errorf("no %s checked", c)
		}
	}
	if r.RequestUnits <= 0 || r.Operations <= 0 {
		t.Errorf("the audit says it cost %d ops, %.2f RU", r.Operations, r.RequestUnits)
	}
}

// TestAuditKnowsEveryContainer: a container the audit does not scan would
// hold copies nobody checks.
func TestAuditKnowsEveryContainer(t *testing.T) {
	var defined []string
	for _, c := range migrations.Containers {
		defined = append(defined, c.ID)
	}
	if got := slices.Sorted(maps.Keys(feedworkers.Kinds)); !slices.Equal(got, slices.Sorted(slices.Values(defined))) {
		t.Errorf("the audit knows the containers %v; the shop defines %v", got, defined)
	}
}

// TestAuditKnowsEveryField: every field of a source document that may
// hold a copy is listed in feedworkers.Fields, as the copy the audit
// derives it as or as the source's own; a new field must be listed (and,
// if it is a copy, derived) before this passes.
func TestAuditKnowsEveryField(t *testing.T) {
	for _, v := range []any{domain.Product{}, domain.Variant{}, domain.Categories{}, domain.Category{}, domain.Cart{}, domain.CartLine{}} {
		typ := reflect.TypeOf(v)
		known := feedworkers.Fields[typ.Name()]
		var fields []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || name == "" || name == "-" {
				continue
			}
			fields = append(fields, name)
			role, ok := known[name]
			switch {
			case !ok:
				t.Errorf("%s.%s (%s) is not in feedworkers.Fields: say whether it is a copy the audit derives", typ.Name(), f.Name, name)
			case role != feedworkers.FieldSource && role != feedworkers.FieldSelf && role != feedworkers.FieldGuard && !slices.Contains(feedworkers.Copies, role):
				t.Errorf("%s.%s is listed as %q, which is neither a role nor a copy the audit derives", typ.Name(), name, role)
			}
		}
		for name := range known {
			if !slices.Contains(fields, name) {
				t.Errorf("feedworkers.Fields lists %s.%s, which %s does not have", typ.Name(), name, typ.Name())
			}
		}
	}
}

// patchDoc rewrites one stored document in place, as drift would: the
// write goes to the store directly, past every feed and guard.
func patchDoc(t *testing.T, st store.Store, container, pk, id string, change func(map[string]any)) {
	t.Helper()
	c := st.Container(container)
	it, err := c.Read(t.Context(), pk, id)
	if err != nil {
		t.Fatalf("read %s/%s/%s: %v", container, pk, id, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(it.Item, &doc); err != nil {
		t.Fatal(err)
	}
	change(doc)
	b, _ := json.Marshal(doc)
	if _, err := c.Replace(t.Context(), pk, id, b, nil); err != nil {
		t.Fatal(err)
	}
}

// TestAuditFindsAndRepairsPlantedDrift corrupts one copy of each kind
// directly in the store: the audit reports exactly those, with their ids;
// --repair rewrites them, and a second audit finds nothing.
func TestAuditFindsAndRepairsPlantedDrift(t *testing.T) {
	st, repos := convergedSample(t)
	ctx := t.Context()
	idx, err := repos.Products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cat := idx.Items[0].ID
	ids, err := repos.ProductSummaries.IDs(ctx, cat)
	if err != nil || len(ids) < 4 {
		t.Fatalf("products of %s: %v %v", cat, ids, err)
	}
	p0, p1, p2, p3 := ids[0], ids[1], ids[2], ids[3]
	prod, err := repos.Products.Get(ctx, p1)
	if err != nil {
		t.Fatal(err)
	}
	term := domain.SearchTerms(prod)[0]
	var cart domain.Cart
	var order domain.Order
	for _, c := range sampleCarts(t, st) {
		if len(c.Items) > 0 && cart.ID == "" {
			cart = c
		}
		raw, err := repos.Orders.Page(ctx, c.UserID, 1, "")
		if err != nil {
			t.Fatal(err)
		}
		page, err := raw.Decode()
		if err == nil && len(page) > 0 && order.ID == "" {
			if order, err = repos.Orders.Get(ctx, c.UserID, page[0].ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cart.ID == "" || order.ID == "" {
		t.Fatal("the sample has no cart or no order")
	}
	statusDay := domain.StatusDayKey(order.Status, order.CreatedAt, order.ID, domain.DefaultStatusBuckets)

	patchDoc(t, st, store.ProductsContainer, p0, p0, func(d map[string]any) { d["categoryName"] = "Old Name" })
	patchDoc(t, st, store.ProductsByCategoryContainer, cat, p1, func(d map[string]any) { d["priceCents"] = 1 })
	patchDoc(t, st, store.ProductsByTermContainer, term, p1, func(d map[string]any) { d["name"] = "Stale" })
	if _, err := st.Container(store.ProductsByCategoryContainer).Delete(ctx, cat, p2, nil); err != nil {
		t.Fatal(err)
	}
	patchDoc(t, st, store.ProductsContainer, p3, p3, func(d map[string]any) {
		d["reviewStats"] = map[string]any{"count": 99, "average": 1, "histogram": []int{99, 0, 0, 0, 0}}
	})
	patchDoc(t, st, store.CartsContainer, cart.UserID, cart.ID, func(d map[string]any) {
		d["items"].([]any)[0].(map[string]any)["name"] = "Stale"
	})
	patchDoc(t, st, store.OrdersContainer, order.UserID, domain.CustomerSummaryID, func(d map[string]any) { d["totalOrders"] = 7 })
	patchDoc(t, st, store.CartsContainer, order.UserID, order.UserID, func(d map[string]any) {
		d["pendingCheckout"] = map[string]any{"orderId": order.ID, "since": now}
	})
	patchDoc(t, st, store.OrdersByStatusContainer, statusDay, order.ID, func(d map[string]any) { d["totalCents"] = 1 })
	patchDoc(t, st, store.ProductsContainer, domain.CategoriesID, domain.CategoriesID, func(d map[string]any) {
		d["items"].([]any)[0].(map[string]any)["productCount"] = 1000
	})

	want := map[string]string{
		feedworkers.CopyCategoryName:    p0,
		feedworkers.CopyProductSummary:  p1 + " " + p2,
		feedworkers.CopySearchEntry:     p1,
		feedworkers.CopyReviews:         p3,
		feedworkers.CopyCartLine:        cart.ID,
		feedworkers.CopyCartSettled:     order.UserID,
		feedworkers.CopyCustomerSummary: domain.CustomerSummaryID,
		feedworkers.CopyOrderSummary:    order.ID,
		feedworkers.CopyCategoryCounts:  domain.CategoriesID,
	}
	found := func(r feedworkers.AuditReport) map[string]string {
		got := map[string][]string{}
		for _, d := range r.Differences {
			got[d.Copy] = append(got[d.Copy], d.ID)
		}
		out := map[string]string{}
		for k, v := range got {
			slices.Sort(v)
			out[k] = joinIDs(v)
		}
		return out
	}
	events := eventIDs(t, st)
	if len(events) == 0 {
		t.Fatal("the sample's checkouts wrote no event: the audit's leaving them alone is not tested")
	}
	r := audit(t, st, feedworkers.AuditOptions{})
	if got := found(r); !maps.Equal(got, want) {
		for _, d := range r.Differences {
			t.Logf("%s", d)
		}
		t.Fatalf("the audit found %v, want exactly the planted %v", got, want)
	}
	r = audit(t, st, feedworkers.AuditOptions{Repair: true})
	for _, d := range r.Differences {
		if !d.Repaired {
			t.Errorf("not repaired: %s (%s)", d, d.RepairError)
		}
	}
	if r = audit(t, st, feedworkers.AuditOptions{}); len(r.Differences) > 0 {
		for _, d := range r.Differences {
			t.Logf("%s", d)
		}
		t.Fatalf("after the repair the audit still finds %d differences", len(r.Differences))
	}
	if got := eventIDs(t, st); !slices.Equal(got, events) {
		t.Errorf("the repair changed the outbox's events: %d before, %d after", len(events), len(got))
	}
}

// eventIDs lists the events in the orders and products containers, for
// a test that wants them left alone.
func eventIDs(t *testing.T, st store.Store) []string {
	t.Helper()
	var ids []string
	for _, c := range []string{store.OrdersContainer, store.ProductsContainer} {
		for _, it := range snapshot(t, st, c) {
			if strings.Contains(it, `"type":"event"`) {
				ids = append(ids, it)
			}
		}
	}
	return ids
}

func joinIDs(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += " "
		}
		out += id
	}
	return out
}

// TestAuditKeepsToItsBudget: with a budget of Request Units per second,
// the audit takes at least the time its charge needs at that rate.
func TestAuditKeepsToItsBudget(t *testing.T) {
	st, _ := convergedSample(t)
	free := audit(t, st, feedworkers.AuditOptions{})
	budget := free.RequestUnits / 0.5 // half a second's worth at this rate
	r := audit(t, st, feedworkers.AuditOptions{RUPerSecond: budget})
	if min := time.Duration(r.RequestUnits / budget * float64(time.Second) * 0.9); r.Elapsed < min {
		t.Errorf("%.0f RU at %.0f RU/s took %v, less than the budget allows (%v)", r.RequestUnits, budget, r.Elapsed, min)
	}
}
