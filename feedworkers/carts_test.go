package feedworkers_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The fan-out writes a cart only when the freshness rule of its line
// (domain.CartLine.Refresh, applied once, inside writes.RefreshCart)
// changes what the line shows, and reads no cart for it: the first
// attempt starts from the copy the query returned. So a version that
// changes nothing a line shows costs the query alone, and a price change
// the query and one replace per cart.
func TestFanoutWritesOnlyTheLinesTheFreshnessRuleChanges(t *testing.T) {
	tests := []struct {
		name        string
		change      func(t *testing.T, c catalog) domain.Product
		wantUpdated int
	}{
		{"review stats only", func(t *testing.T, c catalog) domain.Product {
			reviewOnly(t, c)
			return c.product(t, "p1")
		}, 0},
		{"new price", func(t *testing.T, c catalog) domain.Product { return setPrice(t, c.repos, "p1", 1100) }, 2},
		{"an older version after the new price", func(t *testing.T, c catalog) domain.Product {
			old := c.product(t, "p1")
			setPrice(t, c.repos, "p1", 1100)
			c.apply(t, c.h.Products, c.raw(t, "products", "p1"))
			return old
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCatalog(t)
			p := tt.change(t, c)
			before := snapshot(t, c.st, "carts")
			ctx, m := store.WithMeter(context.Background())
			res, err := c.h.ProductToCarts(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := res.CartsUpdated, tt.wantUpdated; got != want {
				t.Errorf("carts updated = %d, want %d", got, want)
			}
			if ops, _, _ := m.Totals(); ops != res.Queries+tt.wantUpdated {
				t.Errorf("store operations = %d, want %d (the queries and one replace per cart updated)", ops, res.Queries+tt.wantUpdated)
			}
			if tt.wantUpdated == 0 {
				if diff := cmp.Diff(before, snapshot(t, c.st, "carts")); diff != "" {
					t.Errorf("carts changed (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// product is the product id as stored now, deleted or not.
func (c catalog) product(t *testing.T, id string) domain.Product {
	t.Helper()
	p, err := c.repos.Products.GetAny(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
