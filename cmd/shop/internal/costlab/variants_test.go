package costlab

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/reference-shop/shop/cmd/shop/internal/shopstore"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
)

// TestVariantsPart measures the attribute array on a small category and
// checks the figures against what the design promises, not fixed ones:
// the product page stays one read however many variants, its document
// grows with them and stays far below the item limit at the bound; the
// filtered category page is one query that reads only the products with
// the value, where the client's filter reads the whole category.
func TestVariantsPart(t *testing.T) {
	ctx := context.Background()
	s, _, _, closeStore, err := shopstore.OpenScratch(ctx, noEnv, "costlab", 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeStore)
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		t.Fatal(err)
	}
	const size = 48 // every 8th in sizes: 6 with the value
	v, err := measureVariants(ctx, s, store.Metered(s), 2, size)
	if err != nil {
		t.Fatal(err)
	}

	if got, want := len(v.Pages), len(variantCounts); got != want {
		t.Fatalf("product pages = %d, want %d", got, want)
	}
	for i, p := range v.Pages {
		if p.Variants != variantCounts[i] || p.StoreOps != 1 || p.RequestUnits < 1 {
			t.Errorf("page %+v: want %d variants in 1 store op of at least 1 RU", p, variantCounts[i])
		}
		if i > 0 && (p.Bytes <= v.Pages[i-1].Bytes || p.RequestUnits < v.Pages[i-1].RequestUnits) {
			t.Errorf("%d variants: %d bytes, %.2f RU; %d variants: %d bytes, %.2f RU; want the document and its read to grow with the variants",
				p.Variants, p.Bytes, p.RequestUnits, v.Pages[i-1].Variants, v.Pages[i-1].Bytes, v.Pages[i-1].RequestUnits)
		}
	}
	// domain/variants.go: the bound keeps the page under 20 KB.
	if last := v.Pages[len(v.Pages)-1]; last.Variants != domain.MaxVariants || last.Bytes >= 20<<10 {
		t.Errorf("at the bound: %d variants, %d bytes; want %d variants under 20 KB", last.Variants, last.Bytes, domain.MaxVariants)
	}

	f := v.Filter
	if f.Products != size || f.WithValue != size/variantShare {
		t.Fatalf("category of %d products, %d with the value; want %d and %d", f.Products, f.WithValue, size, size/variantShare)
	}
	if f.Index.StoreOps != 1 || f.Index.DocsRead != float64(f.WithValue) || f.Index.Shown != f.WithValue {
		t.Errorf("index: %+v; want 1 query reading and showing the %d products with the value", f.Index, f.WithValue)
	}
	if f.Client.DocsRead != size || f.Client.Shown != f.WithValue {
		t.Errorf("client: %+v; want the whole category (%d) read and the %d with the value shown", f.Client, size, f.WithValue)
	}
	if f.Index.RequestUnits >= f.Client.RequestUnits {
		t.Errorf("index %.2f RU, client %.2f RU; want the index cheaper", f.Index.RequestUnits, f.Client.RequestUnits)
	}

	var b strings.Builder
	writeVariantsPart(&b, costReport{Command: "go run ./cmd/shop cost", Variants: v})
	for _, want := range []string{"Written by `go run ./cmd/shop cost`", "| no variants |", "| 50 variants (the bound) |", "`?size=M`", "ARRAY_CONTAINS"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the part lacks %q:\n%s", want, b.String())
		}
	}
}
