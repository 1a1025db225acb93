package domain

import (
	"cmp"
	"math"
	"slices"
)

// MaxTopReviews bounds the reviews embedded in a product.
const MaxTopReviews = 5

// ComputeReviewStats derives a product's embedded review data from ALL its
// reviews: count, average (2 decimals), the 5-bucket histogram and the 5
// newest reviews, newest first. The feed worker writes these absolute
// values, never increments, so applying a batch twice changes nothing.
func ComputeReviewStats(reviews []Review) (ReviewStats, []Review) {
	var s ReviewStats
	sum := 0
	for _, r := range reviews {
		if r.Rating < 1 || r.Rating > 5 {
			continue
		}
		s.Count++
		sum += r.Rating
		s.Histogram[r.Rating-1]++
	}
	if s.Count > 0 {
		s.Average = math.Round(float64(sum)/float64(s.Count)*100) / 100
	}
	top := slices.Clone(reviews)
	slices.SortFunc(top, func(a, b Review) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if len(top) > MaxTopReviews {
		top = top[:MaxTopReviews]
	}
	for i := range top {
		// Embedded copies need neither their container fields nor _etag.
		top[i].Type, top[i].ProductID, top[i].ETag, top[i].TS = "", "", "", 0
	}
	if top == nil {
		top = []Review{}
	}
	return s, top
}
