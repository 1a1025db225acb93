// Package sample generates the shop's sample catalog (categories,
// products with their reviews, some sold in variants (sizes, colours,
// weights), a stock document per SKU, the productsByCategory view, the
// search index, open carts)
// and loads it into a store whose containers migrations.Apply created:
// the first-start data of `shop serve`, the data sets of `shop seed` and
// of the load benchmark.
package sample

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// The catalog of a first start: enough to browse every screen.
const (
	DefaultCategories = 8
	DefaultProducts   = 240
	DefaultReviews    = 1500
)

// sampleWorkers is how many writes Load keeps in flight. On Cosmos each
// write is a network round trip, so concurrency is what makes a bulk load
// fast (sdk-ingestion-rate-control); the embedded store serializes its commits but
// encodes and validates in parallel.
const sampleWorkers = 16

// Options says how much sample data to create. The zero value is the
// catalog of a first start: DefaultCategories categories,
// DefaultProducts products and DefaultReviews reviews, no carts.
type Options struct {
	// Products to create (0 = DefaultProducts).
	Products int
	// Reviews to spread over the products; 0 means none, except in the
	// zero Options, which means DefaultReviews.
	Reviews int
	// Users with an open cart (1 to 10 lines each) to create.
	Users int
	// Categories to create (0 = DefaultCategories), at most
	// len(sampleCategories).
	Categories int
	// Progress, if set, is called as writes complete with how many of
	// total products, reviews and carts are written. Calls never overlap.
	Progress func(done, total int)
}

// Stats says what Load wrote and what it cost.
type Stats struct {
	Categories, Products, Reviews, Carts int
	// RequestCharge is the Request Units of every write (an estimate on
	// the embedded store).
	RequestCharge float64
}

func (s Stats) String() string {
	return fmt.Sprintf("%d categories, %d products, %d reviews, %d carts (%.2f RU)",
		s.Categories, s.Products, s.Reviews, s.Carts, s.RequestCharge)
}

// IsEmpty reports whether the store holds no catalog yet: the categories
// index is missing. Load writes that index last, so a load that stopped
// half way still counts as empty and is simply run again.
func IsEmpty(ctx context.Context, s store.Store) (bool, error) {
	// Point read, not a query: 1 RU (query-point-reads).
	_, err := s.Container(store.ProductsContainer).Read(ctx, domain.CategoriesID, domain.CategoriesID)
	switch {
	case domain.IsCode(err, domain.ENOTFOUND):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}

// Load loads a generated catalog into s: categories, products with their
// reviews, the productsByCategory view, the productsByTerm search index,
// the categories index and open carts. The same options always produce the same catalog (a fixed seed);
// review dates are spread over the year before now.
//
// Every copy is consistent from the start, so the shop is browsable before
// any feed worker runs: a product's topReviews and reviewStats come from
// domain.ComputeReviewStats over exactly the reviews written to its
// partition, and its summary from domain.SummaryOfProduct. Writes are
// upserts, so running Load again over a half-loaded store converges.
func Load(ctx context.Context, s store.Store, opts Options) (Stats, error) {
	opts, err := opts.resolve()
	if err != nil {
		return Stats{}, err
	}
	p := generateSample(opts, time.Now().UTC().Truncate(time.Second))
	w := &sampleWriter{s: s, progress: opts.Progress, total: len(p.products) + p.reviewCount + len(p.carts)}

	if err := forEach(ctx, len(p.products), w.writeProduct(p)); err != nil {
		return w.stats(p), err
	}
	batches := summaryBatches(p)
	if err := forEach(ctx, len(batches), w.writeSummaries(batches)); err != nil {
		return w.stats(p), err
	}
	if err := forEach(ctx, len(p.products), w.writeSearch(p)); err != nil {
		return w.stats(p), err
	}
	if err := forEach(ctx, len(p.carts), w.writeCart(p)); err != nil {
		return w.stats(p), err
	}
	// Last: the categories index is what IsEmpty looks for. Its featured
	// products are ranked by the same query the products feed runs.
	sums := repo.NewProductSummaries(s)
	if _, err := repo.NewProducts(s).UpdateCategories(ctx, "", func(c *domain.Categories) error {
		c.Items = p.categories
		for _, cat := range p.categories {
			best, err := sums.Best(ctx, cat.ID, domain.FeaturedPerCategory)
			if err != nil {
				return err
			}
			c.SetFeatured(cat.ID, best)
		}
		c.LastUpdated = time.Now().UTC()
		return nil
	}); err != nil {
		return w.stats(p), err
	}
	return w.stats(p), nil
}

// Products are the products Load writes for opts, their review stats
// and top reviews included, without writing anything: the catalog a
// measurement can copy and change (the cost lab reviews it).
func Products(opts Options) ([]domain.Product, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	return generateSample(opts, time.Now().UTC().Truncate(time.Second)).products, nil
}

func (o Options) resolve() (Options, error) {
	if o.Products == 0 && o.Reviews == 0 && o.Users == 0 && o.Categories == 0 {
		o.Reviews = DefaultReviews
	}
	if o.Products == 0 {
		o.Products = DefaultProducts
	}
	if o.Categories == 0 {
		o.Categories = DefaultCategories
	}
	switch {
	case o.Products < 0 || o.Reviews < 0 || o.Users < 0 || o.Categories < 0:
		return o, domain.Errorf(domain.EINVALID, "sample sizes must not be negative")
	case o.Categories > len(sampleCategories):
		return o, domain.Errorf(domain.EINVALID, "at most %d sample categories, got %d", len(sampleCategories), o.Categories)
	}
	return o, nil
}

// sampleWriter writes a generated catalog and counts progress and cost.
type sampleWriter struct {
	s        store.Store
	progress func(done, total int)

	mu    sync.Mutex
	done  int
	total int
	ru    float64
}

// add records n written units (products, reviews, carts) of ru RU.
func (w *sampleWriter) add(n int, ru float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done += n
	w.ru += ru
	if w.progress != nil && n > 0 {
		w.progress(w.done, w.total)
	}
}

func (w *sampleWriter) stats(p *samplePlan) Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{
		Categories:    len(p.categories),
		Products:      len(p.products),
		Reviews:       p.reviewCount,
		Carts:         len(p.carts),
		RequestCharge: w.ru,
	}
}

// writeProduct writes product i's stocks (one per SKU), the product, then its reviews. A product is its own
// partition (pk /id), so it is a single write; its reviews share one
// partition (pk productId), so they go in transactional batches of at
// most 100 operations (one round trip per batch, not per review).
func (w *sampleWriter) writeProduct(p *samplePlan) func(context.Context, int) error {
	products, reviews := w.s.Container(store.ProductsContainer), w.s.Container(store.ReviewsContainer)
	inventory := w.s.Container(store.InventoryContainer)
	return func(ctx context.Context, i int) error {
		prod := p.products[i]
		// The stock first, every SKU's: no product is ever visible without
		// its counts.
		for _, st := range p.stocks[i] {
			stock, err := json.Marshal(st)
			if err != nil {
				return err
			}
			sr, err := inventory.Upsert(ctx, prod.ID, stock, nil)
			if err != nil {
				return fmt.Errorf("stock of %s: %w", domain.LineLabel(prod.ID, st.SKU), err)
			}
			w.add(0, sr.RequestCharge)
		}
		doc, err := json.Marshal(prod)
		if err != nil {
			return err
		}
		r, err := products.Upsert(ctx, prod.ID, doc, nil)
		if err != nil {
			return fmt.Errorf("product %s: %w", prod.ID, err)
		}
		w.add(1, r.RequestCharge)
		rs := p.reviews[i]
		for start := 0; start < len(rs); start += store.MaxBatchOps {
			chunk := rs[start:min(start+store.MaxBatchOps, len(rs))]
			ops := make([]store.BatchOp, len(chunk))
			for j, rv := range chunk {
				b, err := json.Marshal(rv)
				if err != nil {
					return err
				}
				ops[j] = store.BatchOp{Kind: store.BatchUpsert, Item: b}
			}
			res, err := reviews.ExecuteBatch(ctx, prod.ID, ops)
			if err != nil {
				return fmt.Errorf("reviews of %s: %w", prod.ID, err)
			}
			w.add(len(chunk), res.RequestCharge)
		}
		return nil
	}
}

// summaryBatches groups the products' summaries by category, at most 100
// to a batch: the view is partitioned by categoryId, so each group is a
// transactional batch in one logical partition.
func summaryBatches(p *samplePlan) [][]domain.ProductSummary {
	byCategory := map[string][]domain.ProductSummary{}
	for _, prod := range p.products {
		byCategory[prod.CategoryID] = append(byCategory[prod.CategoryID], domain.SummaryOfProduct(prod))
	}
	var batches [][]domain.ProductSummary
	for _, c := range p.categories {
		sums := byCategory[c.ID]
		for start := 0; start < len(sums); start += store.MaxBatchOps {
			batches = append(batches, sums[start:min(start+store.MaxBatchOps, len(sums))])
		}
	}
	return batches
}

func (w *sampleWriter) writeSummaries(batches [][]domain.ProductSummary) func(context.Context, int) error {
	view := w.s.Container(store.ProductsByCategoryContainer)
	return func(ctx context.Context, i int) error {
		batch := batches[i]
		ops := make([]store.BatchOp, len(batch))
		for j, s := range batch {
			b, err := json.Marshal(s)
			if err != nil {
				return err
			}
			ops[j] = store.BatchOp{Kind: store.BatchUpsert, Item: b}
		}
		res, err := view.ExecuteBatch(ctx, batch[0].CategoryID, ops)
		if err != nil {
			return fmt.Errorf("summaries of %s: %w", batch[0].CategoryID, err)
		}
		w.add(0, res.RequestCharge)
		return nil
	}
}

// writeSearch writes product i's entries in productsByTerm and its ledger:
// what the products feed would write.
func (w *sampleWriter) writeSearch(p *samplePlan) func(context.Context, int) error {
	index := w.s.Container(store.ProductsByTermContainer)
	put := func(ctx context.Context, pk string, doc any) error {
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		r, err := index.Upsert(ctx, pk, b, nil)
		if err != nil {
			return fmt.Errorf("search index %s: %w", pk, err)
		}
		w.add(0, r.RequestCharge)
		return nil
	}
	return func(ctx context.Context, i int) error {
		prod := p.products[i]
		terms := domain.SearchTerms(prod)
		for _, t := range terms {
			if err := put(ctx, t, domain.EntryOfProduct(prod, t, terms)); err != nil {
				return err
			}
		}
		return put(ctx, domain.SearchLedgerKey(prod.ID), domain.SearchLedger{
			Meta: domain.Meta{ID: prod.ID, Type: domain.TypeSearchLedger, SchemaVersion: domain.SchemaVersion},
			Key:  domain.SearchLedgerKey(prod.ID), Terms: terms, Version: prod.Version,
			Shown: domain.SearchFingerprint(prod),
		})
	}
}

// writeCart writes cart i: one per user, its own partition (pk userId).
func (w *sampleWriter) writeCart(p *samplePlan) func(context.Context, int) error {
	carts := w.s.Container(store.CartsContainer)
	return func(ctx context.Context, i int) error {
		c := p.carts[i]
		doc, err := json.Marshal(c)
		if err != nil {
			return err
		}
		r, err := carts.Upsert(ctx, c.UserID, doc, nil)
		if err != nil {
			return fmt.Errorf("cart of %s: %w", c.UserID, err)
		}
		w.add(1, r.RequestCharge)
		return nil
	}
}

// forEach calls fn for 0..n-1 on sampleWorkers goroutines and returns the
// first error; an error stops the work not yet started.
func forEach(ctx context.Context, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range min(sampleWorkers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return firstErr
}
