package writes_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestCheckoutOfAProductWithoutStock: a product created since the shop
// tracks stock carries an availability status (its cart lines copy it)
// and has a stock document, written just after the product. If that write
// never happened (a crash between the two), the missing document must
// not make the product sell without a limit: the line is refused as short
// with 0 available, and nothing is taken. A legacy product, created before
// the shop tracked stock, has neither, and still sells without a limit.
func TestCheckoutOfAProductWithoutStock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status string
		want   []domain.Shortage
	}{
		{"tracked, its stock never written: short, 0 available", domain.InStock,
			[]domain.Shortage{{ProductID: "p1", Requested: 2, Available: 0}}},
		{"legacy, never tracked: sold without a limit", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repos := repo.New(openStore(t), 0)
			ws := writes.New(repos, paymentstest.Embedded(t), nil)
			if _, err := repos.Products.Create(t.Context(), domain.Product{
				Meta: domain.Meta{ID: "p1"}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD",
				PriceVersion: 1, Version: 1, Availability: domain.Availability{Status: tc.status},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.SetCartLine(t.Context(), "u1", "p1", "", 2, ""); err != nil {
				t.Fatal(err)
			}
			o, err := ws.Checkout(t.Context(), req)
			if got := shortages(err); !slices.Equal(got, tc.want) {
				t.Fatalf("checkout = %+v, %v; want shortages %+v", o.Items, err, tc.want)
			}
			if tc.want == nil && (err != nil || len(o.Items) != 1) {
				t.Fatalf("checkout = %+v, %v; want the line ordered", o.Items, err)
			}
			c, err := repos.Carts.Get(t.Context(), "u1")
			if err != nil {
				t.Fatal(err)
			}
			if c.Pending != nil {
				t.Errorf("cart marker %+v left by the checkout", c.Pending)
			}
			if _, err := repos.Inventory.Stock(t.Context(), "p1", ""); !errors.Is(err, repo.ErrUntracked) {
				t.Errorf("stock after the checkout: %v, want still none", err)
			}
		})
	}
}
