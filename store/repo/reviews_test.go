package repo_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

func newReview(productID, userID string, rating int, at time.Time) domain.Review {
	return domain.Review{
		ProductID: productID,
		UserID:    userID,
		UserName:  "Name of " + userID,
		Rating:    rating,
		Title:     "Title by " + userID,
		Body:      "Body by " + userID,
		CreatedAt: at,
	}
}

// createReviews writes n reviews of productID, one a minute, user u000 first.
func createReviews(t *testing.T, reviews *repo.Reviews, productID string, n int) {
	t.Helper()
	for i := range n {
		rv := newReview(productID, fmt.Sprintf("u%03d", i), 1+i%5, now.Add(time.Duration(i)*time.Minute))
		if _, err := reviews.Create(t.Context(), rv); err != nil {
			t.Fatalf("review %d: %v", i, err)
		}
	}
}

func TestReviewsCreate(t *testing.T) {
	ctx := t.Context()
	reviews := repo.NewReviews(newStore(t))
	created, err := reviews.Create(ctx, newReview("p1", "u1", 5, now))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := created.ID, domain.ReviewID("u1"); got != want {
		t.Errorf("id = %q, want %q", got, want)
	}
	if got, want := created.Type, domain.TypeReview; got != want {
		t.Errorf("type = %q, want %q", got, want)
	}

	_, err = reviews.Create(ctx, newReview("p1", "u1", 1, now.Add(time.Hour)))
	wantCode(t, "a second review by the same user", err, domain.ECONFLICT)

	if _, err := reviews.Create(ctx, newReview("p2", "u1", 3, now)); err != nil {
		t.Errorf("the same user reviewing another product: %v", err)
	}
	all, err := reviews.All(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Rating != 5 {
		t.Errorf("reviews of p1 = %+v, want the first review only", all)
	}
}

// A review is a document like any other: the one stored, not only the one
// returned, names its type and schema version.
func TestReviewsCreateStoresTypeAndSchemaVersion(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	created, err := repo.NewReviews(s).Create(ctx, newReview("p1", "u1", 5, now))
	if err != nil {
		t.Fatal(err)
	}
	if created.Type != domain.TypeReview || created.SchemaVersion != domain.SchemaVersion {
		t.Errorf("created review: type %q, schemaVersion %d; want %q, %d",
			created.Type, created.SchemaVersion, domain.TypeReview, domain.SchemaVersion)
	}
	r, err := s.Container(store.ReviewsContainer).Read(ctx, "p1", domain.ReviewID("u1"))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := repo.Decode[map[string]any](r.Item)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stored["type"], domain.TypeReview; got != want {
		t.Errorf("stored type = %v, want %q", got, want)
	}
	if got, want := stored["schemaVersion"], float64(domain.SchemaVersion); got != want {
		t.Errorf("stored schemaVersion = %v, want %v", got, want)
	}
}

func TestReviewsPageNewestFirst(t *testing.T) {
	ctx := t.Context()
	reviews := repo.NewReviews(newStore(t))
	const n = 45
	createReviews(t, reviews, "p1", n)
	createReviews(t, reviews, "p2", 3)

	var got []string
	var sizes []int
	cont := ""
	for {
		page, next, err := reviews.Page(ctx, "p1", 20, cont)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page))
		for _, rv := range page {
			if rv.ProductID != "p1" {
				t.Fatalf("review of %q on p1's page", rv.ProductID)
			}
			got = append(got, rv.UserID)
		}
		if next == "" {
			break
		}
		if len(sizes) > n {
			t.Fatal("continuation never ends")
		}
		cont = next
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("u%03d", n-1-i)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reviews across pages, newest first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{20, 20, 5}, sizes); diff != "" {
		t.Errorf("page sizes (-want +got):\n%s", diff)
	}
}

func TestReviewsDeleteAll(t *testing.T) {
	ctx := t.Context()
	reviews := repo.NewReviews(newStore(t))
	const n = 250 // more than two transactional batches of 100
	createReviews(t, reviews, "p1", n)
	createReviews(t, reviews, "p2", 4)

	deleted, err := reviews.DeleteAll(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := deleted, n; got != want {
		t.Errorf("deleted = %d, want %d", got, want)
	}
	left, err := reviews.All(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(left); got != 0 {
		t.Errorf("reviews of p1 left = %d, want 0", got)
	}
	other, err := reviews.All(ctx, "p2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(other), 4; got != want {
		t.Errorf("reviews of p2 = %d, want %d (another partition is untouched)", got, want)
	}
	again, err := reviews.DeleteAll(ctx, "p1")
	if err != nil || again != 0 {
		t.Errorf("DeleteAll of an empty partition = %d, %v; want 0, nil", again, err)
	}
}

func TestReviewsAllFeedsComputeReviewStats(t *testing.T) {
	ctx := t.Context()
	reviews := repo.NewReviews(newStore(t))
	createReviews(t, reviews, "p1", 12)
	all, err := reviews.All(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	stats, top := domain.ComputeReviewStats(all)
	// Ratings cycle 1..5 over 12 reviews: 1,2,3,4,5,1,2,3,4,5,1,2.
	want := domain.ReviewStats{Count: 12, Average: 2.75, Histogram: [5]int{3, 3, 2, 2, 2}}
	if diff := cmp.Diff(want, stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if got, want := len(top), domain.MaxTopReviews; got != want {
		t.Fatalf("top reviews = %d, want %d", got, want)
	}
	if got, want := top[0].UserID, "u011"; got != want {
		t.Errorf("newest top review by %q, want %q", got, want)
	}
}
