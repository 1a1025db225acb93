package domain

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
)

// SearchEntry lives in `productsByTerm` (pk /term): one per (term,
// product), so the products holding a term are one logical partition and
// a one-word search is ONE single-partition query. It carries what a
// result shows (SearchCard), every term of the product (a query of
// several words reads one term's partition and filters on the others) and
// the sort key of the results.
type SearchEntry struct {
	Meta
	SearchCard
	Term string `json:"term"`
	// Terms are all the product's terms (SearchTerms), Term among them.
	Terms []string `json:"terms"`
	// Rank orders the results: see SearchRank.
	Rank string `json:"rank"`
	// SourceVersion is the product version that wrote the entry, the
	// version guard of every copy. It may lag the product's Version: a
	// version that shows the same card under the same terms writes no
	// entry (see SearchLedger.Shown).
	SourceVersion int64 `json:"sourceVersion"`
}

// SearchCard is what a search result shows of a product, and all an entry
// copies of it beside its terms. An entry is rewritten under every term
// of the product whenever its card changes, so the card holds only what
// changes rarely or what a result cannot do without: not the review count
// nor the exact average, which move with every review (the product page
// and the category page show those), but the rating in half stars
// (ShownRating), which most reviews leave as it was. The price stays: a
// search is one read, and a result without its price would cost a second.
type SearchCard struct {
	CategoryID   string `json:"categoryId"`
	CategoryName string `json:"categoryName"`
	Name         string `json:"name"`
	PriceCents   int64  `json:"priceCents"`
	// PriceMaxCents is the highest variant price when above PriceCents
	// (ProductSummary.PriceMaxCents).
	PriceMaxCents int64  `json:"priceMaxCents,omitempty"`
	Currency      string `json:"currency"`
	ImageURL      string `json:"imageUrl"`
	// Rating is ShownRating of the product's average rating: 0 for a
	// product without reviews, else 1 to 5 in steps of a half.
	Rating float64 `json:"rating"`
	// StockStatus is the product's availability status.
	StockStatus string `json:"stockStatus,omitempty"`
}

// SearchCardOf is what a search result shows of p.
func SearchCardOf(p Product) SearchCard {
	return SearchCard{
		CategoryID: p.CategoryID, CategoryName: p.CategoryName, Name: p.Name,
		PriceCents: p.PriceCents, PriceMaxCents: priceMaxOver(p), Currency: p.Currency, ImageURL: p.ImageURL,
		Rating: ShownRating(p.ReviewStats.Average), StockStatus: p.Availability.Status,
	}
}

// ShownRating is an average rating as a search result shows it: rounded
// to the nearest half star (4.24 is 4, 4.25 is 4.5). Half stars are the
// finest a row of stars draws, and a review moves them far less often
// than it moves one decimal: the cost lab measures how often on the
// sample catalog (docs/performance.md).
func ShownRating(average float64) float64 {
	return math.Round(min(max(average, 0), 5)*2) / 2
}

// SearchTombstoneTTL is how long a tombstone stays (one day): longer than
// any feed batch is in flight, so no worker still holding an older version
// of the product can bring the entry back once it expires.
const SearchTombstoneTTL = 24 * 3600

// EntryOfProduct is p's entry under term; terms are SearchTerms(p).
func EntryOfProduct(p Product, term string, terms []string) SearchEntry {
	card := SearchCardOf(p)
	return SearchEntry{
		Meta:       Meta{ID: p.ID, Type: TypeSearchEntry, SchemaVersion: SchemaVersion},
		SearchCard: card, Term: term, Terms: terms, Rank: SearchRank(card.Rating, card.Name),
		SourceVersion: p.Version,
	}
}

// SearchFingerprint names what every entry of p holds but its own term:
// its card and its terms (the rank follows from the card). Two versions of
// a product with the same fingerprint have the same entries, so the
// second writes none. It is a hash (FNV-64a of the JSON), 16 hex digits,
// so the ledger, read before every index step, stays small; "" for a
// product with no entry to write (deleted, or of no term), which is never
// taken as shown.
func SearchFingerprint(p Product) string {
	terms := SearchTerms(p)
	if len(terms) == 0 {
		return ""
	}
	b, err := json.Marshal(struct {
		Card  SearchCard `json:"card"`
		Terms []string   `json:"terms"`
	}{SearchCardOf(p), terms})
	if err != nil {
		panic(err) // strings and numbers only: cannot fail
	}
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

// TombstoneOf marks that version of productID no longer holds term: a
// removal is a write under the same version guard as an entry, so an
// older version can never put the entry back, and it expires by its ttl.
// The search query filters on type, so tombstones are never returned.
func TombstoneOf(term, productID string, version int64) SearchEntry {
	ttl := SearchTombstoneTTL
	return SearchEntry{
		Meta:          Meta{ID: productID, Type: TypeSearchTombstone, SchemaVersion: SchemaVersion, TTL: &ttl},
		Term:          term,
		SourceVersion: version,
	}
}

// SearchRank is the order of search results, a string so one composite
// index (rank, id) serves it: the best rated first (the shown rating,
// ShownRating, in hundredths, descending), then by folded name, then (the
// index's tie break) by id. Stable across pages: a page resumes after the
// last (rank, id) returned. Built from the shown rating, the rank moves
// only when the card does, so a review that leaves the card as it was
// leaves the entries' order too.
func SearchRank(shownRating float64, name string) string {
	hundredths := int(math.Round(min(max(shownRating, 0), 5) * 100))
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
	// Shown is the SearchFingerprint of the version claimed (Version), set
	// by its claim (Widen); empty for a deleted product. The claim's
	// writes are all done once the entry under the last of the version's
	// terms holds that version or a newer one: the index step writes its
	// tombstones first, then its entries in the order of the terms, and
	// stops at the first error. A version whose fingerprint is Shown, its
	// claim's writes done, writes nothing.
	Shown string `json:"shown,omitempty"`
}

// SearchLedgerKey is the partition key of productID's ledger: a ':' never
// appears in a term, so no search reads it.
func SearchLedgerKey(productID string) string { return "product:" + productID }

// Widen claims the ledger for version, before any entry of it is written:
// it adds its terms and sets Shown to shown, the version's fingerprint.
// It reports whether anything changed; an older version than the ledger's
// changes nothing (it is not to be indexed).
func (l *SearchLedger) Widen(version int64, terms []string, shown string) bool {
	if version < l.Version {
		return false
	}
	changed := version > l.Version || l.Shown != shown
	l.Version, l.Shown = version, shown
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
