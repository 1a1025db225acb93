package domain_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shop/domain"
)

var now = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

// product returns a live product with the given price, at version 1.
func product(id string, priceCents int64) domain.Product {
	return domain.Product{
		Meta:         domain.Meta{ID: id, Type: domain.TypeProduct, SchemaVersion: domain.SchemaVersion},
		Name:         "Name of " + id,
		PriceCents:   priceCents,
		Currency:     "USD",
		PriceVersion: 1,
		Version:      1,
	}
}

// cartWith returns a cart holding quantity 1 of each product.
func cartWith(t *testing.T, ps ...domain.Product) domain.Cart {
	t.Helper()
	c := domain.NewCart("u1")
	for _, p := range ps {
		if err := c.SetQuantity(p, 1, now); err != nil {
			t.Fatalf("SetQuantity(%s): %v", p.ID, err)
		}
	}
	return c
}

func productIDs(c domain.Cart) []string {
	ids := []string{}
	for _, l := range c.Items {
		ids = append(ids, l.ProductID)
	}
	return ids
}

func TestNewCart(t *testing.T) {
	c := domain.NewCart("u1")
	want := domain.Cart{
		Meta:       domain.Meta{ID: "u1", Type: domain.TypeCart, SchemaVersion: domain.SchemaVersion},
		UserID:     "u1",
		Items:      []domain.CartLine{},
		ProductIDs: []string{},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("NewCart (-want +got):\n%s", diff)
	}
}

func TestCartSetQuantityBounds(t *testing.T) {
	tests := []struct {
		name     string
		quantity int
		wantCode string
	}{
		{"zero", 0, domain.EINVALID},
		{"negative", -1, domain.EINVALID},
		{"one", 1, ""},
		{"ninety-nine", 99, ""},
		{"one hundred", 100, domain.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := domain.NewCart("u1")
			err := c.SetQuantity(product("p1", 250), tt.quantity, now)
			if got := domain.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("SetQuantity(%d) code = %q, want %q (err %v)", tt.quantity, got, tt.wantCode, err)
			}
			if err != nil {
				var de *domain.Error
				if !errors.As(err, &de) || len(de.Fields) != 1 || de.Fields[0].Pointer != "/quantity" {
					t.Errorf("SetQuantity(%d) error = %#v, want a field error on /quantity", tt.quantity, err)
				}
				if got := len(c.Items); got != 0 {
					t.Errorf("lines after refused SetQuantity = %d, want 0", got)
				}
			}
		})
	}
}

func TestCartSetQuantityCopiesProduct(t *testing.T) {
	p := product("p1", 1299)
	p.PriceVersion, p.Version = 3, 7
	c := domain.NewCart("u1")
	if err := c.SetQuantity(p, 4, now); err != nil {
		t.Fatal(err)
	}
	want := []domain.CartLine{{
		ProductID:      "p1",
		Name:           "Name of p1",
		UnitPriceCents: 1299,
		PriceVersion:   3,
		ProductVersion: 7,
		Quantity:       4,
		LineTotalCents: 5196,
		Available:      true,
	}}
	if diff := cmp.Diff(want, c.Items); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if got, want := c.SubtotalCents, int64(5196); got != want {
		t.Errorf("subtotal = %d, want %d", got, want)
	}
	if !c.LastUpdated.Equal(now) {
		t.Errorf("lastUpdated = %v, want %v", c.LastUpdated, now)
	}
}

func TestCartSetQuantityUpdateKeepsPosition(t *testing.T) {
	c := cartWith(t, product("a", 100), product("b", 200), product("c", 300))
	b := product("b", 250)
	b.Name, b.PriceVersion, b.Version = "Renamed b", 2, 2
	if err := c.SetQuantity(b, 5, now); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, productIDs(c)); diff != "" {
		t.Errorf("line order (-want +got):\n%s", diff)
	}
	line, ok := c.Line("b")
	if !ok {
		t.Fatal("line b missing")
	}
	want := domain.CartLine{ProductID: "b", Name: "Renamed b", UnitPriceCents: 250, PriceVersion: 2,
		ProductVersion: 2, Quantity: 5, LineTotalCents: 1250, Available: true}
	if diff := cmp.Diff(want, line); diff != "" {
		t.Errorf("updated line (-want +got):\n%s", diff)
	}
	if got, want := c.ItemCount, 7; got != want {
		t.Errorf("itemCount = %d, want %d", got, want)
	}
}

func TestCartSetQuantityLineLimit(t *testing.T) {
	c := domain.NewCart("u1")
	for i := range domain.MaxCartLines {
		if err := c.SetQuantity(product(fmt.Sprintf("p%02d", i), 100), 1, now); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	err := c.SetQuantity(product("p50", 100), 1, now)
	if got, want := domain.ErrorCode(err), domain.ECONFLICT; got != want {
		t.Fatalf("51st line: code = %q, want %q (err %v)", got, want, err)
	}
	if got, want := len(c.Items), domain.MaxCartLines; got != want {
		t.Errorf("lines = %d, want %d", got, want)
	}
	// Changing the quantity of a line already present is not a new line.
	if err := c.SetQuantity(product("p10", 100), 3, now); err != nil {
		t.Errorf("update of an existing line in a full cart: %v", err)
	}
}

func TestCartSetQuantityDeletedProduct(t *testing.T) {
	p := product("p1", 100)
	p.Deleted = true
	c := domain.NewCart("u1")
	err := c.SetQuantity(p, 1, now)
	if got, want := domain.ErrorCode(err), domain.ENOTFOUND; got != want {
		t.Fatalf("code = %q, want %q", got, want)
	}
	if got := len(c.Items); got != 0 {
		t.Errorf("lines = %d, want 0", got)
	}
}

func TestCartRemoveLine(t *testing.T) {
	tests := []struct {
		name        string
		remove      string
		wantRemoved bool
		wantIDs     []string
		wantCount   int
		wantTotal   int64
	}{
		{"first", "a", true, []string{"b", "c"}, 2, 500},
		{"middle", "b", true, []string{"a", "c"}, 2, 400},
		{"last", "c", true, []string{"a", "b"}, 2, 300},
		{"absent", "z", false, []string{"a", "b", "c"}, 3, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cartWith(t, product("a", 100), product("b", 200), product("c", 300))
			if got := c.RemoveLine(tt.remove, now); got != tt.wantRemoved {
				t.Errorf("RemoveLine(%q) = %v, want %v", tt.remove, got, tt.wantRemoved)
			}
			if diff := cmp.Diff(tt.wantIDs, productIDs(c)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantIDs, c.ProductIDs); diff != "" {
				t.Errorf("productIds (-want +got):\n%s", diff)
			}
			if got := c.ItemCount; got != tt.wantCount {
				t.Errorf("itemCount = %d, want %d", got, tt.wantCount)
			}
			if got := c.SubtotalCents; got != tt.wantTotal {
				t.Errorf("subtotal = %d, want %d", got, tt.wantTotal)
			}
		})
	}
}

func TestCartApplyProduct(t *testing.T) {
	base := product("p1", 1000) // version 1, priceVersion 1
	at := func(version, priceVersion, price int64, name string, deleted bool) domain.Product {
		p := base
		p.Version, p.PriceVersion, p.PriceCents, p.Name, p.Deleted = version, priceVersion, price, name, deleted
		return p
	}
	tests := []struct {
		name        string
		apply       []domain.Product
		wantChanged []bool
		wantLine    domain.CartLine
		wantTotal   int64
	}{
		{
			name:        "price change",
			apply:       []domain.Product{at(2, 2, 800, "Name of p1", false)},
			wantChanged: []bool{true},
			wantLine:    domain.CartLine{ProductID: "p1", Name: "Name of p1", UnitPriceCents: 800, PriceVersion: 2, ProductVersion: 2, Quantity: 2, LineTotalCents: 1600, Available: true},
			wantTotal:   1600,
		},
		{
			name:        "v3 then late v2 leaves v3",
			apply:       []domain.Product{at(3, 3, 700, "Name of p1", false), at(2, 2, 800, "Name of p1", false)},
			wantChanged: []bool{true, false},
			wantLine:    domain.CartLine{ProductID: "p1", Name: "Name of p1", UnitPriceCents: 700, PriceVersion: 3, ProductVersion: 3, Quantity: 2, LineTotalCents: 1400, Available: true},
			wantTotal:   1400,
		},
		{
			name:        "same version twice is a no-op",
			apply:       []domain.Product{at(2, 2, 800, "Name of p1", false), at(2, 2, 800, "Name of p1", false)},
			wantChanged: []bool{true, false},
			wantLine:    domain.CartLine{ProductID: "p1", Name: "Name of p1", UnitPriceCents: 800, PriceVersion: 2, ProductVersion: 2, Quantity: 2, LineTotalCents: 1600, Available: true},
			wantTotal:   1600,
		},
		{
			name:        "name-only change moves productVersion, not price",
			apply:       []domain.Product{at(2, 1, 1000, "New name", false)},
			wantChanged: []bool{true},
			wantLine:    domain.CartLine{ProductID: "p1", Name: "New name", UnitPriceCents: 1000, PriceVersion: 1, ProductVersion: 2, Quantity: 2, LineTotalCents: 2000, Available: true},
			wantTotal:   2000,
		},
		{
			name:        "deleted product becomes unavailable and leaves the subtotal",
			apply:       []domain.Product{at(2, 1, 1000, "Name of p1", true)},
			wantChanged: []bool{true},
			wantLine:    domain.CartLine{ProductID: "p1", Name: "Name of p1", UnitPriceCents: 1000, PriceVersion: 1, ProductVersion: 2, Quantity: 2, LineTotalCents: 2000, Available: false},
			wantTotal:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := domain.NewCart("u1")
			if err := c.SetQuantity(base, 2, now); err != nil {
				t.Fatal(err)
			}
			for i, p := range tt.apply {
				if got, want := c.ApplyProduct(p, now), tt.wantChanged[i]; got != want {
					t.Errorf("ApplyProduct #%d (v%d) = %v, want %v", i+1, p.Version, got, want)
				}
			}
			line, _ := c.Line("p1")
			if diff := cmp.Diff(tt.wantLine, line); diff != "" {
				t.Errorf("line (-want +got):\n%s", diff)
			}
			if got := c.SubtotalCents; got != tt.wantTotal {
				t.Errorf("subtotal = %d, want %d", got, tt.wantTotal)
			}
			if got, want := c.ItemCount, 2; got != want {
				t.Errorf("itemCount = %d, want %d (unavailable lines still count)", got, want)
			}
		})
	}
}

func TestCartApplyProductNotInCart(t *testing.T) {
	c := cartWith(t, product("a", 100))
	other := product("b", 100)
	other.Version = 5
	if c.ApplyProduct(other, now) {
		t.Error("ApplyProduct of a product not in the cart reported a change")
	}
}

func TestCartSubtotalCountsOnlyAvailableLines(t *testing.T) {
	c := cartWith(t, product("a", 100), product("b", 200), product("c", 300))
	gone := product("b", 200)
	gone.Version, gone.Deleted = 2, true
	c.ApplyProduct(gone, now)
	if got, want := c.SubtotalCents, int64(400); got != want {
		t.Errorf("subtotal = %d, want %d", got, want)
	}
	if got, want := c.ItemCount, 3; got != want {
		t.Errorf("itemCount = %d, want %d", got, want)
	}
}

func TestCartRecompute(t *testing.T) {
	c := domain.Cart{Items: []domain.CartLine{
		{ProductID: "a", UnitPriceCents: 150, Quantity: 3, Available: true},
		{ProductID: "b", UnitPriceCents: 999, Quantity: 99, Available: true},
		{ProductID: "c", UnitPriceCents: 500, Quantity: 2, Available: false},
	}}
	later := now.In(time.FixedZone("CET", 3600))
	c.Recompute(later)
	if diff := cmp.Diff([]int64{450, 98901, 1000}, []int64{c.Items[0].LineTotalCents, c.Items[1].LineTotalCents, c.Items[2].LineTotalCents}); diff != "" {
		t.Errorf("lineTotalCents (-want +got):\n%s", diff)
	}
	if got, want := c.ItemCount, 104; got != want {
		t.Errorf("itemCount = %d, want %d", got, want)
	}
	if got, want := c.SubtotalCents, int64(99351); got != want {
		t.Errorf("subtotal = %d, want %d", got, want)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, c.ProductIDs); diff != "" {
		t.Errorf("productIds (-want +got):\n%s", diff)
	}
	if got, want := c.LastUpdated.Location(), time.UTC; got != want {
		t.Errorf("lastUpdated location = %v, want UTC", got)
	}
}

func TestCartReset(t *testing.T) {
	c := cartWith(t, product("a", 100), product("b", 200))
	c.Reset(now)
	if got := len(c.Items); got != 0 || c.Items == nil {
		t.Errorf("items after Reset = %#v, want empty and not nil", c.Items)
	}
	if c.ItemCount != 0 || c.SubtotalCents != 0 || len(c.ProductIDs) != 0 || c.ProductIDs == nil {
		t.Errorf("totals after Reset = %d items, %d cents, productIds %#v; want zeros and []", c.ItemCount, c.SubtotalCents, c.ProductIDs)
	}
}
