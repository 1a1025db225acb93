package feedworkers

import (
	"context"
	"slices"

	"github.com/reference-shop/shop/domain"
)

// ProductToSearch keeps p's entries in productsByTerm, the inverted index
// of search. p should be the product's current version (Products reads
// it). Three steps, each idempotent and guarded by the product's version:
//
//  1. Claim the product's ledger for p's version and widen it by the terms
//     p holds, before writing any entry: a crash after step 2 leaves no
//     entry the ledger does not name, so the next change still finds it
//     to remove, and a version older than the ledger's is not indexed.
//  2. Put an entry under each term p holds (the summary fields change with
//     every version, so every entry is rewritten: the write amplification
//     of an inverted index), and a tombstone under each term of the
//     ledger p no longer holds: a rename, a category move, a tag change,
//     a delete. Entries and tombstones share the version guard, so an
//     older version never brings back what a newer one removed.
//  3. Settle: drop the tombstoned terms from the ledger, when there are.
//
// The ledger is read once and written with If-Match on that read. A
// replayed batch writes nothing: each write finds its version there.
func (h *Handlers) ProductToSearch(ctx context.Context, p domain.Product) error {
	idx := h.repos.Search
	terms := domain.SearchTerms(p)
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
	ledger, err := idx.Widen(ctx, p.ID, p.Version, terms, from)
	if err != nil {
		return err
	}
	if ledger.Version > p.Version {
		return nil
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
	if len(removed) == 0 && !p.Deleted {
		return nil
	}
	var ttl *int
	if p.Deleted {
		ttl = p.TTL
	}
	return idx.Settle(ctx, p.ID, p.Version, removed, ttl)
}
