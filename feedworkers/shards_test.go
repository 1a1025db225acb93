package feedworkers_test

import (
	"slices"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestASplitStockShowsTheSumOfItsShards: the availability copy of a
// stock split into shards is taken from the sum of every shard, not from
// the product's own stock document; units released into a retired shard
// after a merge are drained home by the same handler.
func TestASplitStockShowsTheSumOfItsShards(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repos, nil, nil), feedworkers.HandlersConfig{})
	createProduct(t, repos, "lamp", "home", 1000)
	if _, err := repos.Inventory.SetStock(ctx, "lamp", "", 8, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		t.Helper()
		if err := h.InventoryToProducts(ctx, "lamp", ""); err != nil {
			t.Fatal(err)
		}
		p, err := repos.Products.Get(ctx, "lamp")
		if err != nil {
			t.Fatal(err)
		}
		return p.Availability.Status
	}
	if got := status(); got != domain.InStock {
		t.Fatalf("8 units show %q", got)
	}
	// Split in 4: 2 units each, so the product's own document holds 2
	// (low stock alone) while the stock holds 8 (in stock).
	if l, err := repos.Inventory.SetShards(ctx, "lamp", "", 4, time.Now()); err != nil || !slices.Equal(l.Units, []int64{2, 2, 2, 2}) {
		t.Fatalf("split: %+v, %v", l, err)
	}
	if got := status(); got != domain.InStock {
		t.Errorf("8 units over 4 shards show %q, want in stock", got)
	}
	// Merge back, then a unit comes back to a retired shard (a release of
	// a take made there): the handler drains it home.
	if _, err := repos.Inventory.SetShards(ctx, "lamp", "", 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := repos.Inventory.Move(ctx, "lamp", "", 0, 2, 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	_ = status()
	l, err := repos.Inventory.Layout(ctx, "lamp", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Units, []int64{8, 0, 0, 0}) {
		t.Errorf("after the merge and a unit reaching shard 2: %v, want every unit drained into shard 0", l.Units)
	}
}
