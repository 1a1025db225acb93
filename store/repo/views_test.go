package repo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

func TestProductSummariesPutVersionGuard(t *testing.T) {
	ctx := t.Context()
	views := repo.NewProductSummaries(newStore(t))
	at := func(version, price int64) domain.ProductSummary {
		p := newProduct("p1", price)
		p.Version = version
		return domain.SummaryOfProduct(p)
	}
	steps := []struct {
		name      string
		put       domain.ProductSummary
		wantWrote bool
		wantPrice int64
	}{
		{"first copy", at(2, 200), true, 200},
		{"older version does not overwrite", at(1, 100), false, 200},
		{"same version again is a no-op", at(2, 999), false, 200},
		{"newer version overwrites", at(5, 500), true, 500},
		{"late version in between does not", at(4, 400), false, 500},
	}
	for _, st := range steps {
		wrote, err := views.Put(ctx, st.put)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if wrote != st.wantWrote {
			t.Errorf("%s: wrote = %v, want %v", st.name, wrote, st.wantWrote)
		}
		got, err := views.Get(ctx, "coffee", "p1")
		if err != nil {
			t.Fatal(err)
		}
		if got.PriceCents != st.wantPrice {
			t.Errorf("%s: stored price = %d, want %d", st.name, got.PriceCents, st.wantPrice)
		}
	}
}

func TestProductSummariesPageAndIDs(t *testing.T) {
	ctx := t.Context()
	views := repo.NewProductSummaries(newStore(t))
	for _, p := range []struct {
		id, name string
		price    int64
		rating   float64
	}{{"p1", "Cold Brew Kit", 3500, 4.5}, {"p2", "Aeropress", 2999, 3}, {"p3", "Burr Grinder", 8900, 4.5}, {"p4", "Chemex", 2999, 4.8}} {
		pr := newProduct(p.id, p.price)
		pr.Name = p.name
		pr.ReviewStats.Average = p.rating
		if _, err := views.Put(ctx, domain.SummaryOfProduct(pr)); err != nil {
			t.Fatal(err)
		}
	}
	other := newProduct("k1", 100)
	other.CategoryID = "kitchen"
	if _, err := views.Put(ctx, domain.SummaryOfProduct(other)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sort string
		want []string
	}{
		{repo.SortByName, []string{"p2", "p3", "p4", "p1"}},
		{repo.SortByPrice, []string{"p2", "p4", "p1", "p3"}},  // ties by id
		{repo.SortByRating, []string{"p4", "p3", "p1", "p2"}}, // best first, ties by id descending
	}
	for _, tt := range tests {
		t.Run(tt.sort, func(t *testing.T) {
			var ids []string
			cont := ""
			for range 10 {
				page, next, err := summaryPage(ctx, views, "coffee", tt.sort, 3, cont)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range page {
					ids = append(ids, s.ID)
				}
				if next == "" {
					break
				}
				cont = next
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
	_, _, err := summaryPage(ctx, views, "coffee", repo.SortByRating, 3, "not-an-offset")
	wantCode(t, "rating page with a foreign continuation", err, domain.EINVALID)
	ids, err := views.IDs(ctx, "coffee")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ids), 4; got != want {
		t.Errorf("ids in coffee = %v, want %d of them", ids, want)
	}
	if err := views.Delete(ctx, "coffee", "p1"); err != nil {
		t.Fatal(err)
	}
	if err := views.Delete(ctx, "coffee", "p1"); err != nil {
		t.Errorf("second Delete: %v, want nil (idempotent)", err)
	}
	_, err = views.Get(ctx, "coffee", "p1")
	wantCode(t, "Get after Delete", err, domain.ENOTFOUND)
}

func TestOrderSummariesPutVersionGuard(t *testing.T) {
	ctx := t.Context()
	views := repo.NewOrderSummaries(newStore(t))
	o := newOrder(t, "u1", "o1", 1000, now)
	o.Version = 3
	if wrote, err := views.Put(ctx, domain.SummaryOf(o, views.Buckets())); err != nil || !wrote {
		t.Fatalf("first Put = %v, %v; want true, nil", wrote, err)
	}
	older := o
	older.Version, older.TotalCents = 2, 1
	if wrote, err := views.Put(ctx, domain.SummaryOf(older, views.Buckets())); err != nil || wrote {
		t.Errorf("Put of an older version = %v, %v; want false, nil", wrote, err)
	}
	got, err := views.Get(ctx, views.Key(o.Status, o), "o1")
	if err != nil {
		t.Fatal(err)
	}
	if got.SourceVersion != 3 || got.TotalCents != 1000 {
		t.Errorf("stored summary v%d %d cents, want v3 1000", got.SourceVersion, got.TotalCents)
	}
	page, _, err := views.DayPage(ctx, domain.StatusPlaced, now, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || page[0].ID != "o1" {
		t.Errorf("placed orders of the day = %+v, want o1", page)
	}
}

// TestCategoryPagesKeepTheirPlace: a client walking a category page by
// page meets every product nobody touched exactly once, whatever the sort,
// even when a product it was already shown is deleted and another is
// added before its place between two pages.
func TestCategoryPagesKeepTheirPlace(t *testing.T) {
	for _, sort := range []string{repo.SortByName, repo.SortByPrice, repo.SortByRating} {
		t.Run(sort, func(t *testing.T) {
			ctx := t.Context()
			views := repo.NewProductSummaries(newStore(t))
			put := func(id string, price int64, rating float64) {
				pr := newProduct(id, price)
				pr.Name = "Product " + id
				pr.ReviewStats.Average = rating
				if _, err := views.Put(ctx, domain.SummaryOfProduct(pr)); err != nil {
					t.Fatal(err)
				}
			}
			for i, rating := range []float64{4.9, 4.5, 4.1, 3.7, 3.3, 2.9} {
				put(fmt.Sprintf("p%d", i+1), int64(1000+100*i), rating)
			}
			page, next, err := summaryPage(ctx, views, "coffee", sort, 2, "")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, s := range page {
				seen[s.ID]++
			}
			// After the first page the first product shown goes; after
			// the second a new one that sorts first comes.
			if err := views.Delete(ctx, "coffee", page[0].ID); err != nil {
				t.Fatal(err)
			}
			for n := 2; next != ""; n++ {
				if page, next, err = summaryPage(ctx, views, "coffee", sort, 2, next); err != nil {
					t.Fatal(err)
				}
				for _, s := range page {
					seen[s.ID]++
				}
				if n == 2 {
					put("a0", 500, 5)
				}
			}
			for i := 1; i <= 6; i++ {
				if id := fmt.Sprintf("p%d", i); seen[id] != 1 {
					t.Errorf("%s seen %d times, want once (seen: %v)", id, seen[id], seen)
				}
			}
		})
	}
}

// summaryPage is ProductSummaries.Page decoded.
func summaryPage(ctx context.Context, views *repo.ProductSummaries, categoryID, sort string, limit int, cont string) ([]domain.ProductSummary, string, error) {
	page, err := views.Page(ctx, categoryID, sort, nil, limit, cont)
	if err != nil {
		return nil, "", err
	}
	items, err := page.Decode()
	return items, page.Next, err
}
