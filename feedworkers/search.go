package feedworkers

import (
	"context"
	"slices"

	"github.com/reference-shop/shop/domain"
)

// ProductToSearch keeps p's entries in productsByTerm, the inverted index
// of search. p should be the product's current version (Products reads
// it). When the index already shows p, it writes nothing: the product's
// ledger is claimed by p's fingerprint (its card and terms,
// domain.SearchFingerprint) and that claim's writes are done (indexShows),
// as after most reviews, since the entries copy no review count and the
// rating in half stars only. Otherwise four steps, each idempotent and
// guarded by the product's version:
//
//  1. Claim the product's ledger for p's version: widen it by the terms p
//     holds and record p's fingerprint, before writing any entry, so a
//     crash after step 3 leaves no entry the ledger does not name, and
//     the next change still finds it to remove; a version older than the
//     ledger's is not indexed.
//  2. Confirm p is still the product's current version (a point read of
//     the product); if it has moved on, index the current version
//     instead (below, why).
//  3. Put a tombstone under each term of the ledger p no longer holds (a
//     rename, a category move, a tag change, a delete), then an entry
//     under each term p holds, in the order of its terms, stopping at the
//     first error: the entry under the last term, written last, at the
//     claim's version shows the claim done. Entries and tombstones share
//     the version guard, so an older version never brings back what a
//     newer one removed, nor overwrites what it wrote.
//  4. Settle: drop the tombstoned terms from the ledger (If-Match on the
//     claim's write), when there are.
//
// A skip claims nothing, so the ledger's version may lag the product's,
// and so may the entries' sourceVersion; an older version must still
// never overwrite a newer one. Say v was skipped: the ledger is claimed by
// an older u whose entries show what v shows. A version w between them
// that reaches the handler late (a worker that read the product before v
// was written) passes the ledger's guard and claims it. Its step 2 reads
// the product after that claim: if it finds v, it indexes v, not w. If it
// finds w, v was written after w's claim, so v's own step, which reads the
// ledger after v was written, finds w's claim: unless w shows what v shows
// (w's writes are then v's too), v claims the ledger and rewrites the
// entries, the guard letting v's writes win over w's. A replay of an indexed version reads
// the ledger and one entry, and writes nothing.
func (h *Handlers) ProductToSearch(ctx context.Context, p domain.Product) error {
	return h.indexSearch(ctx, p, false)
}

// indexSearch is ProductToSearch; rewrite writes the entries even when the
// index shows p (the audit's repair of an entry it deleted).
func (h *Handlers) indexSearch(ctx context.Context, p domain.Product, rewrite bool) error {
	idx := h.repos.Search
	terms := domain.SearchTerms(p)
	shown := domain.SearchFingerprint(p)
	var from *domain.SearchLedger
	switch read, err := idx.Ledger(ctx, p.ID); {
	case err == nil:
		from = &read
	case !domain.IsCode(err, domain.ENOTFOUND):
		return err
	}
	if from != nil && from.Version > p.Version {
		return nil
	}
	if from != nil && !rewrite {
		switch done, err := h.indexShows(ctx, *from, p.ID, terms, shown); {
		case err != nil:
			return err
		case done:
			return nil
		}
	}
	ledger, err := idx.Widen(ctx, p.ID, p.Version, terms, shown, from)
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
	for _, t := range terms {
		if _, err := idx.Put(ctx, domain.EntryOfProduct(p, t, terms)); err != nil {
			return err
		}
	}
	if len(removed) == 0 && !p.Deleted {
		return nil
	}
	var ttl *int
	if p.Deleted {
		ttl = p.TTL
	}
	return idx.Settle(ctx, p.ID, p.Version, removed, ttl, ledger)
}

// indexShows reports whether the index shows what shown (the fingerprint
// of a product of these terms, domain.SearchFingerprint) names: the
// ledger l is claimed by it,
// and that claim's writes are done, the entry under the last of the terms
// (written last) holding the claim's version or a newer one. One point
// read, and only when the claim is shown's.
func (h *Handlers) indexShows(ctx context.Context, l domain.SearchLedger, id string, terms []string, shown string) (bool, error) {
	if shown == "" || l.Shown != shown {
		return false, nil
	}
	e, err := h.repos.Search.Entry(ctx, terms[len(terms)-1], id)
	switch {
	case domain.IsCode(err, domain.ENOTFOUND):
		return false, nil
	case err != nil:
		return false, err
	}
	return e.Type == domain.TypeSearchEntry && e.SourceVersion >= l.Version, nil
}
