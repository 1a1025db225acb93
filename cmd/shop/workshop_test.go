//go:build workshop

package main

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
)

// The workshop's checkers: each fails until its module's exercise is
// done, so they run only with the build tag (docs/workshop/README.md):
//
//	go test -tags workshop -run Workshop ./cmd/shop/

// TestWorkshop05RatingSortWalksAnIndex checks the exercise of
// docs/workshop/05-a-table-per-read-pattern.md on the shop of the
// workshop's setup (the sample catalog, 4 partitions): the category page
// sorted by rating is best first, and costs what the price sort costs,
// because both walk a composite index instead of reading the category.
func TestWorkshop05RatingSortWalksAnIndex(t *testing.T) {
	base, _ := runShop(t, shopEnv(t.TempDir(), "SHOP_SEED=true", "SHOP_PARTITIONS=4"))
	const category = "/v1/categories/books/products"

	all, _ := categoryPage(t, base+category+"?sort=price&limit=100")
	slices.SortFunc(all, func(a, b summary) int {
		return cmp.Or(cmp.Compare(b.AverageRating, a.AverageRating), cmp.Compare(b.ID, a.ID))
	})
	if len(all) < 10 {
		t.Fatalf("books holds %d products, want the sample catalog's (SHOP_SEED)", len(all))
	}
	rated, ratingRU := categoryPage(t, base+category+"?sort=rating&limit=5")
	_, priceRU := categoryPage(t, base+category+"?sort=price&limit=5")

	if got, want := ids(rated), ids(all[:5]); !slices.Equal(got, want) {
		t.Errorf("sort=rating&limit=5 = %v, want %v (averageRating descending, ties by id descending)", got, want)
	}
	if ratingRU > priceRU*1.1 {
		t.Errorf("X-Request-Charge: sort=rating&limit=5 costs %.2f RU, sort=price&limit=5 %.2f RU: "+
			"the rating page still reads the whole category (%d products) to sort it, "+
			"where the price page walks an index", ratingRU, priceRU, len(all))
	}
	t.Logf("sort=rating&limit=5: %.2f RU; sort=price&limit=5: %.2f RU", ratingRU, priceRU)
}

type summary struct {
	ID            string  `json:"id"`
	AverageRating float64 `json:"averageRating"`
}

// categoryPage GETs one page of a category and returns its items and
// X-Request-Charge, failing unless it took one store operation.
func categoryPage(t *testing.T, url string) ([]summary, float64) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if got := resp.Header.Get("X-Store-Operations"); got != "1" {
		t.Errorf("GET %s: X-Store-Operations = %s, want 1", url, got)
	}
	ru, err := strconv.ParseFloat(resp.Header.Get("X-Request-Charge"), 64)
	if err != nil {
		t.Fatalf("GET %s: X-Request-Charge: %v", url, err)
	}
	var page struct{ Items []summary }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	return page.Items, ru
}

func ids(items []summary) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = s.ID
	}
	return out
}
