package writes_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reference-shop/shop/domain"
)

// newVariantShop is newShop with one product, "tee", sold in sizes M and
// L with m and l units.
func newVariantShop(t *testing.T, m, l int64) *shop {
	t.Helper()
	s := newShop(t, nil)
	s.stocked = map[string]int64{"tee/tee-m": m, "tee/tee-l": l}
	p := domain.Product{Meta: domain.Meta{ID: "tee"}, Name: "Tee", CategoryID: "c", Currency: "USD", PriceVersion: 1, Version: 1,
		Variants: []domain.Variant{
			{SKU: "tee-m", Attributes: map[string]string{"size": "M"}, PriceCents: 1999},
			{SKU: "tee-l", Attributes: map[string]string{"size": "L"}, PriceCents: 2499},
		}}
	if _, err := s.writes(s.st).CreateProduct(t.Context(), p, 0, map[string]int64{"tee-m": m, "tee-l": l}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCreateProductWithVariants: each SKU gets its stock document, and
// the product is created showing each variant's status and the lowest
// price.
func TestCreateProductWithVariants(t *testing.T) {
	s := newVariantShop(t, 3, 0)
	p, err := s.repos.Products.Get(t.Context(), "tee")
	if err != nil {
		t.Fatal(err)
	}
	if p.PriceCents != 1999 || p.Availability.Status != domain.LowInStock {
		t.Errorf("product at %d, %q; want 1999, low stock (M's 3 units)", p.PriceCents, p.Availability.Status)
	}
	if l, _ := p.VariantOf("tee-l"); l.Availability.Status != domain.SoldOut {
		t.Errorf("L shows %q, want sold out", l.Availability.Status)
	}
	for sku, want := range map[string]int64{"tee-m": 3, "tee-l": 0} {
		if st, err := s.repos.Inventory.Stock(t.Context(), "tee", sku); err != nil || st.Available != want || st.SKU != sku {
			t.Errorf("stock of %s: %+v, %v; want %d", sku, st, err, want)
		}
	}
	if _, err := s.repos.Inventory.Stock(t.Context(), "tee", ""); err == nil {
		t.Error("a product with variants got a stock of its implicit variant")
	}
	if _, err := s.writes(s.st).SetStock(t.Context(), "tee", "", 5, ""); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("SetStock without a SKU on a product with variants: %v, want EINVALID", err)
	}
	if _, err := s.writes(s.st).SetStock(t.Context(), "tee", "tee-xl", 5, ""); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("SetStock of an unknown SKU: %v, want ENOTFOUND", err)
	}
}

// TestTheFlashSaleHoldsPerSKU: buyers race for the last units of two
// sizes of one product. Each size sells exactly its units, no more, and
// no buyer of a size that still has units is refused; cancelled orders
// give their units back to the size they came from, once.
func TestTheFlashSaleHoldsPerSKU(t *testing.T) {
	const buyers = 12
	s := newVariantShop(t, 3, 5)
	sizes := []string{"tee-m", "tee-l"}
	for i := range buyers {
		s.fill1(fmt.Sprintf("u%02d", i), "tee", sizes[i%2], 1)
	}
	var placed [2]atomic.Int64
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() {
			o, err := s.writes(s.st).Checkout(t.Context(), checkout(fmt.Sprintf("u%02d", i), "k", "pm_card_visa"))
			switch {
			case err == nil && o.Status == domain.StatusPlaced:
				placed[i%2].Add(1)
			case domain.ErrorCode(err) == domain.EOUTOFSTOCK:
				if got := shortages(err); len(got) != 1 || got[0].SKU != sizes[i%2] {
					t.Errorf("buyer %d refused for %+v, want %s alone", i, got, sizes[i%2])
				}
			default:
				t.Errorf("buyer %d: %v (%s)", i, err, o.Status)
			}
		})
	}
	wg.Wait()
	if placed[0].Load() != 3 || placed[1].Load() != 5 {
		t.Errorf("placed %d M and %d L, want 3 and 5: every unit sold, none twice", placed[0].Load(), placed[1].Load())
	}
	s.settle(false)
	s.check()

	// Cancel every M order: M's units come back, L's stay sold.
	orders, err := allOrders(t.Context(), s.st)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orders {
		if o.Status == domain.StatusPlaced && o.Items[0].SKU == "tee-m" {
			if _, err := s.writes(s.st).SetOrderStatus(t.Context(), o.UserID, o.ID, "", domain.StatusCancelled); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.settle(false)
	for sku, want := range map[string]int64{"tee-m": 3, "tee-l": 0} {
		if st, _ := s.repos.Inventory.Stock(t.Context(), "tee", sku); st.Available != want {
			t.Errorf("%s: %d available, want %d", sku, st.Available, want)
		}
	}
	s.check()
}

// TestACheckoutOfTwoSizesTakesEach: one cart with both sizes takes from
// each size's stock; a size short refuses the cart naming that SKU alone,
// and nothing is taken.
func TestACheckoutOfTwoSizesTakesEach(t *testing.T) {
	s := newVariantShop(t, 2, 1)
	s.fill1("u1", "tee", "tee-m", 2)
	s.fill1("u1", "tee", "tee-l", 2)
	_, err := s.writes(s.st).Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa"))
	if got := shortages(err); !slices.Equal(got, []domain.Shortage{{ProductID: "tee", SKU: "tee-l", Requested: 2, Available: 1}}) {
		t.Fatalf("checkout: %v, want refused for L alone", err)
	}
	s.fill1("u1", "tee", "tee-l", 1)
	o, err := s.writes(s.st).Checkout(t.Context(), checkout("u1", "k2", "pm_card_visa"))
	if err != nil || o.Status != domain.StatusPlaced {
		t.Fatalf("checkout: %v (%s)", err, o.Status)
	}
	if len(o.Items) != 2 || o.Items[0].SKU != "tee-m" || o.Items[1].Attributes["size"] != "L" || o.TotalCents != 2*1999+2499 {
		t.Errorf("order lines %+v, total %d", o.Items, o.TotalCents)
	}
	s.settle(false)
	s.check()
	c, err := s.writes(s.st).Cart(t.Context(), "u1")
	if err != nil || len(c.Items) != 0 {
		t.Errorf("cart after the order: %+v, %v; want empty", c.Items, err)
	}
}

// TestAVariantAddedLaterShowsItsStock: a change of variants reads the
// stock of each SKU it adds, so a SKU that had units before (removed,
// then added again) shows them at once; the inventory feed would never
// move it, since its stock does not change.
func TestAVariantAddedLaterShowsItsStock(t *testing.T) {
	s := newVariantShop(t, 10, 10)
	w := s.writes(s.st)
	p, _ := s.repos.Products.Get(t.Context(), "tee")
	onlyM := slices.Clone(p.Variants[:1])
	if _, err := w.UpdateProduct(t.Context(), "tee", "", domain.ProductChange{Variants: &onlyM}); err != nil {
		t.Fatal(err)
	}
	both := []domain.Variant{p.Variants[0], p.Variants[1], {SKU: "tee-xl", Attributes: map[string]string{"size": "XL"}, PriceCents: 2699}}
	got, err := w.UpdateProduct(t.Context(), "tee", "", domain.ProductChange{Variants: &both})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := got.VariantOf("tee-l"); l.Availability.Status != domain.InStock {
		t.Errorf("L, added again with 10 units, shows %q", l.Availability.Status)
	}
	if xl, _ := got.VariantOf("tee-xl"); xl.Availability.Status != domain.SoldOut {
		t.Errorf("XL, new, shows %q; want sold out", xl.Availability.Status)
	}
	if st, err := s.repos.Inventory.Stock(t.Context(), "tee", "tee-xl"); err != nil || st.Available != 0 {
		t.Errorf("XL's stock: %+v, %v; want 0 units", st, err)
	}
	price := int64(100)
	if _, err := w.UpdateProduct(t.Context(), "tee", "", domain.ProductChange{PriceCents: &price}); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("a price for a product with variants: %v, want EINVALID", err)
	}
}

// fill1 sets user's line of the variant sku of product to n.
func (s *shop) fill1(user, product, sku string, n int) {
	s.t.Helper()
	if _, err := s.writes(s.st).SetCartLine(s.t.Context(), user, product, sku, n, ""); err != nil {
		s.t.Fatal(err)
	}
}

// TestARefusedChangeOfVariantsWritesNoStock: a change of variants that
// is refused (a product that does not exist, a stale If-Match, a price
// beside variants) leaves no stock document behind for its new SKUs.
func TestARefusedChangeOfVariantsWritesNoStock(t *testing.T) {
	s := newVariantShop(t, 1, 1)
	w := s.writes(s.st)
	vs := []domain.Variant{{SKU: "new-s", Attributes: map[string]string{"size": "S"}, PriceCents: 100}}
	price := int64(5)
	for _, tc := range []struct {
		id, ifMatch string
		ch          domain.ProductChange
	}{
		{"nope", "", domain.ProductChange{Variants: &vs}},
		{"tee", `"stale"`, domain.ProductChange{Variants: &vs}},
		{"tee", "", domain.ProductChange{Variants: &vs, PriceCents: &price}},
	} {
		if _, err := w.UpdateProduct(t.Context(), tc.id, tc.ifMatch, tc.ch); err == nil {
			t.Fatalf("UpdateProduct(%s, %q) succeeded", tc.id, tc.ifMatch)
		}
		if _, err := s.repos.Inventory.Stock(t.Context(), tc.id, "new-s"); err == nil {
			t.Errorf("a refused change of %s (If-Match %q) left the stock of its new SKU", tc.id, tc.ifMatch)
		}
	}
	// Accepted, the new SKU gets its stock, at 0 units.
	if _, err := w.UpdateProduct(t.Context(), "tee", "", domain.ProductChange{Variants: &vs}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.repos.Inventory.Stock(t.Context(), "tee", "new-s"); err != nil || st.Available != 0 {
		t.Errorf("stock of the new SKU: %+v, %v", st, err)
	}
}

// TestVariantsTakenAwaySellTheImplicitStockOnly: a product whose
// variants are removed sells its own stock, counted: never without a
// limit while its new stock's status is on its way.
func TestVariantsTakenAwaySellTheImplicitStockOnly(t *testing.T) {
	s := newVariantShop(t, 5, 5)
	w := s.writes(s.st)
	none := []domain.Variant{}
	price := int64(700)
	p, err := w.UpdateProduct(t.Context(), "tee", "", domain.ProductChange{Variants: &none, PriceCents: &price})
	if err != nil {
		t.Fatal(err)
	}
	if p.Availability.Status != domain.SoldOut {
		t.Errorf("without variants, before its stock is counted: %q, want sold out", p.Availability.Status)
	}
	s.fill1("u1", "tee", "", 1)
	if _, err := w.Checkout(t.Context(), checkout("u1", "k1", "pm_card_visa")); domain.ErrorCode(err) != domain.EOUTOFSTOCK {
		t.Errorf("a checkout of the uncounted implicit variant: %v, want out of stock", err)
	}
}
