package domain

import (
	"cmp"
	"math"
	"slices"
)

// The home page's featured products: the best-rated of each category,
// copied into the categories index document (Categories.Featured) by the
// products feed, so the home page stays ONE point read. The list is
// bounded: the document is read on every visit to the home page, and its
// Request Units grow with its size.
const (
	// FeaturedPerCategory is how many products each category features.
	FeaturedPerCategory = 2
	// MaxFeatured bounds the whole list, however many categories there are.
	MaxFeatured = 24
	// ratingPrior and priorWeight pull a product with few reviews
	// towards an average rating: one 5-star review does not outrank
	// forty reviews averaging 4.8.
	ratingPrior = 3.0
	priorWeight = 5.0
)

// FeaturedProduct is a product's copy in Categories.Featured: what the
// home page shows of it, and no more. A copy, not a document: no Meta.
type FeaturedProduct struct {
	ID            string  `json:"id"`
	CategoryID    string  `json:"categoryId"`
	CategoryName  string  `json:"categoryName"`
	Name          string  `json:"name"`
	PriceCents    int64   `json:"priceCents"`
	PriceMaxCents int64   `json:"priceMaxCents,omitempty"`
	Currency      string  `json:"currency"`
	ImageURL      string  `json:"imageUrl"`
	AverageRating float64 `json:"averageRating"`
	ReviewCount   int     `json:"reviewCount"`
	StockStatus   string  `json:"stockStatus,omitempty"`
}

// RatingScore ranks products for the featured list: the average rating
// with priorWeight reviews of ratingPrior added (a Bayesian average),
// rounded so that the stored value compares the same everywhere.
func RatingScore(s ReviewStats) float64 {
	score := (s.Average*float64(s.Count) + ratingPrior*priorWeight) / (float64(s.Count) + priorWeight)
	return math.Round(score*1e4) / 1e4
}

// FeaturedOf is the copy of a summary the categories index features.
func FeaturedOf(s ProductSummary) FeaturedProduct {
	return FeaturedProduct{
		ID: s.ID, CategoryID: s.CategoryID, CategoryName: s.CategoryName, Name: s.Name,
		PriceCents: s.PriceCents, PriceMaxCents: s.PriceMaxCents, Currency: s.Currency, ImageURL: s.ImageURL,
		AverageRating: s.AverageRating, ReviewCount: s.ReviewCount, StockStatus: s.StockStatus,
	}
}

// SetFeatured replaces the featured products of one category by best
// (best first, as ProductSummaries.Best ranks them; sold-out ones are
// skipped, at most FeaturedPerCategory kept). It reports whether the list
// changed.
func (c *Categories) SetFeatured(categoryID string, best []ProductSummary) bool {
	var mine []FeaturedProduct
	for _, s := range best {
		if len(mine) == FeaturedPerCategory {
			break
		}
		if s.StockStatus != SoldOut {
			mine = append(mine, FeaturedOf(s))
		}
	}
	return c.setCategory(categoryID, mine)
}

// PlaceFeatured puts the change of p (its current version) into its
// category's featured list when the list alone can tell where it goes,
// without looking at the category's other products: a featured product
// that scores no less than before is updated in place, and one that was
// not featured enters when it ranks above the last one of a full list.
// It reports settled false when only a new ranking of the whole category
// can tell (ProductSummaries.Best): a featured product fell, sold out or
// went, or the list is not full.
func (c *Categories) PlaceFeatured(p Product) (changed, settled bool) {
	var mine []FeaturedProduct
	for _, f := range c.Featured {
		if f.CategoryID == p.CategoryID {
			mine = append(mine, f)
		}
	}
	eligible := !p.Deleted && p.Availability.Status != SoldOut
	score := RatingScore(p.ReviewStats)
	copyOfP := FeaturedOf(SummaryOfProduct(p))
	switch i := slices.IndexFunc(mine, func(f FeaturedProduct) bool { return f.ID == p.ID }); {
	case i >= 0 && (!eligible || score < featuredScore(mine[i])):
		return false, false
	case i >= 0:
		mine[i] = copyOfP
	case !eligible:
		return false, true
	case len(mine) < FeaturedPerCategory:
		return false, false
	case compareRank(copyOfP, mine[len(mine)-1]) >= 0:
		return false, true
	default:
		mine[len(mine)-1] = copyOfP
	}
	slices.SortStableFunc(mine, compareRank)
	return c.setCategory(p.CategoryID, mine), true
}

// featuredScore is the ranking score of a featured copy, the same as its
// summary's (RatingScore of the same stats).
func featuredScore(f FeaturedProduct) float64 {
	return RatingScore(ReviewStats{Count: f.ReviewCount, Average: f.AverageRating})
}

// compareRank orders featured products as the featured query does: by
// score, then by id, both descending. Negative: a ranks above b.
func compareRank(a, b FeaturedProduct) int {
	if c := cmp.Compare(featuredScore(b), featuredScore(a)); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// setCategory replaces the featured products of one category by mine,
// keeping the list in the order of the index's categories and within
// MaxFeatured. It reports whether the list changed.
func (c *Categories) setCategory(categoryID string, mine []FeaturedProduct) bool {
	var out []FeaturedProduct
	for _, cat := range c.Items {
		if cat.ID == categoryID {
			out = append(out, mine...)
			continue
		}
		for _, f := range c.Featured {
			if f.CategoryID == cat.ID {
				out = append(out, f)
			}
		}
	}
	if len(out) > MaxFeatured {
		out = out[:MaxFeatured]
	}
	if slices.Equal(out, c.Featured) {
		return false
	}
	c.Featured = out
	return true
}
