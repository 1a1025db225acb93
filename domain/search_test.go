package domain

import "testing"

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
	fp := func(p Product) string { return SearchFingerprint(SearchCardOf(p), SearchTerms(p)) }
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
}

// The claim clears Shown (the entries are about to change), and only the
// settle of the claimed version sets it again.
func TestSearchLedgerShownFollowsTheWrites(t *testing.T) {
	l := SearchLedger{Version: 3, Terms: []string{"mug"}, Shown: "a"}
	if l.Widen(2, []string{"mug"}) || l.Shown != "a" {
		t.Fatalf("an older version changed the ledger: %+v", l)
	}
	if !l.Widen(3, []string{"mug"}) || l.Shown != "" {
		t.Fatalf("a claim of the settled version (a repair) left Shown: %+v", l)
	}
	if !l.Widen(4, []string{"mug", "cup"}) || l.Version != 4 {
		t.Fatalf("claim of v4: %+v", l)
	}
	if l.Settle(3, nil, nil, "b") || l.Shown != "" {
		t.Fatalf("v3 settled a ledger v4 claimed: %+v", l)
	}
	if !l.Settle(4, nil, nil, "c") || l.Shown != "c" {
		t.Fatalf("v4's settle: %+v", l)
	}
	if l.Settle(4, nil, nil, "c") {
		t.Errorf("settling twice changed the ledger")
	}
}
