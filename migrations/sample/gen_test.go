package sample

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGenerateSampleIsDeterministic(t *testing.T) {
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	opts := Options{Products: 120, Reviews: 700, Users: 15, Categories: 12}
	a, b := generateSample(opts, now), generateSample(opts, now)
	if diff := cmp.Diff(a, b, cmp.AllowUnexported(samplePlan{})); diff != "" {
		t.Errorf("two runs with the same options differ (-first +second):\n%s", diff)
	}
	for _, rs := range a.reviews {
		for _, r := range rs {
			if age := now.Sub(r.CreatedAt); age < 0 || age > 365*24*time.Hour {
				t.Fatalf("review %s of %s is %v old, want within the past year", r.ID, r.ProductID, age)
			}
		}
	}
}

func TestAllocateReviews(t *testing.T) {
	tests := []struct {
		name             string
		products, total  int
		maxPer           int
		wantTotal        int
		minReviewedShare float64
	}{
		{"first start: most products reviewed", 240, 1500, 450, 1500, 0.8},
		{"scarce reviews gather on fewer products", 10000, 10000, 450, 10000, 0.3},
		{"fewer reviews than products: a few each", 100, 10, 450, 10, 0.03},
		{"capped by reviewers per product", 2, 1000, 50, 100, 1},
		{"no reviews", 50, 0, 450, 0, 0},
		{"no products", 0, 100, 450, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := allocateReviews(rand.New(rand.NewPCG(1, 2)), tt.products, tt.total, tt.maxPer)
			sum, reviewed := 0, 0
			for i, c := range counts {
				if c > tt.maxPer || c < 0 {
					t.Errorf("product %d gets %d reviews, want 0..%d", i, c, tt.maxPer)
				}
				sum += c
				if c > 0 {
					reviewed++
				}
			}
			if sum != tt.wantTotal {
				t.Errorf("reviews allocated = %d, want %d", sum, tt.wantTotal)
			}
			if tt.products > 0 {
				if share := float64(reviewed) / float64(tt.products); share < tt.minReviewedShare {
					t.Errorf("share of products reviewed = %.2f, want at least %.2f", share, tt.minReviewedShare)
				}
			}
		})
	}
}

func TestPickDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, k int }{{10, 10}, {10, 3}, {10000, 10}, {450, 112}, {5, 0}} {
		got := pickDistinct(rng, tc.n, tc.k)
		if len(got) != tc.k {
			t.Errorf("pickDistinct(%d, %d) returned %d numbers", tc.n, tc.k, len(got))
		}
		seen := map[int]bool{}
		for _, i := range got {
			if i < 0 || i >= tc.n || seen[i] {
				t.Errorf("pickDistinct(%d, %d) = %v: out of range or repeated", tc.n, tc.k, got)
				break
			}
			seen[i] = true
		}
	}
}

// TestSampleCopyFitsTheProduct: every sentence of a product's description
// is about its kind or its whole category, so a speaker never promises
// memory-foam cushions and a card game never comes in 1000 pieces.
func TestSampleCopyFitsTheProduct(t *testing.T) {
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	plan := generateSample(Options{Products: 600, Categories: len(sampleCategories)}, now)
	byID := map[string]sampleCategory{}
	for _, c := range sampleCategories {
		byID[c.id] = c
	}
	for _, p := range plan.products {
		c := byID[p.CategoryID]
		var kind *sampleKind
		for i, k := range c.kinds {
			if strings.Contains(p.Name, " "+k.noun+" ") {
				kind = &c.kinds[i]
			}
		}
		if kind == nil {
			t.Errorf("%s %q names no kind of %s", p.ID, p.Name, c.id)
			continue
		}
		fits := append(append([]string{}, kind.sentences...), c.sentences...)
		for _, s := range strings.SplitAfter(p.Description, ". ") {
			if s = strings.TrimSpace(s); !slices.Contains(fits, s) {
				t.Errorf("%s %q: %q is not about a %s", p.ID, p.Name, s, kind.noun)
			}
		}
	}
}
