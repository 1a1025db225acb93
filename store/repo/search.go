package repo

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// SearchIndex is the repository of `productsByTerm` (pk /term), the
// inverted index of product search: one entry per (term, product), kept
// by the products feed, so a search reads one term's partition instead of
// scanning `products` across every partition.
type SearchIndex struct{ c store.Container }

// NewSearchIndex returns the index's repository over s.
func NewSearchIndex(s store.Store) *SearchIndex {
	return &SearchIndex{s.Container(store.ProductsByTermContainer)}
}

// PickTerm is the term whose partition a search reads: the longest (ties:
// the last in byte order). Long words are rare words (Zipf), so the
// partition read is small and a word every product holds is read only
// when it is the longest word asked; the pick changes what the query
// costs, never what it returns, since the other terms are filters.
func PickTerm(terms []string) string {
	return slices.MaxFunc(terms, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
	})
}

// Search returns one page of the products holding every term, best rated
// first, then by name (domain.SearchRank), ties by id: ONE
// single-partition query on the partition of PickTerm(terms), whatever
// the number of terms, the others filtered with ARRAY_CONTAINS on the
// entry's copy of the product's terms. terms are domain.ParseQuery's.
func (s *SearchIndex) Search(ctx context.Context, terms []string, limit int, continuation string) (Page[domain.SearchEntry], error) {
	if len(terms) == 0 {
		return Page[domain.SearchEntry]{}, domain.Errorf(domain.EINVALID, "a search needs a term")
	}
	read := PickTerm(terms)
	filters := []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeSearchEntry}}
	for _, t := range terms {
		if t != read {
			filters = append(filters, store.Filter{Path: "terms", Op: store.OpArrayContains, Value: t})
		}
	}
	return rawPage[domain.SearchEntry](ctx, s.c, store.Query{
		PartitionKey: read,
		Filters:      filters,
		OrderBy:      "rank",
		Limit:        limit,
		Continuation: continuation,
	})
}

// Put writes an entry unless its partition holds the same or a newer
// version of it, entry or tombstone (the version guard of every copy). It
// reports whether it wrote.
func (s *SearchIndex) Put(ctx context.Context, e domain.SearchEntry) (bool, error) {
	res, err := putGuarded(ctx, s.c, e.Term, e.ID, searchEntryVersion, e)
	return res.Wrote, err
}

func searchEntryVersion(e domain.SearchEntry) int64 { return e.SourceVersion }

// Remove replaces productID's entry under term by a tombstone of version,
// under the same guard: a removal is a write, not a delete, so an older
// version of the product arriving later finds the newer tombstone and
// cannot bring the entry back. A term never held gets a tombstone too
// (it costs one write and expires): the ledger may name more terms than
// hold entries.
func (s *SearchIndex) Remove(ctx context.Context, term, productID string, version int64) (bool, error) {
	return s.Put(ctx, domain.TombstoneOf(term, productID, version))
}

// Ledger point-reads productID's ledger (ENOTFOUND when none).
func (s *SearchIndex) Ledger(ctx context.Context, productID string) (domain.SearchLedger, error) {
	return ReadDoc[domain.SearchLedger](ctx, s.c, domain.SearchLedgerKey(productID), productID)
}

// Entry point-reads productID's document under term, an entry or a
// tombstone (ENOTFOUND when none).
func (s *SearchIndex) Entry(ctx context.Context, term, productID string) (domain.SearchEntry, error) {
	return ReadDoc[domain.SearchEntry](ctx, s.c, term, productID)
}

// Widen claims productID's ledger for version, adds terms and records
// shown, the version's fingerprint (domain.SearchLedger.Widen), creating
// the ledger if needed, and returns it as it now is. from, when not nil,
// is the ledger as the caller just read it: the write then goes out with
// If-Match on its _etag, without a second read (a lost race reads again).
func (s *SearchIndex) Widen(ctx context.Context, productID string, version int64, terms []string, shown string, from *domain.SearchLedger) (domain.SearchLedger, error) {
	key := domain.SearchLedgerKey(productID)
	o := rmw[domain.SearchLedger]{create: func() domain.SearchLedger {
		return domain.SearchLedger{Meta: domain.Meta{ID: productID, Type: domain.TypeSearchLedger, SchemaVersion: domain.SchemaVersion}, Key: key}
	}}
	if from != nil {
		o.from, o.fromETag = from, from.ETag
	}
	l, _, err := update(ctx, s.c, key, productID, o, func(l *domain.SearchLedger) error {
		if !l.Widen(version, terms, shown) {
			return ErrUnchanged
		}
		return nil
	})
	if errors.Is(err, ErrUnchanged) {
		err = nil
	}
	return l, err
}

// Settle drops the terms whose tombstones version wrote, and sets ttl
// (domain.SearchLedger.Settle). from is the ledger as Widen returned it:
// the write goes out with If-Match on its _etag, without a read (a lost
// race, or a ledger Widen did not find stored, reads again).
func (s *SearchIndex) Settle(ctx context.Context, productID string, version int64, removed []string, ttl *int, from domain.SearchLedger) error {
	var o rmw[domain.SearchLedger]
	if from.ETag != "" {
		o.from, o.fromETag = &from, from.ETag
	}
	_, _, err := update(ctx, s.c, domain.SearchLedgerKey(productID), productID, o, func(l *domain.SearchLedger) error {
		if !l.Settle(version, removed, ttl) {
			return ErrUnchanged
		}
		return nil
	})
	if errors.Is(err, ErrUnchanged) {
		return nil
	}
	return err
}
