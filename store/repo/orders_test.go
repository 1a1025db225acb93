package repo_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// newOrder makes an order of one line of the given total for userID.
func newOrder(t *testing.T, userID, id string, cents int64, at time.Time) domain.Order {
	t.Helper()
	c := domain.NewCart(userID)
	if err := c.SetQuantity(newProduct("p-"+id, cents), "", 1, at); err != nil {
		t.Fatal(err)
	}
	o, err := domain.NewOrder(id, c, domain.Customer{Name: "Ada", Email: "ada@example.com"},
		domain.Address{Name: "Ada", Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Country: "US"}, "key-"+id, at)
	if err != nil {
		t.Fatal(err)
	}
	o.Status = domain.StatusPlaced
	return o
}

func idem(key string) domain.Idempotency {
	return domain.Idempotency{Key: key, RequestHash: "hash-" + key, CreatedAt: now}
}

func TestOrdersPlace(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	o := newOrder(t, "u1", "o1", 2500, now)

	placed, err := orders.Open(ctx, o, idem("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if placed.ETag == "" {
		t.Error("placed order has no _etag")
	}
	got, err := orders.Get(ctx, "u1", "o1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(placed, got); diff != "" {
		t.Errorf("Get (-placed +read):\n%s", diff)
	}
	rec, err := orders.Idempotency(ctx, "u1", "k1")
	if err != nil {
		t.Fatalf("idempotency record: %v", err)
	}
	if rec.OrderID != "o1" || rec.UserID != "u1" || rec.RequestHash != "hash-k1" || rec.TTL == nil {
		t.Errorf("idempotency record = %+v, want order o1 of u1 with its hash and a ttl", rec)
	}
	sum, err := orders.Summary(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalOrders != 1 || sum.TotalSpentCents != 2500 || sum.AverageOrderCents != 2500 ||
		sum.LastOrderAt == nil || !sum.LastOrderAt.Equal(now) {
		t.Errorf("summary = %+v, want 1 order of 2500 at %v", sum, now)
	}
}

func TestOrdersPlaceSameKeyTwice(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	if _, err := orders.Open(ctx, newOrder(t, "u1", "o1", 2500, now), idem("k1")); err != nil {
		t.Fatal(err)
	}
	before, err := orders.Summary(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}

	_, err = orders.Open(ctx, newOrder(t, "u1", "o2", 9900, now), idem("k1"))
	wantCode(t, "second Place with the same key", err, domain.ECONFLICT)

	_, err = orders.Get(ctx, "u1", "o2")
	wantCode(t, "the refused order", err, domain.ENOTFOUND)
	after, err := orders.Summary(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("summary changed by a refused batch (-before +after):\n%s", diff)
	}
	rec, err := orders.Idempotency(ctx, "u1", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.OrderID, "o1"; got != want {
		t.Errorf("idempotency record points at %q, want %q", got, want)
	}
}

func TestOrdersPlaceTakenOrderIDWritesNothing(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	if _, err := orders.Open(ctx, newOrder(t, "u1", "o1", 2500, now), idem("k1")); err != nil {
		t.Fatal(err)
	}
	_, err := orders.Open(ctx, newOrder(t, "u1", "o1", 100, now), idem("k2"))
	wantCode(t, "Place of a taken order id", err, domain.ECONFLICT)
	// The batch is all or nothing: the key of the refused batch is unused.
	_, err = orders.Idempotency(ctx, "u1", "k2")
	wantCode(t, "idempotency record of the refused batch", err, domain.ENOTFOUND)
	sum, err := orders.Summary(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalOrders != 1 || sum.TotalSpentCents != 2500 {
		t.Errorf("summary = %d orders, %d cents; want 1 and 2500", sum.TotalOrders, sum.TotalSpentCents)
	}
}

func TestOrdersPlaceConcurrent(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	const n = 20
	placing := make([]domain.Order, n)
	for i := range placing {
		placing[i] = newOrder(t, "u1", fmt.Sprintf("o%02d", i), int64(1000+i), now.Add(time.Duration(i)*time.Second))
	}
	errs := run(n, func(i int) error {
		_, err := orders.Open(ctx, placing[i], idem(fmt.Sprintf("k%02d", i)))
		return err
	})
	var wantSpent int64
	for i, err := range errs {
		if err != nil {
			t.Errorf("checkout %d: %v", i, err)
		}
		wantSpent += int64(1000 + i)
	}
	sum, err := orders.Summary(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	last := now.Add((n - 1) * time.Second)
	if sum.TotalOrders != n || sum.TotalSpentCents != wantSpent || sum.AverageOrderCents != (wantSpent+n/2)/n ||
		sum.LastOrderAt == nil || !sum.LastOrderAt.Equal(last) {
		t.Errorf("summary = %d orders, %d cents, average %d, last %v; want %d, %d, %d, %v",
			sum.TotalOrders, sum.TotalSpentCents, sum.AverageOrderCents, sum.LastOrderAt, n, wantSpent, (wantSpent+n/2)/n, last)
	}
	page, err := orders.Page(ctx, "u1", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	items, err := page.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(items); got != n {
		t.Errorf("orders in history = %d, want %d", got, n)
	}
}

func TestOrdersSetStatus(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	totals := map[string]int64{"o1": 1000, "o2": 2000, "o3": 4000}
	for _, id := range []string{"o1", "o2", "o3"} {
		if _, err := orders.Open(ctx, newOrder(t, "u1", id, totals[id], now), idem("k-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		order, to  string
		wantCode   string
		wantOrders int
		wantSpent  int64
	}{
		{"o2", domain.StatusShipped, "", 3, 7000},
		{"o1", domain.StatusCancelled, "", 2, 6000},
		{"o1", domain.StatusCancelled, domain.ECONFLICT, 2, 6000},
		{"o2", domain.StatusDelivered, "", 2, 6000},
		{"o2", domain.StatusCancelled, domain.ECONFLICT, 2, 6000},
		{"o3", "lost", domain.EINVALID, 2, 6000},
		{"o3", domain.StatusCancelled, "", 1, 2000},
	}
	for _, st := range steps {
		_, err := orders.SetStatus(ctx, "u1", st.order, "", st.to, time.Now())
		wantCode(t, st.order+" to "+st.to, err, st.wantCode)
		sum, err := orders.Summary(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		wantAvg := int64(0)
		if st.wantOrders > 0 {
			wantAvg = st.wantSpent / int64(st.wantOrders)
		}
		if sum.TotalOrders != st.wantOrders || sum.TotalSpentCents != st.wantSpent || sum.AverageOrderCents != wantAvg {
			t.Errorf("after %s to %s: summary %d orders, %d cents, average %d; want %d, %d, %d",
				st.order, st.to, sum.TotalOrders, sum.TotalSpentCents, sum.AverageOrderCents, st.wantOrders, st.wantSpent, wantAvg)
		}
	}
	want := map[string]string{"o1": domain.StatusCancelled, "o2": domain.StatusDelivered, "o3": domain.StatusCancelled}
	for id, status := range want {
		o, err := orders.Get(ctx, "u1", id)
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != status {
			t.Errorf("%s status = %q, want %q", id, o.Status, status)
		}
	}
}

func TestOrdersSetStatusStaleIfMatch(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	placed, err := orders.Open(ctx, newOrder(t, "u1", "o1", 1000, now), idem("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := orders.SetStatus(ctx, "u1", "o1", placed.ETag, domain.StatusShipped, now); err != nil {
		t.Fatal(err)
	}
	_, err = orders.SetStatus(ctx, "u1", "o1", placed.ETag, domain.StatusDelivered, now)
	wantCode(t, "SetStatus with a stale If-Match", err, domain.EPRECONDITION)
	o, err := orders.Get(ctx, "u1", "o1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Status, domain.StatusShipped; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func TestOrdersGetIsPerUser(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	if _, err := orders.Open(ctx, newOrder(t, "alice", "o1", 1000, now), idem("k1")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, user, id string }{
		{"another user's order", "bob", "o1"},
		{"a missing order", "alice", "o9"},
		{"the summary is not an order", "alice", domain.CustomerSummaryID},
		{"an idempotency record is not an order", "alice", domain.IdempotencyID("k1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := orders.Get(ctx, tt.user, tt.id)
			wantCode(t, "Get", err, domain.ENOTFOUND)
		})
	}
	_, err := orders.SetStatus(ctx, "bob", "o1", "", domain.StatusCancelled, now)
	wantCode(t, "bob cancelling alice's order", err, domain.ENOTFOUND)
	o, err := orders.Get(ctx, "alice", "o1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Status, domain.StatusPlaced; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func TestOrdersPageNewestFirst(t *testing.T) {
	ctx := t.Context()
	orders := repo.NewOrders(newStore(t))
	const n = 7
	for i := range n {
		id := fmt.Sprintf("o%d", i)
		if _, err := orders.Open(ctx, newOrder(t, "u1", id, 100, now.Add(time.Duration(i)*time.Minute)), idem(id)); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	cont := ""
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("continuation never ends")
		}
		page, err := orders.Page(ctx, "u1", 3, cont)
		if err != nil {
			t.Fatal(err)
		}
		items, err := page.Decode()
		next := page.Next
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		if next == "" {
			break
		}
		cont = next
	}
	if diff := cmp.Diff([]string{"o6", "o5", "o4", "o3", "o2", "o1", "o0"}, ids); diff != "" {
		t.Errorf("history order (-want +got):\n%s", diff)
	}
}
