package migrations_test

import (
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

func TestBucketOrderSummariesMovesTheUnbucketedViewOnce(t *testing.T) {
	ctx := t.Context()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		t.Fatal(err)
	}
	repos := repo.New(s, 0)
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	place := func(userID, id string) domain.Order {
		c := domain.NewCart(userID)
		p := domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Coffee", PriceCents: 900, CategoryID: "c1", Version: 1, PriceVersion: 1}
		if err := c.SetQuantity(p, "", 1, at); err != nil {
			t.Fatal(err)
		}
		o, err := domain.NewOrder(id, c, domain.Customer{Name: "Ada", Email: "ada@example.com"},
			domain.Address{Name: "Ada", Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"}, "key-"+id, at)
		if err != nil {
			t.Fatal(err)
		}
		o.Status = domain.StatusPlaced
		o, err = repos.Orders.Open(ctx, o, domain.Idempotency{Key: "key-" + id, RequestHash: "h", CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// What the shop wrote before the buckets: the summary under status:day.
	legacy := func(o domain.Order) {
		sum := domain.SummaryOf(o, domain.DefaultStatusBuckets)
		sum.StatusDay = domain.StatusDay(o.Status, o.CreatedAt)
		raw, err := json.Marshal(sum)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Container(store.OrdersByStatusContainer).Upsert(ctx, sum.StatusDay, raw, nil); err != nil {
			t.Fatal(err)
		}
	}
	stillPlaced := place("u1", "o-placed")
	legacy(stillPlaced)
	shippedSince := place("u2", "o-shipped")
	legacy(shippedSince)
	if _, err := repos.Orders.SetStatus(ctx, "u2", "o-shipped", "", domain.StatusShipped, at); err != nil {
		t.Fatal(err)
	}
	gone := domain.Order{Meta: domain.Meta{ID: "o-gone"}, UserID: "u3", Status: domain.StatusPlaced, CreatedAt: at, Version: 1}
	legacy(gone)

	moved, err := migrations.BucketOrderSummaries(ctx, s, repo.New(s, domain.DefaultStatusBuckets), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if moved != 3 {
		t.Errorf("moved %d summaries, want 3", moved)
	}
	for _, status := range []string{domain.StatusPlaced, domain.StatusShipped} {
		items, _, err := repos.OrderSummaries.DayPage(ctx, status, at, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		want := map[string][]string{domain.StatusPlaced: {"o-placed"}, domain.StatusShipped: {"o-shipped"}}[status]
		if !slices.Equal(ids, want) {
			t.Errorf("%s orders of the day after the migration = %v, want %v", status, ids, want)
		}
	}
	for _, o := range []domain.Order{stillPlaced, shippedSince, gone} {
		if _, err := repos.OrderSummaries.Get(ctx, domain.StatusDay(domain.StatusPlaced, at), o.ID); !domain.IsCode(err, domain.ENOTFOUND) {
			t.Errorf("unbucketed summary of %s: %v, want it deleted", o.ID, err)
		}
	}
	if moved, err := migrations.BucketOrderSummaries(ctx, s, repo.New(s, domain.DefaultStatusBuckets), io.Discard); err != nil || moved != 0 {
		t.Errorf("second run moved %d, %v; want 0, nil", moved, err)
	}
	// Another number of buckets moves every summary whose key differs,
	// and the day query with that number finds them all.
	differ := 0
	for _, o := range []domain.Order{stillPlaced, shippedSince} {
		if domain.StatusBucket(o.ID, 3) != domain.StatusBucket(o.ID, domain.DefaultStatusBuckets) {
			differ++
		}
	}
	if moved, err := migrations.BucketOrderSummaries(ctx, s, repo.New(s, 3), io.Discard); err != nil || moved != differ {
		t.Errorf("run with 3 buckets moved %d, %v; want %d, nil", moved, err, differ)
	}
	three := repo.NewOrderSummariesIn(s, 3)
	for status, want := range map[string]string{domain.StatusPlaced: "o-placed", domain.StatusShipped: "o-shipped"} {
		items, _, err := three.DayPage(ctx, status, at, 100, "")
		if err != nil || len(items) != 1 || items[0].ID != want {
			t.Errorf("%s orders among 3 buckets = %+v, %v; want %s", status, items, err, want)
		}
	}
}
