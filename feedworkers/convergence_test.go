package feedworkers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// workersConfig runs the shop's workers with test timings.
func workersConfig(instance string) feedworkers.Config {
	return feedworkers.Config{Processor: changefeed.Config{
		Instance: instance, LeaseExpiry: 2 * time.Second, RenewEvery: 100 * time.Millisecond,
		PollEvery: 5 * time.Millisecond, Backoff: time.Millisecond,
	}}
}

// linesAt counts the open carts holding productID, and those whose line
// is at priceVersion with the price cents.
func linesAt(tb testing.TB, repos *repo.Set, productID string, priceVersion, cents int64) (at, total int) {
	tb.Helper()
	cont := ""
	for {
		carts, next, err := repos.Carts.WithProduct(context.Background(), productID, store.MaxQueryPageSize, cont)
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range carts {
			total++
			if l, _ := c.Line(productID, ""); l.PriceVersion == priceVersion && l.UnitPriceCents == cents {
				at++
			}
		}
		if next == "" {
			return at, total
		}
		cont = next
	}
}

func TestPriceChangesConvergeAcrossInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 carts: skipped with -short")
	}
	const carts = 2000
	ctx := t.Context()
	st := openStore(t)
	repos := repo.New(st, 0)
	p := createProduct(t, repos, "p1", "coffee", 1000)
	var placed []domain.Order
	for i := range 5 {
		u := fmt.Sprintf("buyer-%d", i)
		addToCart(t, repos, u, p, 1)
		placed = append(placed, placeOrder(t, repos, u, "o-"+u))
	}
	for i := range carts {
		addToCart(t, repos, userID(i), p, 1+i%3)
	}

	var workers []*feedworkers.Workers
	for _, name := range []string{"i1", "i2", "i3"} {
		w, err := feedworkers.Start(ctx, st, writes.New(repo.New(store.Metered(st), 0), nil, nil), workersConfig(name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop(context.Background()) })
		workers = append(workers, w)
	}

	versions := [][]byte{raw(t, st, "products", "p1", "p1")}
	for _, cents := range []int64{1200, 1300} {
		setPrice(t, repos, "p1", cents)
		versions = append(versions, raw(t, st, "products", "p1", "p1"))
	}

	// Duplicates and reordering on top of the feed, concurrently with the
	// three instances: stale versions handed straight to the fan-out (no
	// re-read of the current product) in shuffled order, then a shuffled
	// batch with duplicates to the feed handler.
	h := feedworkers.NewHandlers(store.Metered(st), writes.New(repo.New(store.Metered(st), 0), nil, nil), feedworkers.HandlersConfig{})
	injected := make(chan error, 1)
	go func() {
		r := rand.New(rand.NewPCG(1, 7))
		batch := [][]byte{versions[0], versions[1], versions[2], versions[1]}
		r.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		for _, it := range batch {
			pv, err := repo.Decode[domain.Product](it)
			if err == nil {
				_, err = h.ProductToCarts(ctx, pv)
			}
			if err != nil {
				injected <- err
				return
			}
		}
		injected <- h.Products(ctx, changefeed.Batch{Items: batch})
	}()
	if err := <-injected; err != nil {
		t.Fatalf("injected batch: %v", err)
	}

	eventually(t, 60*time.Second, "every cart line at v3", func() (bool, string) {
		at, total := linesAt(t, repos, "p1", 3, 1300)
		return at == carts && total == carts, fmt.Sprintf("%d of %d lines at v3 (want %d)", at, total, carts)
	})
	for _, o := range placed {
		got, err := repos.Orders.Get(ctx, o.UserID, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if l := got.Items[0]; l.UnitPriceCents != 1000 || got.TotalCents != 1000 {
			t.Errorf("order %s = line %d, total %d; want the price paid, 1000", o.ID, l.UnitPriceCents, got.TotalCents)
		}
	}

	status, err := workers[0].FeedStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []changefeed.ProcessorStatus
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	if got, want := len(decoded), 4; got != want {
		t.Fatalf("feed status lists %d processors, want %d: %s", got, want, b)
	}
	for _, p := range decoded {
		owners := map[string]bool{}
		for _, l := range p.Leases {
			owners[l.Owner] = true
		}
		if owners[""] || len(p.Leases) != 4 {
			t.Errorf("processor %s leases = %+v, want 4 owned leases", p.Processor, p.Leases)
		}
	}
}
