package domain_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
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
		if err := c.SetQuantity(p, "", 1, now); err != nil {
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

// TestCartSetQuantityKeepsANewerCopy: a PUT that read the product before
// the price fan-out wrote a newer copy into the line only changes the
// quantity; the newer copy stays.
func TestCartSetQuantityKeepsANewerCopy(t *testing.T) {
	old := product("a", 100)
	newer := old
	newer.Version, newer.PriceVersion, newer.PriceCents, newer.Name = 2, 2, 80, "Renamed"
	c := cartWith(t, old)
	c.ApplyProduct(newer, now)
	if err := c.SetQuantity(old, "", 3, now); err != nil {
		t.Fatal(err)
	}
	l, _ := c.Line("a", "")
	if l.Quantity != 3 || l.UnitPriceCents != 80 || l.PriceVersion != 2 || l.ProductVersion != 2 || l.Name != "Renamed" {
		t.Errorf("line = %+v, want quantity 3 with the v2 copy (80 cents, priceVersion 2, Renamed)", l)
	}
	if got, want := c.SubtotalCents, int64(240); got != want {
		t.Errorf("subtotal = %d, want %d", got, want)
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
			err := c.SetQuantity(product("p1", 250), "", tt.quantity, now)
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
	if err := c.SetQuantity(p, "", 4, now); err != nil {
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
	if err := c.SetQuantity(b, "", 5, now); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, productIDs(c)); diff != "" {
		t.Errorf("line order (-want +got):\n%s", diff)
	}
	line, ok := c.Line("b", "")
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
		if err := c.SetQuantity(product(fmt.Sprintf("p%02d", i), 100), "", 1, now); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	err := c.SetQuantity(product("p50", 100), "", 1, now)
	if got, want := domain.ErrorCode(err), domain.ECONFLICT; got != want {
		t.Fatalf("51st line: code = %q, want %q (err %v)", got, want, err)
	}
	if got, want := len(c.Items), domain.MaxCartLines; got != want {
		t.Errorf("lines = %d, want %d", got, want)
	}
	// Changing the quantity of a line already present is not a new line.
	if err := c.SetQuantity(product("p10", 100), "", 3, now); err != nil {
		t.Errorf("update of an existing line in a full cart: %v", err)
	}
}

func TestCartSetQuantityDeletedProduct(t *testing.T) {
	p := product("p1", 100)
	p.Deleted = true
	c := domain.NewCart("u1")
	err := c.SetQuantity(p, "", 1, now)
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
			if got := c.RemoveLine(tt.remove, "", now); got != tt.wantRemoved {
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
			if err := c.SetQuantity(base, "", 2, now); err != nil {
				t.Fatal(err)
			}
			for i, p := range tt.apply {
				if got, want := c.ApplyProduct(p, now), tt.wantChanged[i]; got != want {
					t.Errorf("ApplyProduct #%d (v%d) = %v, want %v", i+1, p.Version, got, want)
				}
			}
			line, _ := c.Line("p1", "")
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

func TestCartSettle(t *testing.T) {
	a, b, c := product("a", 100), product("b", 200), product("c", 300)
	order := domain.Order{Meta: domain.Meta{ID: "o1"}, Items: []domain.OrderLine{
		{ProductID: "a", UnitPriceCents: 100, Quantity: 2},
		{ProductID: "b", UnitPriceCents: 200, Quantity: 1},
	}}
	// line is one product and its quantity in the cart.
	type line struct {
		ID  string
		Qty int
	}
	tests := []struct {
		name string
		// cart is the cart as the settler reads it (a quantity per product).
		cart []line
		// pending is the marker's order id as the settler reads it ("" for
		// no marker).
		pending string
		// priceNow, when set, is a's price refreshed after the checkout.
		priceNow    int64
		wantLines   []line
		wantChanged bool
	}{
		{"untouched since checkout: empty", []line{{"a", 2}, {"b", 1}}, "o1", 0, []line{}, true},
		{"owner added a product: it stays", []line{{"a", 2}, {"b", 1}, {"c", 4}}, "o1", 0, []line{{"c", 4}}, true},
		{"owner raised a paid quantity: the surplus stays", []line{{"a", 5}, {"b", 1}}, "o1", 0, []line{{"a", 3}}, true},
		{"owner lowered a paid quantity: the line goes", []line{{"a", 1}, {"b", 1}}, "o1", 0, []line{}, true},
		{"owner removed a paid line", []line{{"b", 1}, {"c", 1}}, "o1", 0, []line{{"c", 1}}, true},
		{"price refreshed since: same lines go", []line{{"a", 2}, {"b", 1}, {"c", 1}}, "o1", 150, []line{{"c", 1}}, true},
		{"already settled: nothing changes", []line{{"a", 2}, {"c", 1}}, "", 0, []line{{"a", 2}, {"c", 1}}, false},
		{"marker of another checkout: nothing changes", []line{{"a", 2}, {"b", 1}}, "o2", 0, []line{{"a", 2}, {"b", 1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cart := domain.NewCart("u1")
			for _, l := range tt.cart {
				p := map[string]domain.Product{"a": a, "b": b, "c": c}[l.ID]
				if l.ID == "a" && tt.priceNow != 0 {
					p.PriceCents, p.PriceVersion, p.Version = tt.priceNow, 2, 2
				}
				if err := cart.SetQuantity(p, "", l.Qty, now); err != nil {
					t.Fatal(err)
				}
			}
			if tt.pending != "" {
				cart.MarkPending(tt.pending, now)
			}
			later := now.Add(time.Minute)
			if got, want := cart.Settle(order, later), tt.wantChanged; got != want {
				t.Errorf("Settle = %v, want %v", got, want)
			}
			got := []line{}
			for _, l := range cart.Items {
				got = append(got, line{l.ProductID, l.Quantity})
			}
			if diff := cmp.Diff(tt.wantLines, got); diff != "" {
				t.Errorf("lines after Settle (-want +got):\n%s", diff)
			}
			pending, marked := cart.PendingOrder()
			switch {
			case tt.wantChanged && marked:
				t.Errorf("marker %q after Settle, want it cleared", pending)
			case !tt.wantChanged && pending != tt.pending:
				t.Errorf("marker = %q, want %q unchanged", pending, tt.pending)
			}
			if cart.Items == nil || cart.ProductIDs == nil {
				t.Errorf("items %#v, productIds %#v: want empty slices, not nil", cart.Items, cart.ProductIDs)
			}
			var count int
			var subtotal int64
			for _, l := range cart.Items {
				count += l.Quantity
				subtotal += l.UnitPriceCents * int64(l.Quantity)
			}
			if cart.ItemCount != count || cart.SubtotalCents != subtotal {
				t.Errorf("totals = %d items, %d cents; want %d, %d", cart.ItemCount, cart.SubtotalCents, count, subtotal)
			}
			if tt.wantChanged && !cart.LastUpdated.Equal(later) {
				t.Errorf("lastUpdated = %v, want %v", cart.LastUpdated, later)
			}
		})
	}
}

func TestCartSettleTwiceTakesOnce(t *testing.T) {
	cart := cartWith(t, product("a", 100))
	if err := cart.SetQuantity(product("a", 100), "", 3, now); err != nil {
		t.Fatal(err)
	}
	cart.MarkPending("o1", now)
	order := domain.Order{Meta: domain.Meta{ID: "o1"}, Items: []domain.OrderLine{{ProductID: "a", Quantity: 1}}}
	cart.Settle(order, now)
	cart.Settle(order, now)
	if l, ok := cart.Line("a", ""); !ok || l.Quantity != 2 {
		t.Errorf("line a = %+v (present %v), want quantity 2", l, ok)
	}
}
