package feedworkers

import (
	"context"
	"slices"

	"shop/domain"
)

// ProductToView keeps the product's copy in productsByCategory and the
// productCount of the categories index. p should be the product's
// current version (Products reads it), so the copy is made from the truth.
//
//   - Upsert the summary in the product's category, guarded by
//     sourceVersion: an older version never overwrites a newer copy.
//   - A partition key never changes in place: after a category change the
//     copy is deleted in previousCategoryId's partition (and in any other
//     category that still holds one: the feed may have skipped the
//     intermediate versions of two quick moves) and created in the new.
//   - A deleted product loses its summary.
//   - The counts are recomputed (absolute values, never +=).
func (h *Handlers) ProductToView(ctx context.Context, p domain.Product) error {
	sums := h.repos.ProductSummaries
	recount := []string{p.CategoryID}
	if p.Deleted {
		if err := sums.Delete(ctx, p.CategoryID, p.ID); err != nil {
			return err
		}
	} else if _, err := sums.Put(ctx, domain.SummaryOfProduct(p)); err != nil {
		return err
	}
	if p.PreviousCategoryID != "" {
		others, err := h.otherCategories(ctx, p)
		if err != nil {
			return err
		}
		for _, cat := range others {
			// Point read first (1 RU): only a copy that was there makes
			// its category's count worth recomputing.
			if _, err := sums.Get(ctx, cat, p.ID); domain.IsCode(err, domain.ENOTFOUND) {
				continue
			} else if err != nil {
				return err
			}
			if err := sums.Delete(ctx, cat, p.ID); err != nil {
				return err
			}
			recount = append(recount, cat)
		}
		if !slices.Contains(recount, p.PreviousCategoryID) {
			recount = append(recount, p.PreviousCategoryID)
		}
	}
	return h.recountCategories(ctx, recount, p.CategoryName)
}

// otherCategories lists the categories other than p's current one that
// may hold a stale copy of its summary.
func (h *Handlers) otherCategories(ctx context.Context, p domain.Product) ([]string, error) {
	cats, err := h.repos.Products.Categories(ctx)
	if err != nil {
		return nil, err
	}
	out := []string{p.PreviousCategoryID}
	for _, c := range cats.Items {
		if c.ID != p.CategoryID && c.ID != p.PreviousCategoryID {
			out = append(out, c.ID)
		}
	}
	return out, nil
}

// recountCategories sets productCount of the given categories to the
// number of summaries in their view partition (single-partition queries
// projected to id). The count runs INSIDE the read-modify-write of the
// index, after reading the version it replaces with If-Match: of two
// workers recounting concurrently, the one that counted before the
// other's change loses the If-Match race and counts again, so the last
// write always holds a count taken after every change before it. Nothing
// is written when the counts already hold (a replayed batch writes
// nothing).
func (h *Handlers) recountCategories(ctx context.Context, ids []string, newName string) error {
	_, err := h.repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		changed := false
		for i, id := range ids {
			members, err := h.repos.ProductSummaries.IDs(ctx, id)
			if err != nil {
				return err
			}
			n := len(members)
			j := slices.IndexFunc(c.Items, func(cat domain.Category) bool { return cat.ID == id })
			switch {
			case j >= 0 && c.Items[j].ProductCount != n:
				c.Items[j].ProductCount = n
				changed = true
			case j < 0 && n > 0 && i == 0 && newName != "":
				// The product's category is new to the index: list it
				// under the name the product carries.
				c.Items = append(c.Items, domain.Category{ID: id, Name: newName, ProductCount: n})
				changed = true
			}
		}
		if !changed {
			return errUnchanged
		}
		return nil
	})
	return ignoreUnchanged(err)
}

// RenameCategories pushes each category's name into its products'
// categoryName copy (ids from the view's single-partition query); the
// summaries then follow through the products feed. The trigger is any
// version of the categories document, but the names applied are the
// CURRENT index's (one point read), so a duplicate or late older version
// cannot rename products back.
func (h *Handlers) RenameCategories(ctx context.Context, _ domain.Categories) error {
	cats, err := h.repos.Products.Categories(ctx)
	if err != nil {
		return err
	}
	for _, c := range cats.Items {
		h.namesMu.Lock()
		done := h.names[c.ID] == c.Name
		h.namesMu.Unlock()
		if done {
			continue
		}
		ids, err := h.repos.ProductSummaries.IDs(ctx, c.ID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			_, err := h.repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
				if p.Deleted || p.CategoryID != c.ID {
					return errUnchanged
				}
				name := c.Name
				if !p.Apply(domain.ProductChange{CategoryName: &name}, h.now()) {
					return errUnchanged
				}
				return nil
			})
			if err = ignoreUnchanged(err); err != nil && !domain.IsCode(err, domain.ENOTFOUND) {
				return err
			}
		}
		h.namesMu.Lock()
		h.names[c.ID] = c.Name
		h.namesMu.Unlock()
	}
	return nil
}

// DeleteReviewsOfDeleted removes a deleted product's reviews partition in
// transactional batches of at most 100 deletes (one partition key, so one
// batch may hold them). Deletes do not reach the change feed, so nothing
// else is triggered; a replay finds an empty partition.
func (h *Handlers) DeleteReviewsOfDeleted(ctx context.Context, p domain.Product) error {
	if !p.Deleted {
		return nil
	}
	_, err := h.repos.Reviews.DeleteAll(ctx, p.ID)
	return err
}

// ReviewsToProducts recomputes reviewStats and topReviews of each product
// with changed reviews (once per product per batch) from ALL its reviews:
// one single-partition query, absolute values. The product is written
// (If-Match, via UpdateAny) only when the values differ, so a replayed
// batch writes nothing; the write then reaches the category view through
// the products feed (averageRating, reviewCount).
func (h *Handlers) ReviewsToProducts(ctx context.Context, reviews []domain.Review) error {
	seen := map[string]bool{}
	for _, r := range reviews {
		if r.ProductID == "" || seen[r.ProductID] {
			continue
		}
		seen[r.ProductID] = true
		all, err := h.repos.Reviews.All(ctx, r.ProductID)
		if err != nil {
			return err
		}
		stats, top := domain.ComputeReviewStats(all)
		_, err = h.repos.Products.UpdateAny(ctx, r.ProductID, func(p *domain.Product) error {
			if p.Deleted || sameReviews(p, stats, top) {
				return errUnchanged
			}
			p.ReviewStats, p.TopReviews = stats, top
			p.Version++
			p.LastUpdated = h.now().UTC()
			return nil
		})
		if err = ignoreUnchanged(err); err != nil && !domain.IsCode(err, domain.ENOTFOUND) {
			return err
		}
	}
	return nil
}

func sameReviews(p *domain.Product, stats domain.ReviewStats, top []domain.Review) bool {
	return p.ReviewStats == stats && slices.EqualFunc(p.TopReviews, top, func(a, b domain.Review) bool {
		return a.ID == b.ID && a.UserID == b.UserID && a.UserName == b.UserName && a.Rating == b.Rating &&
			a.Title == b.Title && a.Body == b.Body && a.CreatedAt.Equal(b.CreatedAt)
	})
}
