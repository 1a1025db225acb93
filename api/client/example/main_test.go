package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// startShop serves the API as a first start of `go run ./cmd/shop` does:
// dev mode, the sample catalog.
func startShop(t *testing.T) string {
	t.Helper()
	url, _ := startShopOn(t)
	return url
}

// startShopOn is startShop, and the store it serves.
func startShopOn(t *testing.T) (string, store.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(ctx, st, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := sample.Load(ctx, st, sample.Options{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), paymentstest.Embedded(t), nil), Store: st, Secret: []byte("example-test-secret-of-32-bytes!"), DevMode: true}))
	t.Cleanup(srv.Close)
	return srv.URL, st
}

// callLine is one line of the example's output: method, path, cost, answer.
var callLine = regexp.MustCompile(`^(GET|PUT|POST) +/v1/\S+ +\d+ ops?, \d+\.\d\d RU +\S`)

// TestExampleRuns: the example browses, fills a cart and checks out twice
// with one key against a shop, printing the cost of every call; it fails
// itself if the second checkout is not the first's order.
func TestExampleRuns(t *testing.T) {
	url := startShop(t)
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-url", url}, &out); err != nil {
		t.Fatalf("example: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 7 {
		t.Fatalf("example printed %d lines, want a line per call:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if !callLine.MatchString(l) {
			t.Errorf("line %q is not a call with its cost", l)
		}
	}
	if !strings.Contains(lines[len(lines)-1], "the same order") {
		t.Errorf("last line %q, want the replayed checkout", lines[len(lines)-1])
	}

	// Twice: the second run's user has a cart again and a new key.
	var second bytes.Buffer
	if err := run(t.Context(), []string{"-url", url}, &second); err != nil {
		t.Fatalf("example, second run: %v\n%s", err, second.String())
	}

	t.Run("READMEShowsIt", func(t *testing.T) {
		readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		const cmd = "$ go run ./api/client/example\n"
		_, block, ok := strings.Cut(string(readme), cmd)
		block, _, ok2 := strings.Cut(block, "```")
		if !ok || !ok2 {
			t.Fatalf("README.md has no console block starting %q", cmd)
		}
		if got, want := shape(block), shape(out.String()); got != want {
			t.Errorf("README.md's example output is not what the example prints on a shop's first start (figures aside): rerun it against a fresh go run ./cmd/shop and paste it\nREADME:\n%s\nexample:\n%s", got, want)
		}
	})
}

var (
	orderID = regexp.MustCompile(`o-\d{8}T\d{6}-[0-9a-f]+`)
	figure  = regexp.MustCompile(`\d+(\.\d+)?`)
	spaces  = regexp.MustCompile(`[ \t]+`)
)

// shape is the output without what changes from run to run: order ids,
// figures (costs, prices, counts) and the padding around them.
func shape(s string) string {
	s = orderID.ReplaceAllString(s, "ORDER")
	s = figure.ReplaceAllString(s, "N")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// TestExampleBuysAVariant: in a category with a product sold in variants,
// the example buys it in a variant in stock, named by its SKU, and the
// order holds that variant.
func TestExampleBuysAVariant(t *testing.T) {
	url, st := startShopOn(t)
	ctx := t.Context()
	repos := repo.New(st, 0)
	cats, err := repos.Products.Categories(ctx)
	if err != nil || len(cats.Items) == 0 {
		t.Fatalf("categories: %v, %v", cats, err)
	}
	// What the admin's POST /v1/products and the products feed make: the
	// product, its stock per SKU, its summary on the category page.
	p, err := writes.New(repos, nil, nil).AddProduct(ctx, domain.Product{
		Meta: domain.Meta{ID: "example-tee"}, Name: "Example Tee", CategoryID: cats.Items[0].ID, Currency: "USD",
		PriceVersion: 1, Version: 1, Variants: []domain.Variant{
			{SKU: "tee-s", Attributes: map[string]string{"size": "S", "colour": "navy"}, PriceCents: 1500},
			{SKU: "tee-m", Attributes: map[string]string{"size": "M", "colour": "navy"}, PriceCents: 1700},
		}}, 0, map[string]int64{"tee-m": 50})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repos.ProductSummaries.Put(ctx, domain.SummaryOfProduct(p)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"-url", url, "-user", "variant-buyer"}, &out); err != nil {
		t.Fatalf("example: %v\n%s", err, out.String())
	}
	// The category may hold sample products in variants before the tee:
	// whichever the example chose, its order names a variant, and the
	// units of that variant were taken (its reservation holds them).
	id := orderID.FindString(out.String())
	if id == "" {
		t.Fatalf("no order in the example's output:\n%s", out.String())
	}
	o, err := repos.Orders.Get(ctx, "variant-buyer", id)
	if err != nil {
		t.Fatal(err)
	}
	var line *domain.OrderLine
	for i := range o.Items {
		if o.Items[i].SKU != "" {
			line = &o.Items[i]
		}
	}
	if line == nil || len(line.Attributes) == 0 {
		t.Fatalf("order %s names no variant: %+v\n%s", id, o.Items, out.String())
	}
	if !strings.Contains(out.String(), "× "+line.Name+" (") {
		t.Errorf("the output does not show the variant bought (%s):\n%s", line.Name, out.String())
	}
	c, err := repos.Carts.Get(ctx, "variant-buyer")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 0 {
		t.Errorf("cart after the checkout = %+v, want empty", c.Items)
	}
	res, err := repo.ReadDoc[domain.Reservation](ctx, st.Container(store.InventoryContainer), line.ProductID, domain.ReservationID(o.ID, line.SKU))
	if err != nil || res.Quantity != int64(line.Quantity) || res.SKU != line.SKU {
		t.Errorf("reservation of %s/%s for %s: %+v, %v; want %d units taken from the variant's stock", line.ProductID, line.SKU, o.ID, res, err, line.Quantity)
	}
}
