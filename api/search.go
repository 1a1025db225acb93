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
		terms, err := domain.ParseQuery(queryOf(r).Get("q"))
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

// searchResultView is one search result: the entry's card
// (domain.SearchCard), what the category page shows of a product but the
// review count, with the rating in half stars. The entries copy nothing
// that moves with every review, so most reviews write no entry.
type searchResultView struct {
	ID           string `json:"id"`
	CategoryID   string `json:"categoryId"`
	CategoryName string `json:"categoryName"`
	Name         string `json:"name"`
	PriceCents   int64  `json:"priceCents"`
	// PriceMaxCents: as on the category page.
	PriceMaxCents int64        `json:"priceMaxCents,omitempty"`
	Currency      string       `json:"currency"`
	ImageURL      string       `json:"imageUrl"`
	Rating        float64      `json:"rating"`
	Availability  availability `json:"availability"`
}

func viewSearchEntry(e domain.SearchEntry) searchResultView {
	c := e.SearchCard
	return searchResultView{
		ID: e.ID, CategoryID: c.CategoryID, CategoryName: c.CategoryName, Name: c.Name, PriceCents: c.PriceCents,
		PriceMaxCents: c.PriceMaxCents, Currency: c.Currency, ImageURL: c.ImageURL, Rating: c.Rating, Availability: viewAvailability(c.StockStatus),
	}
}
