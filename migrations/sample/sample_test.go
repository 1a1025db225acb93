package sample_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

func openStore(t testing.TB, opts embedded.Options) store.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := migrations.Apply(context.Background(), s, io.Discard); err != nil {
		t.Fatal(err)
	}
	return s
}

// allProducts lists every product document. A cross-partition query is
// fine in a test; the shop itself never lists products this way.
func allProducts(t *testing.T, s store.Store) []domain.Product {
	t.Helper()
	var out []domain.Product
	cont := ""
	for {
		page, err := s.Container(store.ProductsContainer).Query(t.Context(), store.Query{
			Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProduct}},
			Limit:        store.MaxQueryPageSize,
			Continuation: cont,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var p domain.Product
			if err := json.Unmarshal(it, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		if page.Continuation == "" {
			return out
		}
		cont = page.Continuation
	}
}

// ignoreSystem leaves out what the store sets on every write.
var ignoreSystem = cmpopts.IgnoreFields(domain.Meta{}, "ETag", "TS")

func TestSampleDefaultCatalog(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, embedded.Options{NoSync: true})
	repos := repo.New(s, 0)

	empty, err := sample.IsEmpty(ctx, s)
	if err != nil || !empty {
		t.Fatalf("IsEmpty before Sample = %v, %v; want true", empty, err)
	}
	stats, err := sample.Load(ctx, s, sample.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Categories < 8 || stats.Products < 200 || stats.Reviews < 1000 || stats.Carts != 0 {
		t.Errorf("stats = %v; want at least 8 categories, 200 products, 1000 reviews and no carts", stats)
	}
	if stats.RequestCharge <= 0 {
		t.Errorf("request charge = %v, want > 0", stats.RequestCharge)
	}
	empty, err = sample.IsEmpty(ctx, s)
	if err != nil || empty {
		t.Fatalf("IsEmpty after Sample = %v, %v; want false", empty, err)
	}

	cats, err := repos.Products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cats.Items); got != stats.Categories {
		t.Errorf("categories in the index = %d, want %d", got, stats.Categories)
	}
	total := 0
	for _, c := range cats.Items {
		ids, err := repos.ProductSummaries.IDs(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(ids); got != c.ProductCount {
			t.Errorf("category %s: index says %d products, its view partition holds %d", c.ID, c.ProductCount, got)
		}
		if c.ProductCount == 0 {
			t.Errorf("category %s has no products", c.ID)
		}
		total += c.ProductCount
	}
	if total != stats.Products {
		t.Errorf("products over all categories = %d, want %d", total, stats.Products)
	}

	products := allProducts(t, s)
	if got := len(products); got != stats.Products {
		t.Fatalf("products in the store = %d, want %d", got, stats.Products)
	}
	names := map[string]string{}
	catName := map[string]string{}
	for _, c := range cats.Items {
		catName[c.ID] = c.Name
	}
	reviewed, reviewCount, withVariants := 0, 0, 0
	rank := map[string]int{"": 0, domain.SoldOut: 1, domain.LowInStock: 2, domain.InStock: 3}
	for _, p := range products {
		if p.Version != 1 || p.PriceVersion != 1 || p.Currency != "USD" || p.PriceCents <= 0 || p.Deleted {
			t.Errorf("%s: version %d priceVersion %d currency %q price %d deleted %v; want 1, 1, USD, > 0, false",
				p.ID, p.Version, p.PriceVersion, p.Currency, p.PriceCents, p.Deleted)
		}
		if p.Name == "" || len(p.Description) < 60 || catName[p.CategoryID] != p.CategoryName {
			t.Errorf("%s: name %q, description %q, category %s %q", p.ID, p.Name, p.Description, p.CategoryID, p.CategoryName)
		}
		if other, ok := names[p.Name]; ok {
			t.Errorf("%s and %s are both named %q", p.ID, other, p.Name)
		}
		names[p.Name] = p.ID

		reviews, err := repos.Reviews.All(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantStats, wantTop := domain.ComputeReviewStats(reviews)
		if diff := cmp.Diff(wantStats, p.ReviewStats); diff != "" {
			t.Errorf("%s: reviewStats differ from its reviews partition (-computed +embedded):\n%s", p.ID, diff)
		}
		if diff := cmp.Diff(wantTop, p.TopReviews); diff != "" {
			t.Errorf("%s: topReviews differ from its reviews partition (-computed +embedded):\n%s", p.ID, diff)
		}
		if len(reviews) > 0 {
			reviewed++
		}
		reviewCount += len(reviews)

		// Every SKU has its stock document, and its availability copy
		// says its status; the product shows its lowest price and its
		// best status (what the convergence audit checks).
		best := ""
		for _, sku := range p.SKUs() {
			st, err := repos.Inventory.Stock(ctx, p.ID, sku)
			if err != nil {
				t.Fatalf("stock of %s: %v", domain.LineLabel(p.ID, sku), err)
			}
			v, _ := p.VariantOf(sku)
			if want := domain.StatusOf(st.Available); v.Availability.Status != want || v.Availability.SourceVersion != st.Version {
				t.Errorf("%s: availability %+v, its stock (%d units, version %d) says %q", domain.LineLabel(p.ID, sku), v.Availability, st.Available, st.Version, want)
			}
			if rank[v.Availability.Status] > rank[best] {
				best = v.Availability.Status
			}
			if v.PriceCents < p.PriceCents {
				t.Errorf("%s: price %d below the product's %d, want the product's to be the lowest", domain.LineLabel(p.ID, sku), v.PriceCents, p.PriceCents)
			}
		}
		if p.Availability.Status != best {
			t.Errorf("%s: availability %q, its best variant's %q", p.ID, p.Availability.Status, best)
		}
		if len(p.Variants) > 0 {
			withVariants++
			if err := domain.ValidateVariants(p.Variants); err != nil {
				t.Errorf("%s: variants an admin could not set: %v", p.ID, err)
			}
		}

		sum, err := repos.ProductSummaries.Get(ctx, p.CategoryID, p.ID)
		if err != nil {
			t.Fatalf("summary of %s: %v", p.ID, err)
		}
		if diff := cmp.Diff(domain.SummaryOfProduct(p), sum, ignoreSystem); diff != "" {
			t.Errorf("%s: summary (-want +got):\n%s", p.ID, diff)
		}
	}
	if withVariants*20 < len(products) || withVariants*4 > len(products) {
		t.Errorf("%d of %d products have variants, want a minority (5%% to 25%%)", withVariants, len(products))
	}
	if reviewCount != stats.Reviews {
		t.Errorf("reviews in the store = %d, stats say %d", reviewCount, stats.Reviews)
	}
	if reviewed*2 <= len(products) {
		t.Errorf("%d of %d products have reviews, want most", reviewed, len(products))
	}
}

func TestSampleCarts(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, embedded.Options{NoSync: true})
	repos := repo.New(s, 0)
	var calls, lastDone, lastTotal int
	opts := sample.Options{Products: 30, Reviews: 40, Users: 25, Categories: 10,
		Progress: func(done, total int) {
			if done < lastDone {
				t.Errorf("progress went back from %d to %d", lastDone, done)
			}
			calls, lastDone, lastTotal = calls+1, done, total
		}}
	stats, err := sample.Load(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := sample.Stats{Categories: 10, Products: 30, Reviews: 40, Carts: 25, RequestCharge: stats.RequestCharge}
	if diff := cmp.Diff(want, stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if calls == 0 || lastDone != 30+40+25 || lastTotal != lastDone {
		t.Errorf("progress: %d calls, last %d of %d; want it to end at %d of %d", calls, lastDone, lastTotal, 95, 95)
	}

	products := map[string]domain.Product{}
	for _, p := range allProducts(t, s) {
		products[p.ID] = p
	}
	page, err := s.Container(store.CartsContainer).Query(ctx, store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeCart}},
		Limit:   100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(page.Items); got != 25 {
		t.Fatalf("carts = %d, want 25", got)
	}
	variantLines := 0
	for _, it := range page.Items {
		var c domain.Cart
		if err := json.Unmarshal(it, &c); err != nil {
			t.Fatal(err)
		}
		if n := len(c.Items); n < 1 || n > 10 {
			t.Errorf("cart of %s has %d lines, want 1..10", c.UserID, n)
		}
		for _, l := range c.Items {
			// The line copies the variant it names: a product with
			// variants is never in a cart without a SKU.
			prod := products[l.ProductID]
			v, ok := prod.VariantOf(l.SKU)
			if !ok || l.UnitPriceCents != v.PriceCents || !maps.Equal(l.Attributes, v.Attributes) || l.StockStatus != v.Availability.Status || !l.Available || l.PriceVersion != 1 {
				t.Errorf("cart of %s: line %+v does not copy variant %q of product %s (%+v, sold: %v)", c.UserID, l, l.SKU, l.ProductID, v, ok)
			}
			if l.SKU != "" {
				variantLines++
			}
		}
		got, err := repos.Carts.Get(ctx, c.UserID)
		if err != nil || got.ETag == "" {
			t.Errorf("cart of %s is not a point read by user: %v", c.UserID, err)
		}
	}
	if variantLines == 0 {
		t.Errorf("no cart holds a line of a variant; want some (the sample sells some products in variants)")
	}
}

func TestSampleTwiceConverges(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, embedded.Options{NoSync: true})
	opts := sample.Options{Products: 40, Reviews: 120, Categories: 8}
	first, err := sample.Load(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	// As after a load that stopped half way: running it again is safe.
	second, err := sample.Load(ctx, s, opts)
	if err != nil {
		t.Fatalf("second Sample: %v", err)
	}
	second.RequestCharge = first.RequestCharge
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("stats of a second run (-first +second):\n%s", diff)
	}
	cats, err := repo.NewProducts(s).Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cats.Items {
		ids, err := repo.NewProductSummaries(s).IDs(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != c.ProductCount {
			t.Errorf("category %s: index %d, view %d", c.ID, c.ProductCount, len(ids))
		}
	}
	if got := len(allProducts(t, s)); got != 40 {
		t.Errorf("products = %d, want 40", got)
	}
}

func TestSampleOptionsRefused(t *testing.T) {
	tests := []struct {
		name string
		opts sample.Options
	}{
		{"negative products", sample.Options{Products: -1}},
		{"negative reviews", sample.Options{Reviews: -5}},
		{"negative users", sample.Options{Users: -1}},
		{"more categories than the sample has", sample.Options{Categories: 1000}},
	}
	s := openStore(t, embedded.Options{NoSync: true})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sample.Load(t.Context(), s, tt.opts)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code = %q, want %q (err %v)", got, want, err)
			}
		})
	}
	if empty, err := sample.IsEmpty(t.Context(), s); err != nil || !empty {
		t.Errorf("IsEmpty after refused options = %v, %v; want true", empty, err)
	}
}

// BenchmarkSample loads the first-start catalog and the `shop seed
// --products 10000 --reviews 10000 --users 10000` data set into a fresh
// embedded store per iteration, with and without fsync on commit:
//
//	go test -run '^$' -bench Sample -benchtime 1x ./migrations/sample
func BenchmarkSample(b *testing.B) {
	seed := sample.Options{Products: 10000, Reviews: 10000, Users: 10000, Categories: 12}
	for _, bc := range []struct {
		name   string
		store  embedded.Options
		sample sample.Options
	}{
		{"first-start/fsync", embedded.Options{}, sample.Options{}},
		{"seed-10k/fsync", embedded.Options{}, seed},
		{"seed-10k/nosync", embedded.Options{NoSync: true}, seed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := openStore(b, bc.store)
				b.StartTimer()
				stats, err := sample.Load(context.Background(), s, bc.sample)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(stats.RequestCharge, "RU/op")
			}
		})
	}
}

// TestProductsAreWhatLoadWrites: the catalog Products returns is the one
// Load writes, review stats included, the dates apart.
func TestProductsAreWhatLoadWrites(t *testing.T) {
	s := openStore(t, embedded.Options{NoSync: true})
	opts := sample.Options{Products: 40, Reviews: 200}
	if _, err := sample.Load(t.Context(), s, opts); err != nil {
		t.Fatal(err)
	}
	want, err := sample.Products(opts)
	if err != nil {
		t.Fatal(err)
	}
	ignore := cmpopts.IgnoreFields(domain.Product{}, "Meta.ETag", "Meta.TS", "LastUpdated", "TopReviews")
	byID := cmpopts.SortSlices(func(a, b domain.Product) bool { return a.ID < b.ID })
	if diff := cmp.Diff(want, allProducts(t, s), ignore, byID, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Products differs from what Load wrote (-Products +stored):\n%s", diff)
	}
}
