package feedworkers

import (
	"context"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// productToView keeps the product's copy in productsByCategory. p should
// be the product's current version (Products reads it), so the copy is
// made from the truth. It adds to rc the categories whose membership the
// change altered, for the recount of productCount in the categories
// index:
//
//   - Upsert the summary in the product's category, guarded by
//     sourceVersion: an older version never overwrites a newer copy.
//     Only a CREATED summary joins the category; a summary replaced in
//     place (a new price, new review stats) changes no count, so the
//     usual product change recounts nothing.
//   - A partition key never changes in place: after a category change the
//     copy is deleted in previousCategoryId's partition (and in any other
//     category that still holds one: the feed may have skipped the
//     intermediate versions of two quick moves) and created in the new.
//   - A deleted product loses its summary.
//
// A batch that may have been applied before (replay, from
// changefeed.Batch.MayBeReplay) recounts the product's categories
// whatever the writes say: the first application may have created the
// summary and stopped before the recount, and the replay then finds the
// summary there and would skip it forever.
//
// A summary this handler CREATED may come after a newer version's handler
// deleted the copies outside that version's category (a move, or a
// delete, handled by another worker during a lease handover, or by the
// audit's repair beside the feed): the version guard compares with a copy
// that is no longer there. So after a create the handler reads the
// product again, and while it has moved or been deleted since, applies
// that version too. Either the newer version committed before that read,
// and this handler removes its own copy, or after it, and the newer
// version's handler reads it only after this create, so its deletes come
// after it. A summary replaced in place cannot be stale so: the newer
// handler's delete has not happened yet. One point read per summary
// created (a product created or moved), none for the usual change.
func (h *Handlers) productToView(ctx context.Context, p domain.Product, replay bool, rc *recount) error {
	for {
		created, err := h.viewOf(ctx, p, replay, rc)
		if err != nil || !created {
			return err
		}
		cur, err := h.repos.Products.GetAny(ctx, p.ID)
		if domain.IsCode(err, domain.ENOTFOUND) {
			return nil
		}
		if err != nil || (!cur.Deleted && cur.CategoryID == p.CategoryID) {
			return err
		}
		p = cur
	}
}

// viewOf applies one version of the product to the view (productToView)
// and reports whether it created the product's summary.
func (h *Handlers) viewOf(ctx context.Context, p domain.Product, replay bool, rc *recount) (created bool, err error) {
	sums := h.repos.ProductSummaries
	rc.touch(p)
	if p.Deleted {
		if err := sums.Delete(ctx, p.CategoryID, p.ID); err != nil {
			return false, err
		}
		// Delete does not say whether a copy was there; deletes are rare
		// enough to recount always.
		rc.add(p.CategoryID, p.CategoryName)
	} else {
		res, err := sums.PutReport(ctx, domain.SummaryOfProduct(p))
		if err != nil {
			return false, err
		}
		if res.Created || replay {
			rc.add(p.CategoryID, p.CategoryName)
		}
		created = res.Created
	}
	if p.PreviousCategoryID == "" {
		return created, nil
	}
	others, err := h.otherCategories(ctx, p)
	if err != nil {
		return false, err
	}
	for _, cat := range others {
		// Point read first (1 RU): only a copy that was there makes its
		// category's count worth recomputing.
		if _, err := sums.Get(ctx, cat, p.ID); domain.IsCode(err, domain.ENOTFOUND) {
			continue
		} else if err != nil {
			return false, err
		}
		if err := sums.Delete(ctx, cat, p.ID); err != nil {
			return false, err
		}
		rc.add(cat, "")
		rc.left(cat)
	}
	if replay {
		rc.add(p.PreviousCategoryID, "")
		rc.left(p.PreviousCategoryID)
	}
	return created, nil
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

// recount collects the categories of a batch whose membership changed,
// so that each is counted once per batch, not once per product, and the
// products the batch changed in each category, for its featured list.
type recount struct {
	ids []string
	// names holds, for a category a product joined, the name that
	// product carries: the index lists a category new to it under it.
	names map[string]string
	// changed holds, per category, the batch's products in it as they
	// are now; a category a product left holds a zero entry, which
	// always asks for a new ranking.
	changed map[string][]domain.Product
	// every asks for every category of the index to be counted again: a
	// batch that may be a replay (changefeed.Batch.MayBeReplay). Its first
	// application may have deleted a summary in a category the product
	// left and died before the count, and the product may have moved on
	// since, so that no field of it names that category any more. One
	// single-partition count query per category, on a replay only.
	every bool
}

func (r *recount) add(id, joinedName string) {
	if !slices.Contains(r.ids, id) {
		r.ids = append(r.ids, id)
	}
	if joinedName != "" {
		if r.names == nil {
			r.names = map[string]string{}
		}
		r.names[id] = joinedName
	}
}

// touch records a product of the batch in its category.
func (r *recount) touch(p domain.Product) {
	if r.changed == nil {
		r.changed = map[string][]domain.Product{}
	}
	r.changed[p.CategoryID] = append(r.changed[p.CategoryID], p)
}

// left records that a product left category id.
func (r *recount) left(id string) {
	r.touch(domain.Product{CategoryID: id})
}

// updateIndex writes what the batch changed into the categories index, in
// ONE read-modify-write of it: the product counts (recountCategories) and
// the featured products of each category the batch touched
// (featureCategories). Nothing is written when both already hold. It
// returns the index as it read it, read after the batch's view writes,
// for nameProducts (the zero index when the batch changed nothing).
func (h *Handlers) updateIndex(ctx context.Context, rc *recount) (domain.Categories, error) {
	if len(rc.ids) == 0 && len(rc.changed) == 0 {
		return domain.Categories{}, nil
	}
	var read domain.Categories
	var placed []domain.Product
	_, err := h.repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		if rc.every {
			for _, cat := range c.Items {
				rc.add(cat.ID, "")
			}
		}
		counted, err := h.recountCategories(ctx, c, rc)
		if err != nil {
			return err
		}
		featured, pl, err := h.featureCategories(ctx, c, rc)
		if err != nil {
			return err
		}
		placed = pl
		// The last attempt's read is the one that counts: an attempt that
		// lost its If-Match race reads again.
		read = *c
		if !counted && !featured {
			return repo.ErrUnchanged
		}
		c.LastUpdated = h.now().UTC()
		return nil
	})
	if err := ignoreUnchanged(err); err != nil || len(placed) == 0 {
		return read, err
	}
	return read, h.placeAgain(ctx, placed)
}

// nameProducts gives each product of the batch whose categoryName is not
// its category's name in cats, the index as updateIndex read it, that
// name: the product update RenameCategories makes, whose new version
// then carries the name to the view, search and carts through this feed.
// products are the batch's current versions, whose summaries are written.
//
// RenameCategories alone misses a product whose change (a create, a move
// into the category, a write that copied the name from an index read
// before the rename) the view had not taken in when the rename was
// handled: it takes the ids from the view, which trails this feed. This
// check closes that race. The index was read AFTER the batch's summaries
// were written, so either the rename committed before that read, and
// the name here is the new one, or after it, and then the rename's
// handler, which runs once the rename has committed, queries the view
// after this product's summary was there and finds the product.
//
// No read of its own: the names are those of the index read that the
// counts and the featured list make anyway, even when they write
// nothing; only a product whose name differs costs its update. A deleted
// product, or one whose category is not in the index, is left alone, and
// so is one that has moved since (its move is on its way through this
// feed, to be checked in turn).
func (h *Handlers) nameProducts(ctx context.Context, products []domain.Product, cats domain.Categories) error {
	for _, p := range products {
		name, ok := categoryName(cats, p.CategoryID)
		if p.Deleted || !ok || p.CategoryName == name {
			continue
		}
		if err := h.nameProduct(ctx, p.ID, p.CategoryID, name); err != nil {
			return err
		}
	}
	return nil
}

// nameProduct gives product id the name of its category catID: the one
// product update of a rename (RenameCategories, nameProducts, the audit's
// repair). A product since moved or deleted, or gone, is left alone.
func (h *Handlers) nameProduct(ctx context.Context, id, catID, name string) error {
	_, err := h.repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
		if p.Deleted || p.CategoryID != catID || !p.Apply(domain.ProductChange{CategoryName: &name}, h.now()) {
			return repo.ErrUnchanged
		}
		return nil
	})
	if err = ignoreUnchanged(err); domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
}

// categoryName is the name of category id in the index, if it is there.
func categoryName(cats domain.Categories, id string) (string, bool) {
	i := slices.IndexFunc(cats.Items, func(c domain.Category) bool { return c.ID == id })
	if i < 0 {
		return "", false
	}
	return cats.Items[i].Name, true
}

// recountCategories sets productCount of the collected categories to the
// number of summaries in their view partition (single-partition queries
// projected to id; absolute values, never +=, so a replay is harmless).
// The count runs INSIDE the read-modify-write of the index (updateIndex),
// after reading the version it replaces with If-Match: of two workers
// recounting concurrently, the one that counted before the other's
// change loses the If-Match race and counts again, so the last write
// always holds a count taken after every change before it. Nothing is
// read when no membership changed. It reports whether a count changed.
func (h *Handlers) recountCategories(ctx context.Context, c *domain.Categories, rc *recount) (bool, error) {
	changed := false
	for _, id := range rc.ids {
		members, err := h.repos.ProductSummaries.IDs(ctx, id)
		if err != nil {
			return false, err
		}
		n := len(members)
		j := slices.IndexFunc(c.Items, func(cat domain.Category) bool { return cat.ID == id })
		switch {
		case j >= 0 && c.Items[j].ProductCount != n:
			c.Items[j].ProductCount = n
			changed = true
		case j < 0 && n > 0 && rc.names[id] != "":
			// A product joined a category new to the index: list it
			// under the name the product carries.
			c.Items = append(c.Items, domain.Category{ID: id, Name: rc.names[id], ProductCount: n})
			changed = true
		}
	}
	return changed, nil
}

// featureCategories keeps the featured products of each category the
// batch touched. A change the list alone can place is placed
// (domain.Categories.PlaceFeatured: a featured product that did not fall,
// or one that enters a full list above its last); otherwise the category
// is ranked again by ONE single-partition TOP query on its view partition,
// ordered by ratingScore (ProductSummaries.Best), whose best replace the
// category's featured copies (absolute values, so a replay is harmless).
// Inside the index's read-modify-write for the same reason as the
// recount. It reports whether the featured list changed, and the
// products whose placement changed it (updateIndex reads them again:
// placeAgain).
func (h *Handlers) featureCategories(ctx context.Context, c *domain.Categories, rc *recount) (changed bool, placed []domain.Product, err error) {
	// A featured copy of a batch product in a category it is no longer
	// in (its summary there deleted by a worker that died before it
	// ranked the category again) asks for that category to be ranked
	// again: the index in hand says so, no read.
	for _, products := range rc.changed {
		for _, p := range products {
			for _, f := range c.Featured {
				if p.ID != "" && f.ID == p.ID && f.CategoryID != p.CategoryID {
					rc.left(f.CategoryID)
				}
			}
		}
	}
	for id, products := range rc.changed {
		if !slices.ContainsFunc(c.Items, func(cat domain.Category) bool { return cat.ID == id }) {
			continue
		}
		settled := true
		var here []domain.Product
		for _, p := range products {
			if p.ID == "" {
				// A product left the category: only a new ranking tells
				// what takes its place.
				settled = false
				break
			}
			moved, ok := c.PlaceFeatured(p)
			if moved {
				changed = true
				here = append(here, p)
			}
			if !ok {
				settled = false
				break
			}
		}
		if settled {
			placed = append(placed, here...)
			continue
		}
		best, err := h.repos.ProductSummaries.Best(ctx, id, domain.FeaturedPerCategory)
		if err != nil {
			return false, nil, err
		}
		if c.SetFeatured(id, best) {
			changed = true
		}
	}
	return changed, placed, nil
}

// placeAgain reads again each product whose copy this worker placed in
// the featured list, after the index was written. A placement is made
// from the product as the batch read it, and another worker may have
// applied a newer version in between (a lease handover, the audit's
// repair): placed after it, the older copy would stay. Either the newer
// version committed before this read, and its category is ranked again
// here, or after it, and its own handler places it after this write.
// One point read per product that moved the list, none for the usual
// change.
func (h *Handlers) placeAgain(ctx context.Context, placed []domain.Product) error {
	var rc recount
	for _, p := range placed {
		cur, err := h.repos.Products.GetAny(ctx, p.ID)
		switch {
		case domain.IsCode(err, domain.ENOTFOUND):
			rc.left(p.CategoryID)
			continue
		case err != nil:
			return err
		case cur.Version == p.Version:
			continue
		}
		rc.left(p.CategoryID)
		rc.touch(cur)
	}
	if len(rc.changed) == 0 {
		return nil
	}
	_, err := h.updateIndex(ctx, &rc)
	return err
}

// RenameCategories pushes each category's name into its products'
// categoryName copy (ids from the view's single-partition query); the
// summaries then follow through the products feed. The trigger is any
// version of the categories document, but the names applied are the
// CURRENT index's (one point read), so a duplicate or late older version
// cannot rename products back. The view trails the products feed, so a
// product whose change the view has not taken in yet is not found here:
// the products feed names it when that change comes through
// (nameProducts).
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
			if err := h.nameProduct(ctx, id, c.ID, c.Name); err != nil {
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
			// Reviews are only ever added (one per user, none edited) until
			// the product goes, so their count is the version of these
			// copies: stats of fewer reviews than the product shows were
			// read before a review that another worker has already
			// counted (two workers during a lease handover), and must not
			// replace them.
			if p.Deleted || sameReviews(p, stats, top) || stats.Count < p.ReviewStats.Count {
				return repo.ErrUnchanged
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

func sameReviews(p *domain.Product, stats domain.ReviewStats, top []domain.TopReview) bool {
	return p.ReviewStats == stats && slices.EqualFunc(p.TopReviews, top, func(a, b domain.TopReview) bool {
		return a.ID == b.ID && a.UserID == b.UserID && a.UserName == b.UserName && a.Rating == b.Rating &&
			a.Title == b.Title && a.Body == b.Body && a.CreatedAt.Equal(b.CreatedAt)
	})
}
