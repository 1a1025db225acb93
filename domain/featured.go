package domain

import (
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
		PriceCents: s.PriceCents, Currency: s.Currency, ImageURL: s.ImageURL,
		AverageRating: s.AverageRating, ReviewCount: s.ReviewCount, StockStatus: s.StockStatus,
	}
}

// SetFeatured replaces the featured products of one category by best
// (best first; sold-out ones are skipped, at most FeaturedPerCategory
// kept), keeping the list in the order of the index's categories and
// within MaxFeatured. It reports whether the list changed.
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
