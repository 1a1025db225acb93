package feedworkers

import (
	"context"

	"github.com/reference-shop/shop/domain"
)

// syncCarts runs the cart fan-out of p only when a cart copy may be stale.
// The fan-out is the shop's one cross-partition query, charged on every
// physical partition, and most product writes (new review stats) change
// nothing a cart holds:
//
//   - p.Version <= 1: the product never changed since it was created, and
//     a cart copies the product as it is when the line is added.
//   - Otherwise the fan-out record (repo.FanoutRecord) is point-read
//     (one point read, vs a query fanned out to every partition) and the
//     fan-out skipped when it already pushed this copy: the same
//     domain.CartCopyOf, at the same CopyVersion. The copy alone is not
//     enough: a cart PUT may have copied a version in between that the
//     feed never delivered (a rename, and the name back), which the
//     CopyVersion counts.
//
// The record is written only AFTER the fan-out succeeded: a crash between
// the two finds the old record and fans out again (at least once; the
// cart writes are version-guarded and skip current lines). A concurrent
// writer may leave an older version's record: the next change then
// compares against it and fans out once more, never less.
func (h *Handlers) syncCarts(ctx context.Context, p domain.Product) error {
	if p.Version <= 1 {
		h.countSkipped()
		return nil
	}
	rec, err := h.repos.Fanouts.Get(ctx, p.ID)
	found := err == nil
	if err != nil && !domain.IsCode(err, domain.ENOTFOUND) {
		return err
	}
	if found && rec.Pushed == domain.CartCopyOf(p) && rec.CopyVersion == p.CopyVersion {
		h.countSkipped()
		return nil
	}
	if _, err := h.ProductToCarts(ctx, p); err != nil {
		return err
	}
	if found && rec.ProductVersion > p.Version {
		// A newer version already fanned out (p was read before it was
		// written): keep its record.
		return nil
	}
	return h.repos.Fanouts.Put(ctx, p)
}

func (h *Handlers) countSkipped() {
	h.stats.mu.Lock()
	h.stats.s.Skipped++
	h.stats.mu.Unlock()
}
