package domain

import (
	"slices"
	"testing"
)

func TestShownRatingIsHalfStars(t *testing.T) {
	for _, tc := range []struct{ average, want float64 }{
		{0, 0}, {1, 1}, {1.24, 1}, {1.25, 1.5}, {4.24, 4}, {4.25, 4.5}, {4.32, 4.5}, {4.74, 4.5}, {4.75, 5}, {5, 5}, {7, 5},
	} {
		if got := ShownRating(tc.average); got != tc.want {
			t.Errorf("ShownRating(%v) = %v, want %v", tc.average, got, tc.want)
		}
	}
}

// A search entry copies what the result shows: a review that keeps the
// rating in the same half star changes neither the card nor the
// fingerprint; one that moves it, or a price change, changes both.
func TestSearchFingerprintFollowsTheCard(t *testing.T) {
	p := Product{Meta: Meta{ID: "p-1"}, Name: "Blue mug", CategoryName: "Kitchen", PriceCents: 900,
		ReviewStats: ReviewStats{Count: 4, Average: 4.44}}
	fp := SearchFingerprint
	base := fp(p)
	same := p
	same.ReviewStats = ReviewStats{Count: 5, Average: 4.32}
	same.Version = 7
	if fp(same) != base {
		t.Errorf("a review within the half star changed the fingerprint")
	}
	for name, change := range map[string]func(*Product){
		"rating":  func(p *Product) { p.ReviewStats.Average = 4.2 },
		"price":   func(p *Product) { p.PriceCents = 1000 },
		"stock":   func(p *Product) { p.Availability.Status = SoldOut },
		"tag":     func(p *Product) { p.Tags = []string{"gift"} },
		"picture": func(p *Product) { p.ImageURL = "/img/2.png" },
	} {
		q := p
		change(&q)
		if fp(q) == base {
			t.Errorf("a %s change left the fingerprint as it was", name)
		}
	}
	gone := p
	gone.Deleted = true
	if got := fp(gone); got != "" {
		t.Errorf("a deleted product's fingerprint = %q, want none: it has no entry to show", got)
	}
}

// The claim records the version's fingerprint; an older version changes
// nothing, and the settle of a version another has claimed since leaves
// the ledger to that one.
func TestSearchLedgerClaims(t *testing.T) {
	l := SearchLedger{Version: 3, Terms: []string{"mug"}, Shown: "a"}
	if l.Widen(2, []string{"mug", "cup"}, "b") || l.Shown != "a" || len(l.Terms) != 1 {
		t.Fatalf("an older version changed the ledger: %+v", l)
	}
	if l.Widen(3, []string{"mug"}, "a") {
		t.Fatalf("claiming the claimed version again changed the ledger: %+v", l)
	}
	if !l.Widen(4, []string{"cup"}, "c") || l.Version != 4 || l.Shown != "c" || !slices.Equal(l.Terms, []string{"mug", "cup"}) {
		t.Fatalf("claim of v4: %+v, want v4 showing c, naming mug and cup", l)
	}
	if l.Settle(3, []string{"mug"}, nil) || len(l.Terms) != 2 {
		t.Fatalf("v3 settled a ledger v4 claimed: %+v", l)
	}
	if !l.Settle(4, []string{"mug"}, nil) || !slices.Equal(l.Terms, []string{"cup"}) {
		t.Fatalf("v4's settle: %+v, want it naming cup alone", l)
	}
}
