package feedworkers

import (
	"context"
	"slices"

	"shop/domain"
)

// ProductToSearch keeps p's entries in productsByTerm, the inverted index
// of search. p should be the product's current version (Products reads
// it). Three steps, each idempotent and guarded by the product's version:
//
//  1. Widen the product's ledger by the terms p holds, before writing any
//     entry: a crash after step 2 leaves no entry the ledger does not
//     name, so the next change still finds it to remove.
//  2. Put an entry under each term p holds (the summary fields change with
//     every version, so every entry is rewritten: the write amplification
//     of an inverted index), and a tombstone under each term of the
//     ledger p no longer holds: a rename, a category move, a tag change,
//     a delete. Entries and tombstones share the version guard, so an
//     older version never brings back what a newer one removed.
//  3. Settle: drop the tombstoned terms from the ledger.
//
// A version the ledger has settled costs one read: a replayed batch
// writes nothing. A version whose terms are the ledger's skips steps 1
// and 3: with nothing to add or remove the entries' guard is enough.
func (h *Handlers) ProductToSearch(ctx context.Context, p domain.Product) error {
	idx := h.repos.Search
	terms := domain.SearchTerms(p)
	ledger, err := idx.Ledger(ctx, p.ID)
	missing := domain.IsCode(err, domain.ENOTFOUND)
	if err != nil && !missing {
		return err
	}
	if ledger.Settled >= p.Version {
		return nil
	}
	// The usual change (a price, a rating, the stock) keeps the terms:
	// nothing to add to the ledger, nothing to remove, so the ledger is
	// neither widened nor settled, which saves its two writes.
	same := !missing && !p.Deleted && sameTerms(ledger.Terms, terms)
	if !same {
		if ledger, err = idx.Widen(ctx, p.ID, p.Version, terms); err != nil {
			return err
		}
		if ledger.Settled >= p.Version {
			return nil
		}
	}
	for _, t := range terms {
		if _, err := idx.Put(ctx, domain.EntryOfProduct(p, t, terms)); err != nil {
			return err
		}
	}
	if same {
		return nil
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
	return idx.Settle(ctx, p.ID, p.Version, removed, ttl)
}

// sameTerms reports whether a and b hold the same terms.
func sameTerms(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(t string) bool { return !slices.Contains(b, t) })
}
