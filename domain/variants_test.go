package domain_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
)

// tee returns a product sold in sizes M (19.99) and L (24.99), each in
// stock at version 1.
func tee() domain.Product {
	p := product("tee", 0)
	p.SetVariants([]domain.Variant{
		{SKU: "tee-m", Attributes: map[string]string{"size": "M", "colour": "navy"}, PriceCents: 1999},
		{SKU: "tee-l", Attributes: map[string]string{"size": "L", "colour": "navy"}, PriceCents: 2499},
	})
	for _, sku := range p.SKUs() {
		p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: sku, Available: 10, Version: 1}, now)
	}
	return p
}

func TestValidateVariants(t *testing.T) {
	v := func(sku string, price int64, attrs ...string) domain.Variant {
		m := map[string]string{}
		for i := 0; i+1 < len(attrs); i += 2 {
			m[attrs[i]] = attrs[i+1]
		}
		return domain.Variant{SKU: sku, Attributes: m, PriceCents: price}
	}
	many := make([]domain.Variant, domain.MaxVariants+1)
	for i := range many {
		many[i] = v(fmt.Sprintf("s%d", i), 100, "n", fmt.Sprint(i))
	}
	for _, tc := range []struct {
		name    string
		vs      []domain.Variant
		pointer string // "" means valid
	}{
		{"none", nil, ""},
		{"two sizes", []domain.Variant{v("m", 100, "size", "M"), v("l", 200, "size", "L")}, ""},
		{"the bound", many[:domain.MaxVariants], ""},
		{"past the bound", many, "/variants"},
		{"empty sku", []domain.Variant{v("", 100, "size", "M")}, "/variants/0/sku"},
		{"sku with a slash", []domain.Variant{v("a/b", 100, "size", "M")}, "/variants/0/sku"},
		{"repeated sku", []domain.Variant{v("m", 100, "size", "M"), v("m", 100, "size", "L")}, "/variants/1/sku"},
		{"no price", []domain.Variant{v("m", 0, "size", "M")}, "/variants/0/priceCents"},
		{"no attributes", []domain.Variant{v("m", 100)}, "/variants/0/attributes"},
		{"five attributes", []domain.Variant{v("m", 100, "a", "1", "b", "1", "c", "1", "d", "1", "e", "1")}, "/variants/0/attributes"},
		{"upper-case name", []domain.Variant{v("m", 100, "Size", "M")}, "/variants/0/attributes"},
		// The category page reads these query parameters as its own, so
		// a facet of such a name could never be filtered on (?limit=big
		// is a bad page size).
		{"name limit", []domain.Variant{v("m", 100, "limit", "big")}, "/variants/0/attributes"},
		{"name sort", []domain.Variant{v("m", 100, "sort", "price")}, "/variants/0/attributes"},
		{"name continuation", []domain.Variant{v("m", 100, "continuation", "x")}, "/variants/0/attributes"},
		{"= in a value", []domain.Variant{v("m", 100, "size", "M=L")}, "/variants/0/attributes/size"},
		{"comma in a value", []domain.Variant{v("m", 100, "size", "M,L")}, "/variants/0/attributes/size"},
		{"padded value", []domain.Variant{v("m", 100, "size", " M")}, "/variants/0/attributes/size"},
		// What every one-line text refuses (api's "line" rule): a C1
		// control (U+0085 is a line break) and a bidi override, which
		// shows a value as another.
		{"C1 control in a value", []domain.Variant{v("m", 100, "size", "M\u0085L")}, "/variants/0/attributes/size"},
		{"bidi override in a value", []domain.Variant{v("m", 100, "size", "\u202eLX")}, "/variants/0/attributes/size"},
		{"bidi isolate in a value", []domain.Variant{v("m", 100, "size", "M\u2066L")}, "/variants/0/attributes/size"},
		{"accented value", []domain.Variant{v("m", 100, "colour", "bleu clair é")}, ""},
		{"other names", []domain.Variant{v("m", 100, "size", "M"), v("navy", 100, "colour", "navy")}, "/variants/1/attributes"},
		{"same values twice", []domain.Variant{v("m", 100, "size", "M"), v("m2", 200, "size", "M")}, "/variants/1/attributes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := domain.ValidateVariants(tc.vs)
			if tc.pointer == "" {
				if err != nil {
					t.Fatalf("ValidateVariants: %v, want valid", err)
				}
				return
			}
			e, ok := err.(*domain.Error)
			if !ok || e.Code != domain.EINVALID {
				t.Fatalf("ValidateVariants: %v, want EINVALID", err)
			}
			if !slices.ContainsFunc(e.Fields, func(f domain.FieldError) bool { return f.Pointer == tc.pointer }) {
				t.Errorf("fields %+v do not name %s", e.Fields, tc.pointer)
			}
		})
	}
}

func TestVariantsDeriveThePriceAndTheStatus(t *testing.T) {
	p := tee()
	if p.PriceCents != 1999 || p.PriceMax() != 2499 {
		t.Errorf("price %d..%d, want 1999..2499", p.PriceCents, p.PriceMax())
	}
	if p.Availability.Status != domain.InStock {
		t.Errorf("status %q, want in stock", p.Availability.Status)
	}
	// M sells out: L still makes the product in stock.
	p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-m", Available: 0, Version: 2}, now)
	if p.Availability.Status != domain.InStock {
		t.Errorf("one size sold out: status %q, want in stock", p.Availability.Status)
	}
	v, _ := p.VariantOf("tee-m")
	if v.Availability.Status != domain.SoldOut {
		t.Errorf("M shows %q, want sold out", v.Availability.Status)
	}
	// L runs low, then out: low, then sold out.
	p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-l", Available: 2, Version: 2}, now)
	if p.Availability.Status != domain.LowInStock {
		t.Errorf("best is low: status %q", p.Availability.Status)
	}
	p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-l", Available: 0, Version: 3}, now)
	if p.Availability.Status != domain.SoldOut {
		t.Errorf("every size sold out: status %q", p.Availability.Status)
	}
	// An older stock version never moves a copy back.
	if p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-l", Available: 9, Version: 2}, now) {
		t.Error("an older stock version changed the product")
	}
	// The implicit variant's stock and an unknown SKU change nothing.
	for _, s := range []domain.Stock{{SKU: "", Available: 5, Version: 9}, {SKU: "tee-xl", Available: 5, Version: 9}} {
		if p.ApplyStock(s, now) {
			t.Errorf("stock of %q changed a product that does not sell it", s.SKU)
		}
	}
	if got, want := p.Facets(), []string{"colour=navy", "size=L", "size=M"}; !slices.Equal(got, want) {
		t.Errorf("Facets %v, want %v", got, want)
	}
	s := domain.SummaryOfProduct(p)
	if s.PriceCents != 1999 || s.PriceMaxCents != 2499 || !slices.Equal(s.Attributes, p.Facets()) {
		t.Errorf("summary %+v does not carry the range and the attributes", s)
	}
	if plain := domain.SummaryOfProduct(product("plain", 500)); plain.PriceMaxCents != 0 || plain.Attributes != nil {
		t.Errorf("a product of one price carries a range or attributes: %+v", plain)
	}
}

func TestSetVariantsKeepsTheStockOfTheSKUsThatStay(t *testing.T) {
	p := tee()
	p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-m", Available: 0, Version: 2}, now)
	p.SetVariants([]domain.Variant{
		{SKU: "tee-m", Attributes: map[string]string{"size": "M", "colour": "navy"}, PriceCents: 1799},
		{SKU: "tee-s", Attributes: map[string]string{"size": "S", "colour": "navy"}, PriceCents: 1799},
	})
	m, _ := p.VariantOf("tee-m")
	if m.Availability != (domain.Availability{Status: domain.SoldOut, SourceVersion: 2}) {
		t.Errorf("M's availability %+v, want the one it had", m.Availability)
	}
	if _, ok := p.VariantOf("tee-l"); ok {
		t.Error("L is still sold")
	}
	if p.PriceCents != 1799 {
		t.Errorf("price %d, want the lowest, 1799", p.PriceCents)
	}
	// Back to one implicit variant: sold out until its own stock says
	// otherwise, and any stock version takes it; never untracked.
	p.SetVariants(nil)
	if p.Variants != nil || p.Availability != (domain.Availability{Status: domain.SoldOut}) {
		t.Errorf("without variants: %+v, %+v", p.Variants, p.Availability)
	}
	if !p.ApplyStock(domain.Stock{ProductID: p.ID, Available: 3, Version: 1}, now) || p.Availability.Status != domain.LowInStock {
		t.Errorf("the implicit stock was not taken: %+v", p.Availability)
	}
}

func TestCartLinesPerVariant(t *testing.T) {
	p := tee()
	c := domain.NewCart("u1")
	if err := c.SetQuantity(p, "", 1, now); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("a line of no SKU on a product with variants: %v, want EINVALID", err)
	}
	if err := c.SetQuantity(p, "tee-xl", 1, now); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("an unknown SKU: %v, want ENOTFOUND", err)
	}
	if err := c.SetQuantity(product("plain", 500), "x", 1, now); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("a SKU on a product without variants: %v, want ENOTFOUND", err)
	}
	if err := c.SetQuantity(p, "tee-m", 2, now); err != nil {
		t.Fatal(err)
	}
	if err := c.AddQuantity(p, "tee-l", 1, now); err != nil {
		t.Fatal(err)
	}
	if err := c.AddQuantity(p, "tee-m", 1, now); err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 2 || c.ItemCount != 4 || c.SubtotalCents != 3*1999+2499 {
		t.Fatalf("cart %+v: want 3 M and 1 L", c)
	}
	if !slices.Equal(c.ProductIDs, []string{"tee"}) {
		t.Errorf("productIds %v, want the product once", c.ProductIDs)
	}
	l, _ := c.Line("tee", "tee-l")
	if l.Attributes["size"] != "L" || l.UnitPriceCents != 2499 {
		t.Errorf("L's line %+v", l)
	}

	// L's price changes: only L's line moves.
	ch := p
	vs := slices.Clone(ch.Variants)
	vs[1].PriceCents = 2299
	ch.Apply(domain.ProductChange{Variants: &vs}, now)
	if ch.PriceVersion != p.PriceVersion+1 {
		t.Fatalf("a variant's price change left priceVersion at %d", ch.PriceVersion)
	}
	if !c.ApplyProduct(ch, now) {
		t.Fatal("the price change did not reach the cart")
	}
	if l, _ := c.Line("tee", "tee-l"); l.UnitPriceCents != 2299 {
		t.Errorf("L's line at %d, want 2299", l.UnitPriceCents)
	}
	if m, _ := c.Line("tee", "tee-m"); m.UnitPriceCents != 1999 {
		t.Errorf("M's line at %d, want 1999", m.UnitPriceCents)
	}
	// An older product version changes nothing (the version guard).
	if c.ApplyProduct(p, now) {
		t.Error("an older product version changed the cart")
	}

	// L is no longer sold: its line is unavailable, M's is not.
	gone := ch
	vs = slices.Clone(gone.Variants[:1])
	gone.Apply(domain.ProductChange{Variants: &vs}, now)
	c.ApplyProduct(gone, now)
	if l, _ := c.Line("tee", "tee-l"); l.Available {
		t.Error("the line of a removed variant is still available")
	}
	if m, _ := c.Line("tee", "tee-m"); !m.Available {
		t.Error("the line of a variant still sold became unavailable")
	}
	if _, err := domain.NewOrder("o1", c, domain.Customer{}, domain.Address{}, "k", now); err == nil || !strings.Contains(err.Error(), "tee/tee-l") {
		t.Errorf("ordering an unavailable variant: %v, want a conflict naming tee/tee-l", err)
	}

	// Settle takes out what the order paid for, per variant.
	c.RemoveLine("tee", "tee-l", now)
	o, err := domain.NewOrder("o1", c, domain.Customer{}, domain.Address{}, "k", now)
	if err != nil {
		t.Fatal(err)
	}
	if o.Items[0].SKU != "tee-m" || o.Items[0].Attributes["size"] != "M" {
		t.Errorf("order line %+v does not name the variant", o.Items[0])
	}
	c.MarkPending(o.ID, now)
	c.AddQuantity(tee(), "tee-l", 1, now) // bought meanwhile in another tab: stays
	if !c.Settle(o, now) || len(c.Items) != 1 || c.Items[0].SKU != "tee-l" {
		t.Errorf("settled cart %+v, want L's line alone", c.Items)
	}
}

// A line copied before the product had variants names no SKU: once
// the product has them, the line says it is no longer available (the
// buyer chooses a size), never sells the implicit variant that is gone.
func TestALineOfNoSKUOnAProductThatGainedVariants(t *testing.T) {
	p := product("tee", 1500)
	c := cartWith(t, p)
	vs := tee().Variants
	p.Apply(domain.ProductChange{Variants: &vs}, now)
	if !c.ApplyProduct(p, now) {
		t.Fatal("the change did not reach the line")
	}
	if l := c.Items[0]; l.Available || l.UnitPriceCents != 1500 {
		t.Errorf("line %+v: want unavailable, at the price it had", l)
	}
}

func TestProductChangeCheck(t *testing.T) {
	price := int64(500)
	if err := (domain.ProductChange{PriceCents: &price}).Check(tee()); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("a price for a product with variants: %v", err)
	}
	none := []domain.Variant{}
	if err := (domain.ProductChange{PriceCents: &price, Variants: &none}).Check(tee()); err != nil {
		t.Errorf("a price with the variants removed: %v", err)
	}
	bad := []domain.Variant{{SKU: "x"}}
	if err := (domain.ProductChange{Variants: &bad}).Check(product("p", 1)); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("invalid variants: %v", err)
	}
}

func TestStockAndReservationIDsPerSKU(t *testing.T) {
	if domain.StockIDOf("") != domain.StockID || domain.StockIDOf("m") == domain.StockID {
		t.Error("the implicit variant's stock id must stay, a variant's differ")
	}
	if domain.ReservationID("o1", "") != "res-o1" || domain.ReservationID("o1", "m") == domain.ReservationID("o1", "l") {
		t.Error("reservation ids must stay for the implicit variant and differ per SKU")
	}
	for _, id := range []string{domain.StockIDOf("tee-m.1_x"), domain.ReservationID("o-20261206T000000-abc", "tee-m.1_x")} {
		if err := domain.ValidateID("id", id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
}

func TestUpgrade(t *testing.T) {
	// A version-1 product, as the shop before variants stored it.
	v1 := []byte(`{"id":"p1","type":"product","schemaVersion":1,"name":"Lamp","priceCents":1500,"priceVersion":1,"availability":{"status":"in_stock","sourceVersion":1},"version":3}`)
	var p domain.Product
	if err := json.Unmarshal(v1, &p); err != nil {
		t.Fatal(err)
	}
	before := p
	if !domain.Upgrade(&p) {
		t.Fatal("a version-1 product was not upgraded")
	}
	if p.SchemaVersion != domain.SchemaVersion {
		t.Errorf("schemaVersion %d, want %d", p.SchemaVersion, domain.SchemaVersion)
	}
	before.SchemaVersion = p.SchemaVersion
	if diff := cmp.Diff(before, p); diff != "" {
		t.Errorf("the upgrade changed more than the version (-v1 +v2):\n%s", diff)
	}
	// It reads as one implicit variant.
	if v, ok := p.VariantOf(""); !ok || v.PriceCents != 1500 || v.Availability.Status != domain.InStock {
		t.Errorf("implicit variant %+v, %v", v, ok)
	}
	// Applied twice it changes nothing.
	again := p
	if domain.Upgrade(&again) || !cmp.Equal(again, p) {
		t.Error("a second upgrade changed the document")
	}
	// Every document type embeds Meta, so each is upgraded alike.
	for _, doc := range []any{&domain.Cart{}, &domain.Order{}, &domain.Stock{}, &domain.Reservation{}, &domain.ProductSummary{}, &domain.SearchEntry{}, &domain.Event{}} {
		if !domain.Upgrade(doc) {
			t.Errorf("%T of version 0 was not upgraded", doc)
		}
	}
	if domain.Upgrade(&struct{ ID string }{}) {
		t.Error("a value that is no document was upgraded")
	}
}

func TestWritableRefusesANewerDocument(t *testing.T) {
	var p domain.Product
	if err := json.Unmarshal([]byte(`{"id":"p1","type":"product","schemaVersion":3,"futureField":{"x":1}}`), &p); err != nil {
		t.Fatal(err)
	}
	if domain.Upgrade(&p) || p.SchemaVersion != 3 {
		t.Errorf("a newer document was changed by the upgrade: version %d", p.SchemaVersion)
	}
	if err := domain.Writable(p); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Errorf("Writable(version 3) = %v, want EUNAVAILABLE", err)
	}
	if err := domain.Writable(&p); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Errorf("Writable(&version 3) = %v, want EUNAVAILABLE", err)
	}
	if err := domain.Writable(tee()); err != nil {
		t.Errorf("Writable(current) = %v", err)
	}
}

// TestAVariantsAvailabilityNamesAnEvent: every change of a variant's
// status is a new availability event of its product, named once.
func TestAVariantsAvailabilityNamesAnEvent(t *testing.T) {
	p := product("tee", 0)
	p.SetVariants(tee().Variants)
	availability := func() []string {
		var ids []string
		for _, e := range domain.ProductEventsOf(p) {
			if e.EventType == domain.EventProductAvailabilityChanged {
				ids = append(ids, e.ID)
			}
		}
		return ids
	}
	if ids := availability(); len(ids) != 0 {
		t.Errorf("a product as created announces %v", ids)
	}
	p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-m", Available: 3, Version: 2}, now)
	first := availability()
	if len(first) != 1 {
		t.Fatalf("after M's change: %v, want one event", first)
	}
	p.ApplyStock(domain.Stock{ProductID: p.ID, SKU: "tee-l", Available: 3, Version: 2}, now)
	second := availability()
	if len(second) != 1 || second[0] == first[0] {
		t.Errorf("after L's change: %v, want one event other than %v", second, first)
	}
}
