package web_test

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
	"github.com/reference-shop/shop/web"
)

// newShop serves the whole shop in process, as `shop serve` does: the API
// with this frontend mounted at "/", the feed workers, and a small sample
// catalog in a temp embedded store. It returns the base URL.
func newShop(t *testing.T) string {
	t.Helper()
	base, _ := newShopStore(t)
	return base
}

// newShopStore is newShop, with the store it serves, for a test that
// writes what no screen does (a dead webhook delivery).
func newShopStore(t *testing.T) (string, store.Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// NoSync: a test store need not survive a power cut.
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := sample.Load(ctx, s, sample.Options{Categories: 3, Products: 30, Reviews: 120}); err != nil {
		t.Fatal(err)
	}
	pay := paymentstest.Embedded(t)
	wk, err := feedworkers.Start(ctx, s, writes.New(repo.New(store.Metered(s), 0), pay, nil), feedworkers.Config{Processor: changefeed.Config{PollEvery: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		if err := wk.Stop(stopCtx); err != nil {
			t.Errorf("stopping the feed workers: %v", err)
		}
		cancel()
	})
	srv := httptest.NewServer(api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(s), 0), pay, nil),
		Store:   s,
		Secret:  []byte("browser-tests-only-secret-of-32-bytes"),
		DevMode: true,
		Web:     web.Handler(),
		Feeds:   wk,
		// As shop serve on the embedded store.
		ChargesEstimated: true}))
	t.Cleanup(srv.Close)
	return srv.URL, s
}
