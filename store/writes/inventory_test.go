package writes_test

import (
	"context"
	"errors"
	"shop/domain/payments/paymentstest"
	"slices"
	"sync/atomic"
	"testing"

	"shop/domain"
	"shop/store"
	"shop/store/writes"
)

// abandoning is a store that, like Cosmos, refuses every call whose
// context has ended; armed, the next order batch does not commit, and the
// caller gives up meanwhile (its context is cancelled): a client that
// timed out, or the API's request deadline, in the middle of a checkout.
type abandoning struct {
	store.Store
	armed  atomic.Bool
	cancel context.CancelFunc
}

func (s *abandoning) Container(name string) store.Container {
	return abandoningContainer{s.Store.Container(name), s, name}
}

type abandoningContainer struct {
	store.Container
	s    *abandoning
	name string
}

func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "the store call was abandoned: %v", err)
	}
	return nil
}

func (c abandoningContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	if err := ended(ctx); err != nil {
		return store.ItemResponse{}, err
	}
	return c.Container.Read(ctx, pk, id)
}

func (c abandoningContainer) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	if err := ended(ctx); err != nil {
		return store.ItemResponse{}, err
	}
	return c.Container.Create(ctx, pk, item)
}

func (c abandoningContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := ended(ctx); err != nil {
		return store.ItemResponse{}, err
	}
	return c.Container.Replace(ctx, pk, id, item, opts)
}

func (c abandoningContainer) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	if err := ended(ctx); err != nil {
		return store.ItemResponse{}, err
	}
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

func (c abandoningContainer) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	if err := ended(ctx); err != nil {
		return store.BatchResponse{}, err
	}
	if c.name == store.OrdersContainer && c.s.armed.CompareAndSwap(true, false) {
		c.s.cancel()
		return store.BatchResponse{}, domain.Errorf(domain.EUNAVAILABLE, "the store did not answer in time")
	}
	return c.Container.ExecuteBatch(ctx, pk, ops)
}

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
			repos := store.NewRepos(openStore(t))
			ws := writes.New(repos, paymentstest.Embedded(t), nil)
			if _, err := repos.Products.Create(t.Context(), domain.Product{
				Meta: domain.Meta{ID: "p1"}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD",
				PriceVersion: 1, Version: 1, Availability: domain.Availability{Status: tc.status},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.SetCartLine(t.Context(), "u1", "p1", 2, ""); err != nil {
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
			if _, err := repos.Inventory.Stock(t.Context(), "p1"); !errors.Is(err, store.ErrUntracked) {
				t.Errorf("stock after the checkout: %v, want still none", err)
			}
		})
	}
}
