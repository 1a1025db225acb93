package feedworkers

import (
	"context"
	"slices"

	"github.com/reference-shop/shop/domain"
)

// ProductToSearch keeps p's entries in productsByTerm, the inverted index
// of search. p should be the product's current version (Products reads
// it). When p shows what the entries already hold (its card and terms,
// domain.SearchFingerprint, are the ledger's Shown), it writes nothing:
// the ledger's read is the whole step, as it is for most reviews (the
// entries copy no review count, and the rating in half stars). Otherwise
// four steps, each idempotent and guarded by the product's version:
//
//  1. Claim the product's ledger for p's version, widen it by the terms
//     p holds and clear its Shown, before writing any entry: a crash
//     after step 3 leaves no entry the ledger does not name, so the next
//     change still finds it to remove, and no later version takes
//     half-written entries for finished ones; a version older than the
//     ledger's is not indexed.
//  2. Confirm p is still the product's current version (a point read of
//     the product); if it has moved on, index the current version
//     instead (below, why).
//  3. Put an entry under each term p holds, and a tombstone under each
//     term of the ledger p no longer holds: a rename, a category move, a
//     tag change, a delete. Entries and tombstones share the version
//     guard, so an older version never brings back what a newer one
//     removed, nor overwrites what it wrote.
//  4. Settle: drop the tombstoned terms from the ledger and record p's
//     fingerprint as Shown, If-Match on the claim's write.
//
// A skip claims nothing, so the ledger's version may lag the product's,
// and so may the entries' sourceVersion; an older version must still
// never overwrite a newer one. Say v was skipped: the ledger is settled at
// an older u whose entries show what v shows. A version w between them
// that reaches the handler late (a worker that read the product before v
// was written) passes the ledger's guard and claims it. Its step 2 reads
// the product after that claim: if it finds v, it indexes v, not w. If it
// finds w, v was written after w's claim, so v's own step, which reads the
// ledger after v was written, finds the claim (Shown cleared), does not
// skip, claims the ledger for v and rewrites the entries, the guard
// letting v's writes win over w's. A replay of an indexed version reads
// the ledger and writes nothing.
func (h *Handlers) ProductToSearch(ctx context.Context, p domain.Product) error {
	return h.indexSearch(ctx, p, false)
}

// indexSearch is ProductToSearch; rewrite writes the entries even when the
// ledger says they show p (the audit's repair of an entry it deleted).
func (h *Handlers) indexSearch(ctx context.Context, p domain.Product, rewrite bool) error {
	idx := h.repos.Search
	terms := domain.SearchTerms(p)
	shown := "" // a deleted product is never skipped: it has no card
	if !p.Deleted {
		shown = domain.SearchFingerprint(domain.SearchCardOf(p), terms)
	}
	var from *domain.SearchLedger
	switch read, err := idx.Ledger(ctx, p.ID); {
	case err == nil:
		from = &read
	case !domain.IsCode(err, domain.ENOTFOUND):
		return err
	}
	if from != nil && (from.Version > p.Version || !rewrite && shown != "" && from.Shown == shown) {
		return nil
	}
	ledger, err := idx.Widen(ctx, p.ID, p.Version, terms, from)
	if err != nil {
		return err
	}
	if ledger.Version > p.Version {
		return nil
	}
	switch cur, err := h.repos.Products.GetAny(ctx, p.ID); {
	case domain.IsCode(err, domain.ENOTFOUND):
		return nil // gone for good: its delete tombstoned the entries
	case err != nil:
		return err
	case cur.Version > p.Version:
		return h.indexSearch(ctx, cur, rewrite)
	}
	for _, t := range terms {
		if _, err := idx.Put(ctx, domain.EntryOfProduct(p, t, terms)); err != nil {
			return err
		}
	}
	var removed []string
	for _, t := range ledger.Terms {
		if slices.Contains(terms, t) {
			continue
		}
		if _, err := idx.Remove(ctx, t, p.ID, p.Version); err != nil {
			return err
		}
		removed = append(removed, t)
	}
	var ttl *int
	if p.Deleted {
		ttl = p.TTL
	}
	return idx.Settle(ctx, p.ID, p.Version, removed, ttl, shown, ledger)
}
