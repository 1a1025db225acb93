package api

import (
	"net/http"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// handleSearch is product search: ONE single-partition query on
// productsByTerm, in the partition of the query's rarest-looking term
// (repo.PickTerm), whatever the number of words; the other words filter
// on the entry's copy of the product's terms. Every word must match (AND).
// Results are best rated first, then by name, ties by id (domain.SearchRank).
func handleSearch(index *repo.SearchIndex, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		terms, err := domain.ParseQuery(r.URL.Query().Get("q"))
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		limit, cont, err := pageParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		page, err := index.Search(r.Context(), terms, limit, cont)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writePage(w, r, rs, "searchEntry", page, viewSearchEntry)
	}
}

// viewSearchEntry is a result: the category page's product summary.
func viewSearchEntry(e domain.SearchEntry) productSummaryView {
	return viewProductSummary(e.ProductSummary)
}
