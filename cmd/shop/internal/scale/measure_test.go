package scale

import (
	"path/filepath"
	"testing"

	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

func TestMeasureChargesSplitsEachOperationByContainer(t *testing.T) {
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true, PhysicalPartitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ch, err := measureCharges(t.Context(), s, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", ch)
	classes := map[string]Cost{}
	for _, c := range ch.Mix {
		classes[c.Class] = c.Cost
	}
	// Where each operation must land: the containers its documents live in.
	for _, tc := range []struct {
		what      string
		cost      Cost
		container string
	}{
		{"product page", classes[classProduct], store.ProductsContainer},
		{"category page", classes[classCategory], store.ProductsByCategoryContainer},
		{"cart update", classes[classCart], store.CartsContainer},
		{"checkout", classes[classCheckout], store.OrdersContainer},
		{"checkout's stock take", classes[classCheckout], store.InventoryContainer},
		{"checkout's summary (orders feed)", classes[classCheckout], store.OrdersByStatusContainer},
		{"home page", ch.Home, store.ProductsContainer},
		{"review", ch.Review, store.ReviewsContainer},
		{"review's recount (reviews feed)", ch.Review, store.ProductsContainer},
		{"price change's fan-out", ch.PriceChange, store.CartsContainer},
	} {
		if tc.cost.RU(tc.container) <= 0 {
			t.Errorf("%s: no Request Units in %s (%+v)", tc.what, tc.container, tc.cost)
		}
	}
	if got := len(classes[classProduct]); got != 1 {
		t.Errorf("product page touches %d containers, want 1: %+v", got, classes[classProduct])
	}
	for kind, n := range ch.Sizes {
		if n <= 0 {
			t.Errorf("size of %s = %d", kind, n)
		}
	}
}
