package costlab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/reference-shop/shop/domain"
	samplecatalog "github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// The attribute array (domain/variants.go) in figures: what embedding a
// product's variants costs the product page, and what the array copied
// onto the summaries saves a category page filtered by one attribute
// value.

// variantCounts are the product pages measured: no variants, a garment
// in four sizes, four sizes in three colours, and the bound.
var variantCounts = []int{0, 4, 12, domain.MaxVariants}

// variantCategory is the lab's category of the filter: realistic size,
// a minority of whose products are sold in sizes (every variantShare-th).
const (
	variantCategory      = "variants-lab"
	variantCategorySize  = 200
	variantShare         = 8
	variantFacet         = "size=M"
	variantFilterPageLen = 20
	variantReps          = 20
)

// variantsResult is the "cost variants" part.
type variantsResult struct {
	Pages  []variantPage `json:"productPages"`
	Filter variantFilter `json:"categoryFilter"`
}

// variantPage is the product page of a product with Variants variants.
type variantPage struct {
	Variants int `json:"variants"`
	// Bytes is the product document as the store returns it.
	Bytes        int     `json:"bytes"`
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
}

// variantFilter is the category page filtered by one attribute value,
// in both designs.
type variantFilter struct {
	Category  string `json:"category"`
	Products  int    `json:"products"`
	WithValue int    `json:"productsWithTheValue"`
	Facet     string `json:"facet"`
	PageSize  int    `json:"pageSize"`
	// Index is ONE single-partition query with ARRAY_CONTAINS on the
	// summaries' attribute array; Client reads the whole category and
	// filters it.
	Index  filterCost `json:"index"`
	Client filterCost `json:"client"`
}

// filterCost is one design of the filtered page, means per render.
type filterCost struct {
	Reads        string  `json:"reads"`
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
	// DocsRead are the documents the store returned; Shown those the
	// page shows.
	DocsRead float64 `json:"documentsReturned"`
	Shown    int     `json:"shown"`
}

// variantsOf are n variants of a garment: sizes × colours, each with its
// own SKU, price and availability copy (no picture of its own).
func variantsOf(n int) []domain.Variant {
	if n == 0 {
		return nil
	}
	sizes := []string{"XS", "S", "M", "L", "XL", "XXL", "3XL", "4XL", "5XL", "6XL"}
	colours := []string{"Navy", "Olive", "Red", "Black", "Yellow", "White", "Grey", "Sand", "Forest", "Sky"}
	// S to XL in each colour; past 4 × 10 colours, all ten sizes.
	if n <= 4*len(colours) {
		sizes = sizes[1:5]
	}
	perColour := len(sizes)
	out := make([]domain.Variant, 0, n)
	for i := range n {
		size, colour := sizes[i%perColour], colours[i/perColour]
		out = append(out, domain.Variant{
			SKU:        "JKT-" + size + "-" + strings.ToUpper(colour),
			Attributes: map[string]string{"size": size, "colour": colour},
			PriceCents: int64(8999 + 500*(i%perColour)),
		})
	}
	return out
}

// withVariants gives p n variants (variantsOf), each in stock, its
// availability copy taken from its first stock version as the inventory
// feed leaves it.
func withVariants(p *domain.Product, n int) {
	p.SetVariants(variantsOf(n))
	for _, sku := range p.SKUs() {
		if sku != "" {
			p.RepairStock(domain.NewStock(p.ID, sku, 50, p.LastUpdated))
		}
	}
}

// measureVariants writes its data into the lab's scratch store s (product
// ids "variants-…", the category variantCategory of categorySize
// products) and measures through ms, reps renders each (at most variantReps: the embedded store's
// figures do not vary).
func measureVariants(ctx context.Context, s, ms store.Store, reps, categorySize int) (variantsResult, error) {
	reps = max(1, min(reps, variantReps))
	var out variantsResult
	// The product page's document: a sample product with its five newest
	// reviews embedded, as a product page has them.
	catalog, err := samplecatalog.Products(samplecatalog.Options{})
	if err != nil {
		return out, err
	}
	i := slices.IndexFunc(catalog, func(p domain.Product) bool { return len(p.TopReviews) == domain.MaxTopReviews && len(p.Variants) == 0 })
	if i < 0 {
		return out, fmt.Errorf("the sample catalog has no product with %d reviews embedded", domain.MaxTopReviews)
	}
	base := catalog[i]
	products := repo.NewProducts(s)
	read := ms.Container(store.ProductsContainer)
	for _, n := range variantCounts {
		p := base
		p.ID, p.ETag, p.TS = fmt.Sprintf("variants-%02d", n), "", 0
		withVariants(&p, n)
		if _, err := products.Create(ctx, p); err != nil {
			return out, fmt.Errorf("product of %d variants: %w", n, err)
		}
		page := variantPage{Variants: n}
		for r := range reps {
			got, err := once(ctx, func(ctx context.Context, _ int) error {
				res, err := read.Read(ctx, p.ID, p.ID)
				page.Bytes = len(res.Item)
				return err
			}, r)
			if err != nil {
				return out, fmt.Errorf("product page of %d variants: %w", n, err)
			}
			page.StoreOps += float64(got.ops) / float64(reps)
			page.RequestUnits += got.ru / float64(reps)
		}
		page.RequestUnits = roundRU(page.RequestUnits)
		out.Pages = append(out.Pages, page)
	}

	f, err := writeVariantCategory(ctx, s, categorySize)
	if err != nil {
		return out, err
	}
	summaries := repo.NewProductSummaries(ms)
	index := func(ctx context.Context) ([]domain.ProductSummary, int, error) {
		page, err := summaries.Page(ctx, variantCategory, repo.SortByName, []string{variantFacet}, variantFilterPageLen, "")
		if err != nil {
			return nil, 0, err
		}
		shown, err := page.Decode()
		return shown, len(shown), err
	}
	client := func(ctx context.Context) ([]domain.ProductSummary, int, error) {
		var shown []domain.ProductSummary
		read, cont := 0, ""
		for {
			page, err := summaries.Page(ctx, variantCategory, repo.SortByName, nil, store.MaxQueryPageSize, cont)
			if err != nil {
				return nil, 0, err
			}
			all, err := page.Decode()
			if err != nil {
				return nil, 0, err
			}
			read += len(all)
			for _, sum := range all {
				if len(shown) < variantFilterPageLen && slices.Contains(sum.Attributes, variantFacet) {
					shown = append(shown, sum)
				}
			}
			if cont = page.Next; cont == "" {
				return shown, read, nil
			}
		}
	}
	var want []domain.ProductSummary
	for _, d := range []struct {
		into *filterCost
		run  func(context.Context) ([]domain.ProductSummary, int, error)
	}{{&f.Index, index}, {&f.Client, client}} {
		for r := range reps {
			var shown []domain.ProductSummary
			docs := 0
			got, err := once(ctx, func(ctx context.Context, _ int) error {
				var err error
				shown, docs, err = d.run(ctx)
				return err
			}, r)
			if err != nil {
				return out, fmt.Errorf("category filter, %s: %w", d.into.Reads, err)
			}
			d.into.StoreOps += float64(got.ops) / float64(reps)
			d.into.RequestUnits += got.ru / float64(reps)
			d.into.DocsRead += float64(docs) / float64(reps)
			d.into.Shown = len(shown)
			// Both designs show the same page, or the comparison is void.
			ids := make([]string, len(shown))
			for k, s := range shown {
				ids[k] = s.ID
			}
			if want == nil {
				want = shown
			} else if !slices.EqualFunc(want, shown, func(a, b domain.ProductSummary) bool { return a.ID == b.ID }) {
				return out, fmt.Errorf("category filter: the designs show different pages (%s: %v)", d.into.Reads, ids)
			}
		}
		d.into.RequestUnits = roundRU(d.into.RequestUnits)
	}
	out.Filter = f
	return out, nil
}

// writeVariantCategory writes the summaries of variantCategory's
// products: every variantShare-th sold in sizes S to XL (so with
// variantFacet), the others without variants, in transactional batches.
func writeVariantCategory(ctx context.Context, s store.Store, size int) (variantFilter, error) {
	f := variantFilter{Category: variantCategory, Products: size, Facet: variantFacet, PageSize: variantFilterPageLen,
		Index:  filterCost{Reads: "index: 1 single-partition query, ARRAY_CONTAINS(attributes, \"" + variantFacet + "\") served by the index on /attributes/[]/?"},
		Client: filterCost{Reads: "client: the whole category read (1 single-partition query per 1,000 summaries), filtered in the client"}}
	view := s.Container(store.ProductsByCategoryContainer)
	var ops []store.BatchOp
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		_, err := view.ExecuteBatch(ctx, variantCategory, ops)
		ops = ops[:0]
		return err
	}
	for i := range size {
		p := domain.Product{
			Meta:       domain.Meta{ID: fmt.Sprintf("variants-lab-%03d", i), Type: domain.TypeProduct, SchemaVersion: domain.SchemaVersion},
			Name:       fmt.Sprintf("Outdoor product %03d", i),
			CategoryID: variantCategory, CategoryName: "Variants lab",
			PriceCents: 4999, Currency: "USD", PriceVersion: 1, Version: 1,
			Availability: domain.Availability{Status: domain.InStock, SourceVersion: 1},
		}
		if i%variantShare == 0 {
			withVariants(&p, 4)
			f.WithValue++
		}
		p.KeepImage()
		b, err := json.Marshal(domain.SummaryOfProduct(p))
		if err != nil {
			return f, err
		}
		ops = append(ops, store.BatchOp{Kind: store.BatchUpsert, Item: b})
		if len(ops) == store.MaxBatchOps {
			if err := flush(); err != nil {
				return f, err
			}
		}
	}
	return f, flush()
}

// roundRU rounds a mean charge to the 2 decimals every charge has.
func roundRU(ru float64) float64 { return float64(int64(ru*100+0.5)) / 100 }

// variantsNote says what the part measures.
const variantsNote = "a product page is ONE point read of the product, its variants embedded (the attribute array, at most domain.MaxVariants): each variant a SKU, its size and colour, a price and its availability copy, no picture of its own; the product a sample product with its five newest reviews embedded. The filter: a category's summaries in productsByCategory, one in %d sold in sizes S to XL (so carrying \"%s\" in their attributes array), the first page of %d of those by name, read by the shop's one query (ProductSummaries.Page with the facet) against the whole category read and filtered in the client. Documents returned are those the store sent back; the RU count those it loaded: on the embedded store the one query walks the name index until its page is full, loading the summaries it passes (store/embedded/querywalk.go), about the page divided by the share with the value, where the client's read loads and returns the whole category"

// writeVariantsMarkdown prints the part's tables.
func writeVariantsMarkdown(out io.Writer, r costReport) {
	v := r.Variants
	fmt.Fprintf(out, "### Variants: the attribute array\n\n%s.\n\n", upperFirst(fmt.Sprintf(variantsNote, variantShare, variantFacet, variantFilterPageLen)))
	fmt.Fprintln(out, "| product page of a product with | document | store ops | RU |")
	fmt.Fprintln(out, "|---|--:|--:|--:|")
	for _, p := range v.Pages {
		fmt.Fprintf(out, "| %s | %s | %.4g | **%.2f** |\n", variantsText(p.Variants), bytesText(p.Bytes), p.StoreOps, p.RequestUnits)
	}
	f := v.Filter
	fmt.Fprintf(out, "\nThe category page filtered by `?%s`: %d products in the category, %d of them with the value, a page of %d:\n\n", f.Facet, f.Products, f.WithValue, f.PageSize)
	fmt.Fprintln(out, "| design | store ops | documents returned | shown | RU |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|")
	for _, c := range []filterCost{f.Index, f.Client} {
		fmt.Fprintf(out, "| %s | %.4g | %.4g | %d | **%.2f** |\n", c.Reads, c.StoreOps, c.DocsRead, c.Shown, c.RequestUnits)
	}
}

// writeVariantsText prints the part for a terminal.
func writeVariantsText(out io.Writer, r costReport) {
	v := r.Variants
	fmt.Fprintf(out, "\nvariants: the attribute array (%s)\n", fmt.Sprintf(variantsNote, variantShare, variantFacet, variantFilterPageLen))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "product page of a product with\tdocument\tstore ops\tRU\t")
	for _, p := range v.Pages {
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.2f\t\n", variantsText(p.Variants), bytesText(p.Bytes), p.StoreOps, p.RequestUnits)
	}
	tw.Flush()
	f := v.Filter
	fmt.Fprintf(out, "category page filtered by ?%s: %d products, %d with the value, a page of %d\n", f.Facet, f.Products, f.WithValue, f.PageSize)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "design\tstore ops\tdocuments returned\tshown\tRU\t")
	for _, c := range []filterCost{f.Index, f.Client} {
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%d\t%.2f\t\n", c.Reads, c.StoreOps, c.DocsRead, c.Shown, c.RequestUnits)
	}
	tw.Flush()
}

// variantsPart is the docs section of writeVariantsMarkdown alone, with
// the command that wrote it: the workshop's module 12 shows it.
const variantsPart = "cost variants"

func writeVariantsPart(out io.Writer, r costReport) {
	fmt.Fprintf(out, "Written by `%s` (the variants of its cost section in docs/performance.md):\n\n", r.Command)
	writeVariantsMarkdown(out, r)
}

func variantsText(n int) string {
	switch n {
	case 0:
		return "no variants"
	case domain.MaxVariants:
		return fmt.Sprintf("%d variants (the bound)", n)
	}
	return fmt.Sprintf("%d variants", n)
}

func bytesText(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
