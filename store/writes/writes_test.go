package writes_test

import (
	"context"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// batchFault makes the next order batch of the orders container fail
// with 503, after the store committed it (committed true) or before.
type batchFault struct {
	store.Store
	armed     atomic.Bool
	committed bool
}

func (s *batchFault) Container(name string) store.Container {
	c := s.Store.Container(name)
	if name != store.OrdersContainer {
		return c
	}
	return faultyBatches{c, s}
}

type faultyBatches struct {
	store.Container
	s *batchFault
}

func (c faultyBatches) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	if !c.s.armed.CompareAndSwap(true, false) {
		return c.Container.ExecuteBatch(ctx, pk, ops)
	}
	unavailable := domain.Errorf(domain.EUNAVAILABLE, "the store is unavailable")
	if !c.s.committed {
		return store.BatchResponse{}, unavailable
	}
	if _, err := c.Container.ExecuteBatch(ctx, pk, ops); err != nil {
		return store.BatchResponse{}, err
	}
	return store.BatchResponse{}, unavailable
}

// openStore opens a migrated embedded store in a temp dir.
func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(t.Context(), st, io.Discard); err != nil {
		t.Fatal(err)
	}
	return st
}

func setup(t *testing.T, committed bool) (*writes.Writes, *repo.Set, *batchFault) {
	t.Helper()
	st := openStore(t)
	repos := repo.New(st, 0)
	p := domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
	if _, err := repos.Products.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	f := &batchFault{Store: st, committed: committed}
	ws := writes.New(repo.New(f, 0), paymentstest.Embedded(t), nil)
	if _, err := ws.SetCartLine(t.Context(), "u1", "p1", "", 2, ""); err != nil {
		t.Fatal(err)
	}
	return ws, repos, f
}

var req = writes.CheckoutRequest{
	UserID: "u1", Customer: domain.Customer{Name: "U"}, Key: "k1", RequestHash: "h", PaymentMethod: "pm_card_visa",
	Address: domain.Address{Name: "U", Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"},
}

// TestCheckoutWhoseBatchCommittedButAnsweredUnavailable: a batch may
// commit and still answer 503 (on Cosmos, a timeout). The checkout looks
// before it answers: the order's id is taken, so the order stands, and
// it is settled and answered as placed.
func TestCheckoutWhoseBatchCommittedButAnsweredUnavailable(t *testing.T) {
	ws, repos, f := setup(t, true)
	f.armed.Store(true)
	o, err := ws.Checkout(t.Context(), req)
	if err != nil {
		t.Fatalf("checkout = %v, want the order placed", err)
	}
	c, err := repos.Carts.Get(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 0 || c.Pending != nil {
		t.Errorf("cart = %d lines, marker %+v; want settled", len(c.Items), c.Pending)
	}
	if _, err := repos.Orders.Get(t.Context(), "u1", o.ID); err != nil {
		t.Errorf("order %s: %v", o.ID, err)
	}
}

// TestCheckoutWhoseBatchFailedUnavailable: an opening batch that did not
// commit and answered 503 leaves nothing but the claim: the checkout
// answers 503, and the next change of the cart (here the next checkout)
// voids the claim's order id, so the batch can never commit late, and
// orders the cart.
func TestCheckoutWhoseBatchFailedUnavailable(t *testing.T) {
	ws, repos, f := setup(t, false)
	f.armed.Store(true)
	_, err := ws.Checkout(t.Context(), req)
	if !domain.IsCode(err, domain.EUNAVAILABLE) {
		t.Fatalf("checkout = %v, want EUNAVAILABLE", err)
	}
	c, err := ws.Cart(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 1 {
		t.Errorf("cart = %d lines; want the line", len(c.Items))
	}
	sum, err := repos.Orders.Summary(t.Context(), "u1")
	if err != nil || sum.TotalOrders != 0 {
		t.Errorf("summary = %d orders (%v), want 0", sum.TotalOrders, err)
	}
	o, err := ws.Checkout(t.Context(), req)
	if err != nil || len(o.Items) != 1 || o.Items[0].Quantity != 2 {
		t.Fatalf("retry = %+v, %v; want the cart ordered", o.Items, err)
	}
	// The failed attempt's order id is voided, once.
	page, err := f.Store.Container(store.OrdersContainer).Query(t.Context(), store.Query{
		PartitionKey: "u1",
		Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeVoidedOrder}},
	})
	if err != nil || len(page.Items) != 1 {
		t.Errorf("voided order ids = %d (%v), want 1", len(page.Items), err)
	}
}

// TestCreateProduct: the product's conditional create is the one
// decision of a create, and only its winner writes the stock.
func TestCreateProduct(t *testing.T) {
	tea := func(id string) domain.Product {
		return domain.Product{Meta: domain.Meta{ID: id}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
	}
	t.Run("a create that loses with 409 writes nothing", func(t *testing.T) {
		repos := repo.New(openStore(t), 0)
		ws := writes.New(repos, paymentstest.Embedded(t), nil)
		if _, err := ws.CreateProduct(t.Context(), tea("p1"), 5, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.CreateProduct(t.Context(), tea("p1"), 9, nil); !domain.IsCode(err, domain.ECONFLICT) {
			t.Fatalf("second create = %v, want ECONFLICT", err)
		}
		if s, err := repos.Inventory.Stock(t.Context(), "p1", ""); err != nil || s.Available != 5 {
			t.Errorf("stock = %d (%v), want the first create's 5", s.Available, err)
		}
	})
	t.Run("over the stock of a product deleted long ago", func(t *testing.T) {
		repos := repo.New(openStore(t), 0)
		ws := writes.New(repos, paymentstest.Embedded(t), nil)
		// The product's ttl passed; its stock document stayed.
		if _, err := repos.Inventory.SetStock(t.Context(), "p1", "", 3, "", time.Now()); err != nil {
			t.Fatal(err)
		}
		p, err := ws.CreateProduct(t.Context(), tea("p1"), 40, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Availability.Status, domain.InStock; got != want {
			t.Errorf("created product's availability = %q, want %q", got, want)
		}
		if s, err := repos.Inventory.Stock(t.Context(), "p1", ""); err != nil || s.Available != 40 {
			t.Errorf("stock = %d (%v), want the create's 40", s.Available, err)
		}
	})
}
