package feedworkers

import (
	"context"
	"errors"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// The audit's repairs: each is the feed's own write for one source, from
// the source as it is now, so its version guard still holds.

// repairAvailability takes the availability of the product's variant sku
// from its current stock, unless the copy was taken from a newer stock
// version: unlike InventoryToProducts it also rewrites a copy that claims
// the stock's version and says another status.
func (h *Handlers) repairAvailability(ctx context.Context, id, sku string) error {
	s, err := h.repos.Inventory.Total(ctx, id, sku)
	if err != nil {
		return err
	}
	_, err = h.repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
		before := domain.CartCopyOf(*p)
		if !p.RepairStock(s) {
			return repo.ErrUnchanged
		}
		p.NoteCopy(before)
		p.Version++
		p.LastUpdated = h.now().UTC()
		return nil
	})
	return ignoreUnchanged(err)
}

// repairReviews sets the product's review stats and top reviews from all
// its reviews, as ReviewsToProducts does, but also below the count the
// product shows (a count corrupted upwards, which the feed's guard would
// keep): only while the product still shows the copies the audit read
// (seen), so copies a worker has written since are left to it.
func (h *Handlers) repairReviews(ctx context.Context, seen domain.Product) error {
	id := seen.ID
	all, err := h.repos.Reviews.All(ctx, id)
	if err != nil {
		return err
	}
	stats, top := domain.ComputeReviewStats(all)
	_, err = h.repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
		if !sameReviews(p, seen.ReviewStats, seen.TopReviews) {
			return errors.New("the product's reviews changed since the audit read them: left to its feed")
		}
		if p.Deleted || sameReviews(p, stats, top) {
			return repo.ErrUnchanged
		}
		p.ReviewStats, p.TopReviews = stats, top
		p.Version++
		p.LastUpdated = h.now().UTC()
		return nil
	})
	return ignoreUnchanged(err)
}

// recountAll counts and ranks every category of the index again (the
// index's read-modify-write of the products feed, every category asked
// for a new ranking).
func (h *Handlers) recountAll(ctx context.Context) error {
	cats, err := h.repos.Products.Categories(ctx)
	if err != nil {
		return err
	}
	var rc recount
	for _, c := range cats.Items {
		rc.add(c.ID, "")
		rc.left(c.ID)
	}
	_, err = h.updateIndex(ctx, &rc)
	return err
}

// repairProduct runs the products feed's view path for the product's
// current version, as a replay (so its categories are counted again), and
// counts category from too, when a copy was removed there.
func (h *Handlers) repairProduct(ctx context.Context, id, from string) error {
	p, err := h.repos.Products.GetAny(ctx, id)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return h.recountAll(ctx)
	}
	if err != nil {
		return err
	}
	var rc recount
	if err := h.productToView(ctx, p, true, &rc); err != nil {
		return err
	}
	if from != "" && from != p.CategoryID {
		rc.add(from, "")
		rc.left(from)
	}
	_, err = h.updateIndex(ctx, &rc)
	return err
}

// repairSearch runs the search path for the product's current version,
// writing its entries even where the ledger says they show it (the audit
// found one that does not, or a ledger that says wrong), and leaves a
// tombstone under term when the product no longer holds it.
func (h *Handlers) repairSearch(ctx context.Context, id, term string) error {
	p, err := h.repos.Products.GetAny(ctx, id)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := h.indexSearch(ctx, p, true); err != nil {
		return err
	}
	if term == "" || slices.Contains(domain.SearchTerms(p), term) {
		return nil
	}
	_, err = h.repos.Search.Remove(ctx, term, id, p.Version)
	return err
}

// repairCartLine copies the product's current version into the cart's
// line, unless the line holds a newer one (If-Match on the cart, from the
// copy the audit read).
func (h *Handlers) repairCartLine(ctx context.Context, c domain.Cart, productID, sku string) error {
	p, err := h.repos.Products.GetAny(ctx, productID)
	if err != nil {
		return err
	}
	_, err = h.repos.Carts.UpdateExisting(ctx, c, func(c *domain.Cart) error {
		i := slices.IndexFunc(c.Items, func(l domain.CartLine) bool { return l.ProductID == productID && l.SKU == sku })
		if i < 0 || c.Items[i].ProductVersion > p.Version || c.Items[i].PriceVersion > p.PriceVersion {
			return repo.ErrUnchanged
		}
		c.Items[i] = copyLine(c.Items[i], p)
		c.Items[i].ProductVersion = p.Version
		c.Recompute(h.now())
		return nil
	})
	if errors.Is(err, repo.ErrUnchanged) || domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
}

// propagateProduct does for the product's current version what the
// products feed does for it (its steps, then the categories index), as a
// replay whose own categories are counted again, not every category.
func (h *Handlers) propagateProduct(ctx context.Context, id string) (domain.Product, error) {
	p, err := h.repos.Products.GetAny(ctx, id)
	if err != nil {
		return p, err
	}
	batch := &productBatch{h: h, replay: true}
	if err := batch.apply(ctx, p); err != nil {
		return p, err
	}
	_, err = h.updateIndex(ctx, &batch.rc)
	return p, err
}
