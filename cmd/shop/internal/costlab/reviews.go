package costlab

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	samplecatalog "github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// searchReviews is how many reviews the review measure writes.
const searchReviews = 200

// reviewWrites says what the reviews of the review measure did to the
// rating a search result shows.
type reviewWrites struct {
	Reviews int `json:"reviews"`
	// MovedStars moved the rating to another half star
	// (domain.ShownRating): their index step rewrote the product's
	// entries.
	MovedStars int `json:"movedStars"`
	// MovedDecimal moved the average's first decimal: the reviews that
	// would rewrite the entries if a result showed one decimal.
	MovedDecimal int `json:"movedOneDecimal"`
}

// measureReviewWrites copies the sample catalog (migrations/sample: its
// names, tags and review stats) into the store, indexes it (not
// measured), then writes n reviews, each on a product drawn in proportion
// to its reviews plus one (popular products get more, an unreviewed one
// may get its first), its rating one of the product's earlier ratings
// drawn at random (1 to 5 stars for a product without reviews), the
// product's stats recomputed from them as the reviews feed does
// (domain.ComputeReviewStats), and measures the product write and the
// products feed's index step (feedworkers.Handlers.ProductToSearch) of
// each. It returns two rows, the reviews that left the stars as they were
// and all of them, and what the reviews did to the stars.
func measureReviewWrites(ctx context.Context, ms store.Store, n int) ([]searchWrite, reviewWrites, error) {
	var rw reviewWrites
	repos := repo.New(ms, 0)
	h := feedworkers.NewHandlers(ms, writes.New(repo.New(ms, 0), nil, nil), feedworkers.HandlersConfig{})
	catalog, err := samplecatalog.Products(samplecatalog.Options{})
	if err != nil {
		return nil, rw, err
	}
	for i, p := range catalog {
		p.ID = "review-" + p.ID
		if catalog[i], err = repos.Products.Create(ctx, p); err != nil {
			return nil, rw, err
		}
		if err := h.ProductToSearch(ctx, catalog[i]); err != nil {
			return nil, rw, fmt.Errorf("index %s: %w", p.ID, err)
		}
	}
	rng := rand.New(rand.NewPCG(32, 3)) // the same reviews on every run
	kept, all := searchWrite{}, searchWrite{}
	for range n {
		i := pickByReviews(rng, catalog)
		before := catalog[i].ReviewStats
		stats := withReview(before, ratingLike(rng, before))
		var p domain.Product
		write, err := once(ctx, func(ctx context.Context, _ int) error {
			p, err = repos.Products.Update(ctx, catalog[i].ID, "", func(p *domain.Product) error {
				p.ReviewStats = stats
				p.Version++
				return nil
			})
			return err
		}, 0)
		if err != nil {
			return nil, rw, err
		}
		catalog[i] = p
		index, err := once(ctx, func(ctx context.Context, _ int) error { return h.ProductToSearch(ctx, p) }, 0)
		if err != nil {
			return nil, rw, err
		}
		rw.Reviews++
		if math.Round(before.Average*10) != math.Round(stats.Average*10) {
			rw.MovedDecimal++
		}
		row := []*searchWrite{&all}
		if domain.ShownRating(before.Average) != domain.ShownRating(stats.Average) {
			rw.MovedStars++
			all.TermDocs += float64(len(domain.SearchTerms(p)))
		} else {
			row = append(row, &kept)
		}
		for _, w := range row {
			w.ProductRU += write.ru
			w.StoreOps += float64(index.ops)
			w.RequestUnits += index.ru
		}
	}
	mean := func(w searchWrite, of int) searchWrite {
		d := float64(max(of, 1))
		return searchWrite{Kind: w.Kind, Change: w.Change, ProductRU: report.Round2(w.ProductRU / d), TermDocs: report.Round2(w.TermDocs / d),
			StoreOps: report.Round2(w.StoreOps / d), RequestUnits: report.Round2(w.RequestUnits / d)}
	}
	kept.Kind, all.Kind = "review-kept", "review"
	kept.Change = fmt.Sprintf("a review that leaves the stars as they were (%d of the %d below)", rw.Reviews-rw.MovedStars, rw.Reviews)
	all.Change = fmt.Sprintf("a review on the sample catalog (%d reviews, %d moved the stars: %.0f%%)", rw.Reviews, rw.MovedStars, 100*float64(rw.MovedStars)/float64(max(rw.Reviews, 1)))
	rows := []searchWrite{mean(kept, rw.Reviews-rw.MovedStars), mean(all, rw.Reviews)}
	if n == searchReviews {
		for i := range rows {
			rows[i].Before = beforeOf(rows[i].Kind)
		}
	}
	return rows, rw, nil
}

// pickByReviews draws a product in proportion to its reviews plus one.
func pickByReviews(rng *rand.Rand, catalog []domain.Product) int {
	total := 0
	for _, p := range catalog {
		total += p.ReviewStats.Count + 1
	}
	x := rng.IntN(total)
	for i, p := range catalog {
		if x -= p.ReviewStats.Count + 1; x < 0 {
			return i
		}
	}
	return len(catalog) - 1
}

// ratingLike draws one of the ratings s counts, or 1 to 5 stars when it
// counts none.
func ratingLike(rng *rand.Rand, s domain.ReviewStats) int {
	if s.Count == 0 {
		return 1 + rng.IntN(5)
	}
	x := rng.IntN(s.Count)
	for r, n := range s.Histogram {
		if x -= n; x < 0 {
			return r + 1
		}
	}
	return 5
}

// withReview is s with one more review of rating, computed as the reviews
// feed computes a product's stats from its reviews.
func withReview(s domain.ReviewStats, rating int) domain.ReviewStats {
	reviews := []domain.Review{{Rating: rating}}
	for r, n := range s.Histogram {
		for range n {
			reviews = append(reviews, domain.Review{Rating: r + 1})
		}
	}
	stats, _ := domain.ComputeReviewStats(reviews)
	return stats
}
