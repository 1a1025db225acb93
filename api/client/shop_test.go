package client_test

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// startShop serves the API in dev mode over HTTP on a fresh embedded
// store holding a small sample catalog, and returns a client of it.
func startShop(t *testing.T) *client.ClientWithResponses {
	t.Helper()
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(ctx, st, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := sample.Load(ctx, st, sample.Options{Categories: 2, Products: 12}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), paymentstest.Embedded(t), nil), Store: st, Secret: []byte("client-test-secret-of-32-bytes!!"), DevMode: true}))
	t.Cleanup(srv.Close)
	c, err := client.NewClientWithResponses(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// devToken signs userID in through the dev token route.
func devToken(t *testing.T, c *client.ClientWithResponses, userID string) string {
	t.Helper()
	r, err := client.OK(c.DevTokenWithResponse(t.Context(), client.DevTokenRequest{UserID: userID}))
	if err != nil {
		t.Fatal(err)
	}
	return r.JSON200.Token
}

// someProduct is the first product of the first category.
func someProduct(t *testing.T, c *client.ClientWithResponses) client.ProductSummary {
	t.Helper()
	cats, err := client.OK(c.ListCategoriesWithResponse(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	page, err := client.OK(c.ListCategoryProductsWithResponse(t.Context(), cats.JSON200.Items[0].ID, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.JSON200.Items) == 0 {
		t.Fatal("the first category lists no product")
	}
	return page.JSON200.Items[0]
}
