package domain

import (
	"cmp"
	"slices"
)

// MaxTopReviews bounds the reviews embedded in a product.
const MaxTopReviews = 5

// ComputeReviewStats derives a product's embedded review data from ALL its
// reviews: count, average (2 decimals), the 5-bucket histogram and copies
// of the MaxTopReviews newest reviews, newest first. The feed worker
// writes these absolute values, never increments, so applying a batch
// twice changes nothing.
func ComputeReviewStats(reviews []Review) (ReviewStats, []TopReview) {
	var s ReviewStats
	sum := 0
	// Only valid ratings count, and only counted reviews are shown, so the
	// embedded top reviews never contradict the stats beside them.
	top := make([]Review, 0, len(reviews))
	for _, r := range reviews {
		if r.Rating < 1 || r.Rating > 5 {
			continue
		}
		s.Count++
		sum += r.Rating
		s.Histogram[r.Rating-1]++
		top = append(top, r)
	}
	if s.Count > 0 {
		// Rounded half up in integers: in floats 201/200 = 1.00499… and
		// would round down to 1.00 instead of 1.01.
		hundredths := (200*sum + s.Count) / (2 * s.Count)
		s.Average = float64(hundredths) / 100
	}
	slices.SortFunc(top, func(a, b Review) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if len(top) > MaxTopReviews {
		top = top[:MaxTopReviews]
	}
	copies := make([]TopReview, len(top))
	for i, r := range top {
		copies[i] = r.TopCopy()
	}
	return s, copies
}
