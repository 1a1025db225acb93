package costlab

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// searchPageSize is the page a search shows.
const searchPageSize = 20

// indexLab writes the search index of the lab's products, as the
// products feed would (not measured).
func indexLab(ctx context.Context, s store.Store, d *labData) error {
	h := feedworkers.NewHandlers(s, writes.New(repo.New(s, 0), nil, nil), feedworkers.HandlersConfig{})
	for _, p := range d.products {
		if err := h.ProductToSearch(ctx, p); err != nil {
			return fmt.Errorf("index %s: %w", p.ID, err)
		}
	}
	return nil
}

// searchScreens are searches of the lab's catalog, each read from the
// index (productsByTerm) and by the scan a relational habit would write
// (WHERE CONTAINS(name, @word) over products: CONTAINS has no index seek,
// so it pays for every product of every physical partition).
func searchScreens(ms store.Store, d *labData) []screen {
	index := repo.NewSearchIndex(ms)
	products := ms.Container(store.ProductsContainer)
	// Lab products are named "Product 00042" in "Category 03".
	rare := func(i int) []string { return domain.Terms(d.products[i%len(d.products)].Name)[1:] }
	common := func(int) []string { return []string{"product"} }
	twoWords := func(i int) []string { return domain.Terms(d.products[i%len(d.products)].CategoryName) }
	row := func(name, reads string, terms func(int) []string) screen {
		return screen{
			name: name,
			denormalized: design{"index", reads, func(ctx context.Context, i int) error {
				page, err := index.Search(ctx, terms(i), searchPageSize, "")
				if err != nil {
					return err
				}
				_, err = page.Decode()
				return err
			}},
			normalized: design{"scan", "cross-partition scan of products (CONTAINS has no index seek), all pages, matched and sorted in the client", func(ctx context.Context, i int) error {
				_, err := searchAcrossPartitions(ctx, products, terms(i))
				return err
			}},
		}
	}
	return []screen{
		row("search: a rare word (1 match)", "1 single-partition query on productsByTerm", rare),
		row("search: a word every product holds (page of 20)", "1 single-partition query, the first page of the largest partition", common),
		row("search: two words (page of 20)", "1 single-partition query on the longer word's partition, the other word filtered (ARRAY_CONTAINS)", twoWords),
	}
}

// beforeOf is searchBefore's figure for kind, a copy.
func beforeOf(kind string) *indexCost {
	b, ok := searchBefore[kind]
	if !ok {
		return nil
	}
	return &b
}

// searchAcrossPartitions is search without an index: every product read
// across every physical partition, matched and ranked in the client.
func searchAcrossPartitions(ctx context.Context, products store.Container, terms []string) ([]domain.Product, error) {
	q := store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProduct}},
		Limit:   store.MaxQueryPageSize,
		Select:  []string{"id", "name", "categoryId", "categoryName", "tags", "priceCents", "currency", "imageUrl", "reviewStats"},
	}
	var hits []domain.Product
	for {
		page, err := products.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		// One request per physical partition (see categoryPageAcrossPartitions).
		for range page.PartitionsTouched - 1 {
			store.MeterFrom(ctx).Add(0, 0)
		}
		for _, raw := range page.Items {
			p, err := repo.Decode[domain.Product](raw)
			if err != nil {
				return nil, err
			}
			held := domain.SearchTerms(p)
			if !slices.ContainsFunc(terms, func(t string) bool { return !slices.Contains(held, t) }) {
				hits = append(hits, p)
			}
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	slices.SortFunc(hits, func(a, b domain.Product) int {
		return cmp.Or(cmp.Compare(domain.SearchRank(a.ReviewStats.Average, a.Name), domain.SearchRank(b.ReviewStats.Average, b.Name)), cmp.Compare(a.ID, b.ID))
	})
	return hits[:min(len(hits), searchPageSize)], nil
}

// searchWrite is what one kind of product write costs the index: the
// write amplification of an inverted index.
type searchWrite struct {
	// Kind names the row for its before figures (searchBefore).
	Kind   string `json:"kind"`
	Change string `json:"change"`
	// ProductRU is the product write itself, for scale.
	ProductRU float64 `json:"productRequestUnits"`
	// TermDocs are the entries and tombstones written (the ledger apart).
	TermDocs     float64 `json:"termDocuments"`
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
	// Before is the index step's cost on commit d2aeb27 (searchBefore),
	// when this run measured the same writes.
	Before *indexCost `json:"before,omitempty"`
}

// indexCost is what the index step cost, per product write.
type indexCost struct {
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
}

// searchBefore is the index step as this lab measured it on commit
// d2aeb27 (go run ./cmd/shop cost --json), the last whose entries copied
// the category page's whole summary, so that every product version,
// every review included, rewrote the product's entry under each of its
// terms. That lab had no review rows: theirs are measureReviewWrites run
// on that commit (with sample.Products, and a copy of domain.ShownRating
// that only counts the stars), the same products and the same reviews.
// The code is gone, so the figures are kept here, not measured again.
// The review rows' figures hold for searchReviews reviews.
var searchBefore = map[string]indexCost{
	"create":      {StoreOps: 11, RequestUnits: 44.05},
	"rename":      {StoreOps: 16, RequestUnits: 71.40},
	"review-kept": {StoreOps: 15.34, RequestUnits: 51.67},
	"review":      {StoreOps: 15.31, RequestUnits: 51.61},
}

// measureSearchWrites creates n products named with three words and
// renames each to three words of which one is kept, and measures what the
// products feed's index step (feedworkers.Handlers.ProductToSearch) costs
// for each: term documents, store operations and Request Units.
func measureSearchWrites(ctx context.Context, ms store.Store, n int) ([]searchWrite, error) {
	repos := repo.New(ms, 0)
	h := feedworkers.NewHandlers(ms, writes.New(repo.New(ms, 0), nil, nil), feedworkers.HandlersConfig{})
	out := []searchWrite{{Kind: "create", Change: "product create (name of 3 words, 1 category word)"}, {Kind: "rename", Change: "product rename (2 of its words replaced)"}}
	index := func(into *searchWrite, p domain.Product, docs int) error {
		s, err := once(ctx, func(ctx context.Context, _ int) error { return h.ProductToSearch(ctx, p) }, 0)
		into.StoreOps += float64(s.ops)
		into.RequestUnits += s.ru
		into.TermDocs += float64(docs)
		return err
	}
	for i := range n {
		var p domain.Product
		created, err := once(ctx, func(ctx context.Context, _ int) error {
			var err error
			p, err = repos.Products.Create(ctx, domain.Product{
				Meta: domain.Meta{ID: fmt.Sprintf("search-%04d", i)}, Name: fmt.Sprintf("Walnut desk lamp %04d", i),
				CategoryID: "cat-lamps", CategoryName: "Lamps", PriceCents: 4900, Currency: "EUR", PriceVersion: 1, Version: 1,
			})
			return err
		}, 0)
		if err != nil {
			return nil, err
		}
		out[0].ProductRU += created.ru
		if err := index(&out[0], p, len(domain.SearchTerms(p))); err != nil {
			return nil, err
		}
		before := domain.SearchTerms(p)
		renamed, err := once(ctx, func(ctx context.Context, _ int) error {
			name := fmt.Sprintf("Oak reading lamp %04d", i)
			var err error
			p, err = repos.Products.Update(ctx, p.ID, "", func(p *domain.Product) error {
				p.Apply(domain.ProductChange{Name: &name}, p.LastUpdated)
				return nil
			})
			return err
		}, 0)
		if err != nil {
			return nil, err
		}
		out[1].ProductRU += renamed.ru
		after := domain.SearchTerms(p)
		removed := slices.DeleteFunc(slices.Clone(before), func(t string) bool { return slices.Contains(after, t) })
		if err := index(&out[1], p, len(after)+len(removed)); err != nil {
			return nil, err
		}
	}
	mean := func(sum float64) float64 { return report.Round2(sum / float64(n)) }
	for i := range out {
		w := &out[i]
		w.ProductRU, w.TermDocs, w.StoreOps, w.RequestUnits = mean(w.ProductRU), mean(w.TermDocs), mean(w.StoreOps), mean(w.RequestUnits)
		w.Before = beforeOf(w.Kind)
	}
	return out, nil
}
