package feedworkers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// testProcessor is one processor of the products feed with its handler.
type testProcessor struct {
	changefeed.Config
	handler changefeed.Handler
}

// testConfig is a processor tuned for tests: short polls, expiry and
// backoff, so the tests wait for milliseconds, not seconds.
func testConfig(instance string, h changefeed.Handler) testProcessor {
	return testProcessor{Config: changefeed.Config{
		Name: "things", Watched: store.ProductsContainer, Instance: instance,
		MaxItems: 10, LeaseExpiry: time.Second, RenewEvery: 50 * time.Millisecond,
		PollEvery: 5 * time.Millisecond, MaxAttempts: 3, Backoff: time.Millisecond,
	}, handler: h}
}

func startProcessor(t *testing.T, ctx context.Context, st store.Store, cfg testProcessor) *changefeed.Processor {
	t.Helper()
	p, err := changefeed.NewProcessor(st.Container(cfg.Watched), st.Container(store.LeasesContainer), cfg.handler, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	return p
}

func ids(items [][]byte) []string {
	var out []string
	for _, it := range items {
		d, _ := repo.Decode[struct {
			ID string `json:"id"`
		}](it)
		out = append(out, d.ID)
	}
	return out
}

func TestProcessorReplaysABatchCutBeforeItsCheckpoint(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	p := createProduct(t, repos, "p1", "coffee", 1000)
	for i := range 20 {
		addToCart(t, repos, userID(i), p, 1)
	}
	setPrice(t, repos, "p1", 1500)

	// The first instance applies the batch holding p1 and crashes before
	// its checkpoint.
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	crashCtx, crash := context.WithCancel(context.Background())
	crashed := make(chan struct{})
	var once sync.Once
	first := startProcessor(t, crashCtx, st, testConfig("a", func(ctx context.Context, b changefeed.Batch) error {
		err := h.Products(ctx, b)
		if err == nil && slices.Contains(ids(b.Items), "p1") {
			once.Do(func() { crash(); close(crashed) })
		}
		return err
	}))
	select {
	case <-crashed:
	case <-time.After(10 * time.Second):
		t.Fatal("the first instance never handled p1")
	}
	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	views := []string{"products", "carts", "productsByCategory"}
	applied := snapshot(t, st, views...)

	// The second instance finds p1 again: no checkpoint covered it.
	var mu sync.Mutex
	replays := 0
	h2 := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	second := startProcessor(t, context.Background(), st, testConfig("b", func(ctx context.Context, b changefeed.Batch) error {
		if slices.Contains(ids(b.Items), "p1") {
			mu.Lock()
			replays++
			mu.Unlock()
		}
		return h2.Products(ctx, b)
	}))
	eventually(t, 10*time.Second, "the batch applied again and every lease checkpointed", func() (bool, string) {
		mu.Lock()
		n := replays
		mu.Unlock()
		status, err := second.Status(context.Background())
		if err != nil {
			return false, err.Error()
		}
		for _, l := range status {
			if l.LagEstimate != 0 {
				return false, fmt.Sprintf("replays %d, lease %+v", n, l)
			}
		}
		return n > 0, fmt.Sprintf("replays %d, leases %+v", n, status)
	})
	if err := second.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(applied, snapshot(t, st, views...)); diff != "" {
		t.Errorf("the replay changed the state (-after the crash +after the replay):\n%s", diff)
	}
	if _, l := cartLine(t, repos, userID(7), "p1"); l.UnitPriceCents != 1500 {
		t.Errorf("line price = %d, want 1500", l.UnitPriceCents)
	}
}

func cartLine(t *testing.T, repos *repo.Set, userID, productID string) (domain.Cart, domain.CartLine) {
	t.Helper()
	c, err := repos.Carts.Get(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := c.Line(productID, "")
	return c, l
}
