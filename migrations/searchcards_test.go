package migrations_test

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// An entry the shop wrote before the search card (the category page's
// whole summary: averageRating, reviewCount, ratingScore) shows its
// rating in half stars once migrated, ranked by it, and a second run
// finds nothing to do.
func TestReshapeSearchEntriesOnce(t *testing.T) {
	ctx := t.Context()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		t.Fatal(err)
	}
	index := s.Container(store.ProductsByTermContainer)
	legacy := func(id, name string, average float64) {
		raw, err := json.Marshal(map[string]any{
			"id": id, "type": domain.TypeSearchEntry, "schemaVersion": 1, "term": "mug", "terms": []string{"mug"},
			"categoryId": "kitchen", "categoryName": "Kitchen", "name": name, "priceCents": 900, "currency": "USD",
			"imageUrl": "", "averageRating": average, "reviewCount": 12, "ratingScore": 3.9, "sourceVersion": 4,
			"rank": domain.SearchRank(average, name),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := index.Upsert(ctx, "mug", raw, nil); err != nil {
			t.Fatal(err)
		}
	}
	legacy("p-1", "Blue mug", 4.32)
	legacy("p-2", "Red mug", 4.4)
	current := domain.EntryOfProduct(domain.Product{Meta: domain.Meta{ID: "p-3"}, Name: "Green mug", Version: 2}, "mug", []string{"mug"})
	if _, err := repo.NewSearchIndex(s).Put(ctx, current); err != nil {
		t.Fatal(err)
	}

	var log strings.Builder
	n, err := migrations.ReshapeSearchEntries(ctx, s, &log)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("reshaped %d entries, want 2 (%s)", n, log.String())
	}
	raw, err := repo.NewSearchIndex(s).Search(ctx, []string{"mug"}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	page, err := raw.Decode()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page {
		got = append(got, e.ID)
		if e.ID != "p-3" && (e.Rating != 4.5 || e.SourceVersion != 4 || e.Rank != domain.SearchRank(4.5, e.Name)) {
			t.Errorf("%s: rating %v v%d rank %q, want 4.5 v4 %q", e.ID, e.Rating, e.SourceVersion, e.Rank, domain.SearchRank(4.5, e.Name))
		}
	}
	if want := "p-1 p-2 p-3"; strings.Join(got, " ") != want {
		t.Errorf("search mug = %v, want %s (both 4.5 stars, by name; then the unrated one)", got, want)
	}
	r, err := index.Read(ctx, "mug", "p-1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(r.Item), "reviewCount") || strings.Contains(string(r.Item), "averageRating") {
		t.Errorf("the reshaped entry still copies the review fields: %s", r.Item)
	}
	if n, err := migrations.ReshapeSearchEntries(ctx, s, io.Discard); err != nil || n != 0 {
		t.Errorf("second run reshaped %d (%v), want 0", n, err)
	}
}
