package domain

import (
	"fmt"
	"math"
	"slices"
)

// SearchEntry lives in `productsByTerm` (pk /term): one per (term,
// product), so the products holding a term are one logical partition and
// a one-word search is ONE single-partition query. It carries what the
// results show (the category page's summary), every term of the product
// (a query of several words reads one term's partition and filters on
// the others) and the sort key of the results.
type SearchEntry struct {
	ProductSummary
	Term string `json:"term"`
	// Terms are all the product's terms (SearchTerms), Term among them.
	Terms []string `json:"terms"`
	// Rank orders the results: see SearchRank.
	Rank string `json:"rank"`
}

// SearchTombstoneTTL is how long a tombstone stays (one day): longer than
// any feed batch is in flight, so no worker still holding an older version
// of the product can bring the entry back once it expires.
const SearchTombstoneTTL = 24 * 3600

// EntryOfProduct is p's entry under term; terms are SearchTerms(p).
func EntryOfProduct(p Product, term string, terms []string) SearchEntry {
	s := SummaryOfProduct(p)
	s.Type = TypeSearchEntry
	return SearchEntry{ProductSummary: s, Term: term, Terms: terms, Rank: SearchRank(s.AverageRating, s.Name)}
}

// TombstoneOf marks that version of productID no longer holds term: a
// removal is a write under the same version guard as an entry, so an
// older version can never put the entry back, and it expires by its ttl.
// The search query filters on type, so tombstones are never returned.
func TombstoneOf(term, productID string, version int64) SearchEntry {
	ttl := SearchTombstoneTTL
	return SearchEntry{
		ProductSummary: ProductSummary{
			Meta:          Meta{ID: productID, Type: TypeSearchTombstone, SchemaVersion: SchemaVersion, TTL: &ttl},
			SourceVersion: version,
		},
		Term: term,
	}
}

// SearchRank is the order of search results, a string so one composite
// index (rank, id) serves it: the best rated first (average rating in
// hundredths, descending), then by folded name, then (the index's tie
// break) by id. Stable across pages: a page resumes after the last
// (rank, id) returned.
func SearchRank(averageRating float64, name string) string {
	hundredths := int(math.Round(min(max(averageRating, 0), 5) * 100))
	return fmt.Sprintf("%03d %s", 500-hundredths, Fold(name))
}

// SearchLedger is a product's record of the terms that may hold a live
// entry, in `productsByTerm` under SearchLedgerKey(productID). Terms only
// ever shrink by the terms whose tombstones were written, so the set is a
// superset of the live entries: when the feed skips intermediate versions
// (a rename, then another), the next change still finds every term to
// remove.
type SearchLedger struct {
	Meta
	Key   string   `json:"term"`
	Terms []string `json:"terms"`
	// Version is the newest product version indexed, or being indexed:
	// an older version of the product is not indexed after it.
	Version int64 `json:"version"`
}

// SearchLedgerKey is the partition key of productID's ledger: a ':' never
// appears in a term, so no search reads it.
func SearchLedgerKey(productID string) string { return "product:" + productID }

// Widen claims the ledger for version, before any entry of it is written,
// and adds its terms. It reports whether anything changed; an older
// version than the ledger's changes nothing (it is not to be indexed).
func (l *SearchLedger) Widen(version int64, terms []string) bool {
	if version < l.Version {
		return false
	}
	changed := version > l.Version
	l.Version = version
	for _, t := range terms {
		if !slices.Contains(l.Terms, t) {
			l.Terms = append(l.Terms, t)
			changed = true
		}
	}
	return changed
}

// Settle drops removed (their tombstones are written), unless a newer
// version has claimed the ledger since: that one settles it. ttl is set
// once the product is deleted.
func (l *SearchLedger) Settle(version int64, removed []string, ttl *int) bool {
	if l.Version != version {
		return false
	}
	n := len(l.Terms)
	l.Terms = slices.DeleteFunc(l.Terms, func(t string) bool { return slices.Contains(removed, t) })
	sameTTL := (l.TTL == nil && ttl == nil) || (l.TTL != nil && ttl != nil && *l.TTL == *ttl)
	if len(l.Terms) == n && sameTTL {
		return false
	}
	l.TTL = ttl
	return true
}
