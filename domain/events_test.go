package domain

import (
	"slices"
	"testing"
	"time"
)

// TestProductEventsOfAVersion: a version names the changes its counters
// say happened since creation, the same event by the same id whichever
// later version shows it, with sequences that grow along the versions.
func TestProductEventsOfAVersion(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	p := Product{Meta: Meta{ID: "p1"}, Name: "Lamp", PriceCents: 1000, PriceVersion: 1, Version: 1, LastUpdated: now}
	types := func(es []Event) (out []string) {
		for _, e := range es {
			out = append(out, e.EventType)
		}
		return out
	}
	if es := ProductEventsOf(p); len(es) != 0 {
		t.Fatalf("a new product announces %v", types(es))
	}
	p.ApplyStock(Stock{Available: 10, Version: 1}, now) // the first status: no change
	if es := ProductEventsOf(p); len(es) != 0 {
		t.Fatalf("the first stock status announces %v", types(es))
	}

	price := 1200
	p.Apply(ProductChange{PriceCents: ptr(int64(price))}, now)
	first := ProductEventsOf(p)
	if got := types(first); !slices.Equal(got, []string{EventProductPriceChanged}) {
		t.Fatalf("after a price change: %v", got)
	}
	if d := first[0].Product; d.PriceCents != 1200 || d.ID != "p1" {
		t.Errorf("payload %+v", d)
	}

	p.ApplyStock(Stock{Available: 0, Version: 2}, now)
	second := ProductEventsOf(p)
	if got := types(second); !slices.Equal(got, []string{EventProductPriceChanged, EventProductAvailabilityChanged}) {
		t.Fatalf("after a sell-out: %v", got)
	}
	if second[0].ID != first[0].ID {
		t.Errorf("the price change is %s in one version and %s in the next: it would be delivered twice", first[0].ID, second[0].ID)
	}
	if second[1].Sequence <= first[0].Sequence || second[1].Product.Availability != SoldOut {
		t.Errorf("availability event: sequence %d after %d, %+v", second[1].Sequence, first[0].Sequence, second[1].Product)
	}

	p.SoftDelete(60, now)
	third := ProductEventsOf(p)
	if got := types(third); !slices.Equal(got, []string{EventProductDeleted}) || third[0].Sequence <= second[1].Sequence {
		t.Errorf("after the delete: %v (sequence %d)", got, third[0].Sequence)
	}
	for _, e := range slices.Concat(first, second, third) {
		if e.Type != TypeEvent || e.Subject != "p1" || e.ProductID != "p1" || !ValidEventType(e.EventType) {
			t.Errorf("event %+v", e)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestProductEventsOfVariants: a price change of one variant of a product
// with variants is a product.price_changed naming every variant's price,
// the same event id a product without variants would have.
func TestProductEventsOfVariants(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	p := Product{Meta: Meta{ID: "tee"}, Name: "Tee", PriceVersion: 1, Version: 1, LastUpdated: now}
	p.SetVariants([]Variant{
		{SKU: "tee-m", Attributes: map[string]string{"size": "M"}, PriceCents: 1500},
		{SKU: "tee-l", Attributes: map[string]string{"size": "L"}, PriceCents: 1700},
	})
	if es := ProductEventsOf(p); len(es) != 0 {
		t.Fatalf("a new product with variants announces %d events", len(es))
	}
	vs := slices.Clone(p.Variants)
	vs[1].PriceCents = 1900
	p.Apply(ProductChange{Variants: &vs}, now)
	es := ProductEventsOf(p)
	if len(es) != 1 || es[0].EventType != EventProductPriceChanged || es[0].ID != "event-tee-price-2" {
		t.Fatalf("after a variant's price change: %+v", es)
	}
	want := []VariantPrice{{SKU: "tee-m", PriceCents: 1500}, {SKU: "tee-l", PriceCents: 1900}}
	if d := es[0].Product; d.PriceCents != 1500 || !slices.Equal(d.Variants, want) {
		t.Errorf("payload %+v, want priceCents 1500 (the lowest) and variants %v", d, want)
	}
	plain := Product{Meta: Meta{ID: "mug"}, PriceCents: 900, PriceVersion: 2, Version: 2}
	if es := ProductEventsOf(plain); len(es) != 1 || es[0].Product.Variants != nil {
		t.Errorf("a product without variants: %+v, want no variants in the payload", es)
	}
}
