package domain_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
)

// review returns a stored review of p1 by user, daysAgo days before now.
func review(user string, rating, daysAgo int) domain.Review {
	return domain.Review{
		Meta: domain.Meta{
			ID: domain.ReviewID(user), Type: domain.TypeReview, SchemaVersion: domain.SchemaVersion,
			ETag: "\"etag-" + user + "\"", TS: 42,
		},
		ProductID: "p1",
		UserID:    user,
		UserName:  "Name of " + user,
		Rating:    rating,
		Title:     "Title by " + user,
		Body:      "Body by " + user,
		CreatedAt: now.AddDate(0, 0, -daysAgo),
	}
}

// ratings returns reviews with the given ratings, one per user, the
// first the newest.
func ratings(rs ...int) []domain.Review {
	out := make([]domain.Review, len(rs))
	for i, r := range rs {
		out[i] = review(fmt.Sprintf("u%03d", i), r, i)
	}
	return out
}

func TestComputeReviewStats(t *testing.T) {
	many := make([]int, 200)
	for i := range many {
		many[i] = 1
	}
	many[0] = 2 // 201 / 200 = 1.005
	tests := []struct {
		name    string
		reviews []domain.Review
		want    domain.ReviewStats
	}{
		{"none", nil, domain.ReviewStats{}},
		{"one", ratings(4), domain.ReviewStats{Count: 1, Average: 4, Histogram: [5]int{0, 0, 0, 1, 0}}},
		{"5,4,4 rounds to 4.33", ratings(5, 4, 4), domain.ReviewStats{Count: 3, Average: 4.33, Histogram: [5]int{0, 0, 0, 2, 1}}},
		{"5,5,4 rounds up to 4.67", ratings(5, 5, 4), domain.ReviewStats{Count: 3, Average: 4.67, Histogram: [5]int{0, 0, 0, 1, 2}}},
		{"half a hundredth rounds up", ratings(many...), domain.ReviewStats{Count: 200, Average: 1.01, Histogram: [5]int{199, 1, 0, 0, 0}}},
		{"every bucket", ratings(1, 2, 3, 4, 5, 5), domain.ReviewStats{Count: 6, Average: 3.33, Histogram: [5]int{1, 1, 1, 1, 2}}},
		{"invalid ratings ignored", ratings(0, 6, -1, 3), domain.ReviewStats{Count: 1, Average: 3, Histogram: [5]int{0, 0, 1, 0, 0}}},
		{"only invalid ratings", ratings(0, 9), domain.ReviewStats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := domain.ComputeReviewStats(tt.reviews)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeReviewStatsTopReviews(t *testing.T) {
	sameTime := func(user string) domain.Review { return review(user, 4, 1) }
	tests := []struct {
		name    string
		reviews []domain.Review
		wantIDs []string
	}{
		{"none is an empty list", nil, []string{}},
		{"fewer than five, newest first", []domain.Review{review("a", 5, 3), review("b", 4, 1), review("c", 3, 2)},
			[]string{"review-b", "review-c", "review-a"}},
		{"the five newest of seven", []domain.Review{
			review("d7", 5, 7), review("d1", 5, 1), review("d6", 5, 6), review("d2", 5, 2),
			review("d5", 5, 5), review("d3", 5, 3), review("d4", 5, 4),
		}, []string{"review-d1", "review-d2", "review-d3", "review-d4", "review-d5"}},
		{"same time: id descending", []domain.Review{sameTime("a"), sameTime("c"), sameTime("b")},
			[]string{"review-c", "review-b", "review-a"}},
		{"invalid ratings are not shown", []domain.Review{review("bad", 0, 0), review("ok", 4, 1)},
			[]string{"review-ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, top := domain.ComputeReviewStats(tt.reviews)
			if top == nil {
				t.Fatal("top reviews = nil, want a list (it encodes as [], not null)")
			}
			ids := []string{}
			for _, r := range top {
				ids = append(ids, r.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("top review ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeReviewStatsEmbeddedCopies(t *testing.T) {
	in := []domain.Review{review("a", 5, 0)}
	_, top := domain.ComputeReviewStats(in)
	want := []domain.TopReview{{
		ID:        "review-a",
		UserID:    "a",
		UserName:  "Name of a",
		Rating:    5,
		Title:     "Title by a",
		Body:      "Body by a",
		CreatedAt: now,
	}}
	if diff := cmp.Diff(want, top); diff != "" {
		t.Errorf("embedded copy (-want +got):\n%s", diff)
	}
	// The input is left alone: the caller's reviews keep their fields.
	if got, want := in[0].ProductID, "p1"; got != want {
		t.Errorf("input productId = %q, want %q", got, want)
	}
}

func TestComputeReviewStatsIsAbsolute(t *testing.T) {
	rs := ratings(5, 3, 4, 2, 5, 1, 4)
	s1, top1 := domain.ComputeReviewStats(rs)
	// Same reviews in another order (a feed may deliver them so): same result.
	rev := make([]domain.Review, len(rs))
	for i, r := range rs {
		rev[len(rs)-1-i] = r
	}
	s2, top2 := domain.ComputeReviewStats(rev)
	if diff := cmp.Diff(s1, s2); diff != "" {
		t.Errorf("stats depend on order (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(top1, top2); diff != "" {
		t.Errorf("top reviews depend on order (-first +second):\n%s", diff)
	}
	if got, want := len(top1), domain.MaxTopReviews; got != want {
		t.Errorf("top reviews = %d, want %d", got, want)
	}
}

func TestReviewID(t *testing.T) {
	if got, want := domain.ReviewID("u1"), "review-u1"; got != want {
		t.Errorf("ReviewID = %q, want %q", got, want)
	}
	if domain.ReviewID("u1") == domain.ReviewID("u2") {
		t.Error("two users share a review id")
	}
}
