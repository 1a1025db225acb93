package writes_test

import (
	"fmt"
	"io"
	"path/filepath"
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

// The write path's benchmarks run on the embedded store as shop serve
// opens it, fsync on every commit, and report the store's commits per
// operation (embedded.Store.Commits) and its store operations: the
// figures `shop cost --writepath` sets against the physical limit. With
// -cpuprofile they show where the shop's own CPU goes.

// benchShop is a migrated embedded store with fsync on, the shop's write
// path over it (metered), and products with stock.
type benchShop struct {
	es       *embedded.Store
	setup    *repo.Set
	w        *writes.Writes
	products []domain.Product
}

func newBenchShop(b *testing.B, products int) *benchShop {
	b.Helper()
	es, err := embedded.Open(filepath.Join(b.TempDir(), "shop.db"), embedded.Options{TTLPurgeInterval: 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { es.Close() })
	if err := migrations.Apply(b.Context(), es, io.Discard); err != nil {
		b.Fatal(err)
	}
	pay := paymentstest.Embedded(b)
	s := &benchShop{es: es, setup: repo.New(es, 0), w: writes.New(repo.New(store.Metered(es), 0), pay, nil)}
	for i := range products {
		p := domain.Product{Meta: domain.Meta{ID: fmt.Sprintf("p%02d", i)}, Name: fmt.Sprintf("Product %d", i), CategoryID: "c",
			PriceCents: 500 + int64(i), Currency: "USD", PriceVersion: 1, Version: 1}
		p, err := writes.New(s.setup, pay, nil).CreateProduct(b.Context(), p, domain.MaxStock, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.products = append(s.products, p)
	}
	return s
}

// cart puts one unit of each of the first n products in user's cart,
// without the write path.
func (s *benchShop) cart(b *testing.B, user string, n int) {
	b.Helper()
	_, err := s.setup.Carts.Update(b.Context(), user, "", func(c *domain.Cart) error {
		for _, p := range s.products[:n] {
			if err := c.SetQuantity(p, "", 1, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// report adds the commits and store operations per operation.
func (s *benchShop) report(b *testing.B, commits uint64, m *store.Meter) {
	ops, _, _ := m.Totals()
	b.ReportMetric(float64(commits)/float64(b.N), "commits/op")
	b.ReportMetric(float64(ops)/float64(b.N), "storeops/op")
}

// BenchmarkCartPut is the cart PUT (writes.SetCartLine): one line of a
// 3-line cart set to a quantity it does not hold.
func BenchmarkCartPut(b *testing.B) {
	s := newBenchShop(b, 3)
	s.cart(b, "u", 3)
	ctx, m := store.WithMeter(b.Context())
	start := s.es.Commits()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.w.SetCartLine(ctx, "u", s.products[i%3].ID, "", 2-(i/3)%2, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	s.report(b, s.es.Commits()-start, m)
}

// BenchmarkCheckout is the checkout (writes.Checkout) of a new buyer's
// cart of 1, 3 and 10 lines to placed, with the placed order's effects.
func BenchmarkCheckout(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			s := newBenchShop(b, n)
			ctx, m := store.WithMeter(b.Context())
			var commits uint64
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				user := fmt.Sprintf("buyer-%d", i)
				s.cart(b, user, n)
				start := s.es.Commits()
				b.StartTimer()
				o, err := s.w.Checkout(ctx, writes.CheckoutRequest{UserID: user, Key: "k", RequestHash: "h", PaymentMethod: "pm_card_visa",
					Customer: domain.Customer{Name: "Buyer", Email: "buyer@example.com"},
					Address:  domain.Address{Name: "Buyer", Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"}})
				if err != nil || o.Status != domain.StatusPlaced {
					b.Fatalf("checkout: %v, order %s", err, o.Status)
				}
				commits += s.es.Commits() - start
			}
			b.StopTimer()
			s.report(b, commits, m)
		})
	}
}
