package feedworkers

import (
	"context"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
)

// Products is the handler of the products feed. For a batch it:
//
//  1. renames: each version of the categories index in the batch pushes
//     the category names into the products (RenameCategories);
//  2. reads the current version of each changed product
//     (currentProducts), the truth every copy is made from;
//  3. runs the product steps (productBatch.steps) on each of them, in
//     their order: the category view, the search index, the carts, the
//     reviews;
//  4. writes the category counts and featured products the batch changed
//     in ONE write of the categories index (updateIndex);
//  5. names the products that a rename missed (nameProducts), from the
//     index as step 4 read it.
//
// What must come in this order, and why: the copies are made from the
// current versions (2 before 3), so a duplicate or a late, older version
// never moves a copy backwards; the index is read after every summary of
// the batch is written (3 before 4): its counts are the view partitions'
// and nameProducts' check needs a read that follows the summaries. The
// four steps of one product write documents of their own and none reads
// what another writes, so their order is free; they keep the order the
// handler always had. Any step's error fails the batch, which the
// processor delivers again: every step is idempotent and writes nothing
// the second time.
func (h *Handlers) Products(ctx context.Context, b changefeed.Batch) error {
	changed, err := h.renameAndCollect(ctx, b.Items)
	if err != nil {
		return err
	}
	current, err := h.currentProducts(ctx, changed)
	if err != nil {
		return err
	}
	batch := &productBatch{h: h, replay: b.MayBeReplay, rc: recount{every: b.MayBeReplay}}
	for _, p := range current {
		if err := batch.apply(ctx, p); err != nil {
			return err
		}
	}
	cats, err := h.updateIndex(ctx, &batch.rc)
	if err != nil {
		return err
	}
	return h.nameProducts(ctx, current, cats)
}

// productStep is one step of a product change: a name, for the reader and
// the tests, and a method that brings one kind of copy out of p, the
// product's current version. Each is idempotent and version-guarded on
// its own.
type productStep struct {
	name string
	run  func(ctx context.Context, p domain.Product) error
}

// productBatch is what the steps of one batch share: whether the batch
// may be a replay (changefeed.Batch.MayBeReplay), and the categories the
// view step found changed, for the one write of the index that follows
// the batch's steps (updateIndex).
type productBatch struct {
	h      *Handlers
	replay bool
	rc     recount
}

// steps are the steps of one product change, in the order they run.
func (b *productBatch) steps() []productStep {
	return []productStep{
		// The summary in productsByCategory: put, moved, deleted.
		{"category view", b.view},
		// The entries in productsByTerm and the product's ledger.
		{"search index", b.h.ProductToSearch},
		// Every open cart line of the product, unless none can be stale.
		{"carts", b.h.syncCarts},
		// A deleted product's reviews.
		{"reviews", b.h.DeleteReviewsOfDeleted},
	}
}

// apply runs the steps on p, one after the other, and stops at the first
// error.
func (b *productBatch) apply(ctx context.Context, p domain.Product) error {
	for _, s := range b.steps() {
		if err := s.run(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// view is the category view step: productToView, with the batch's replay
// flag and recount.
func (b *productBatch) view(ctx context.Context, p domain.Product) error {
	return b.h.productToView(ctx, p, b.replay, &b.rc)
}

// renameAndCollect decodes the batch's items: a version of the
// categories index is applied at once (RenameCategories), a product is
// collected for the steps.
func (h *Handlers) renameAndCollect(ctx context.Context, items [][]byte) ([]domain.Product, error) {
	var products []domain.Product
	for _, it := range items {
		hd, err := decodeItem[head](it)
		if err != nil {
			return nil, err
		}
		switch hd.Type {
		case domain.TypeCategories:
			cats, err := decodeItem[domain.Categories](it)
			if err != nil {
				return nil, err
			}
			if err := h.RenameCategories(ctx, cats); err != nil {
				return nil, err
			}
		case domain.TypeProduct:
			p, err := decodeItem[domain.Product](it)
			if err != nil {
				return nil, err
			}
			products = append(products, p)
		}
	}
	return products, nil
}

// currentProducts replaces each changed product of the batch by its
// current version (one point read per distinct product, 1 RU each): the
// copies are then made from the truth, so a duplicate or a late, older
// version of a product can never move a copy backwards, and skipping the
// writes that would change nothing is safe. A product already gone (its
// soft-delete ttl passed) is kept as the feed delivered it.
func (h *Handlers) currentProducts(ctx context.Context, batch []domain.Product) ([]domain.Product, error) {
	seen := map[string]bool{}
	var out []domain.Product
	for _, p := range batch {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		cur, err := h.repos.Products.GetAny(ctx, p.ID)
		switch {
		case domain.IsCode(err, domain.ENOTFOUND):
			cur = latest(batch, p.ID)
		case err != nil:
			return nil, err
		}
		out = append(out, cur)
	}
	return out, nil
}

// latest is the newest version of a product in the batch.
func latest(batch []domain.Product, id string) domain.Product {
	var best domain.Product
	for _, p := range batch {
		if p.ID == id && (best.ID == "" || p.Version > best.Version) {
			best = p
		}
	}
	return best
}
