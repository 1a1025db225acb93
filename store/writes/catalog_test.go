package writes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// catalogClock is the clock of the catalog tests' writes.
var catalogClock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// catalog is a store with the categories books and games and the product
// p1 in books; its writes are metered, so ops tells what a call cost.
func catalog(t *testing.T) (*writes.Writes, *repo.Set) {
	t.Helper()
	st := openStore(t)
	repos := repo.New(st, 0)
	if _, err := repos.Products.UpdateCategories(t.Context(), "", func(c *domain.Categories) error {
		c.Items = []domain.Category{{ID: "books", Name: "Books", ProductCount: 1}, {ID: "games", Name: "Games"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Products.Create(t.Context(), domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Tea",
		CategoryID: "books", CategoryName: "Books", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}); err != nil {
		t.Fatal(err)
	}
	return writes.New(repo.New(store.Metered(st), 0), nil, func() time.Time { return catalogClock }), repos
}

// ops runs call with a meter and returns the store operations it made.
func ops(t *testing.T, call func(ctx context.Context) error) (int, error) {
	t.Helper()
	ctx, m := store.WithMeter(t.Context())
	err := call(ctx)
	n, _, _ := m.Totals()
	return n, err
}

func TestAddProduct(t *testing.T) {
	book := func(id, category string) domain.Product {
		return domain.Product{Meta: domain.Meta{ID: id}, Name: "Sagas", CategoryID: category, PriceCents: 900, Currency: "USD", PriceVersion: 1, Version: 1}
	}
	t.Run("copies the category's name from the index", func(t *testing.T) {
		ws, repos := catalog(t)
		var p domain.Product
		n, err := ops(t, func(ctx context.Context) (err error) {
			p, err = ws.AddProduct(ctx, book("p2", "books"), 3, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.CategoryName, "Books"; got != want {
			t.Errorf("categoryName = %q, want %q", got, want)
		}
		if !p.LastUpdated.Equal(catalogClock) {
			t.Errorf("lastUpdated = %v, want the writes' clock %v", p.LastUpdated, catalogClock)
		}
		if s, err := repos.Inventory.Stock(t.Context(), "p2", ""); err != nil || s.Available != 3 {
			t.Errorf("stock = %d (%v), want 3", s.Available, err)
		}
		if got, want := n, 4; got != want {
			t.Errorf("store operations = %d, want %d: the index, the product, the stock's read and write", got, want)
		}
	})
	t.Run("an unknown category writes nothing", func(t *testing.T) {
		ws, repos := catalog(t)
		n, err := ops(t, func(ctx context.Context) error {
			_, err := ws.AddProduct(ctx, book("p2", "nope"), 3, nil)
			return err
		})
		if e, ok := errors.AsType[*domain.Error](err); !ok || e.Code != domain.EINVALID || len(e.Fields) != 1 || e.Fields[0].Pointer != "/categoryId" {
			t.Fatalf("add = %v, want EINVALID naming /categoryId", err)
		}
		if _, err := repos.Products.Get(t.Context(), "p2"); !domain.IsCode(err, domain.ENOTFOUND) {
			t.Errorf("product after refusal: %v, want ENOTFOUND", err)
		}
		if got, want := n, 1; got != want {
			t.Errorf("store operations = %d, want %d: the index alone", got, want)
		}
	})
}

func TestUpdateProduct(t *testing.T) {
	price, games, nope := int64(700), "games", "nope"
	t.Run("a price change moves priceVersion", func(t *testing.T) {
		ws, _ := catalog(t)
		var p domain.Product
		n, err := ops(t, func(ctx context.Context) (err error) {
			p, err = ws.UpdateProduct(ctx, "p1", "", domain.ProductChange{PriceCents: &price})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if p.PriceCents != 700 || p.PriceVersion != 2 || !p.LastUpdated.Equal(catalogClock) {
			t.Errorf("updated = price %d priceVersion %d lastUpdated %v, want 700, 2, the writes' clock", p.PriceCents, p.PriceVersion, p.LastUpdated)
		}
		if got, want := n, 2; got != want {
			t.Errorf("store operations = %d, want %d: the product's read and replace", got, want)
		}
	})
	t.Run("a category change copies the new name", func(t *testing.T) {
		ws, _ := catalog(t)
		var p domain.Product
		n, err := ops(t, func(ctx context.Context) (err error) {
			p, err = ws.UpdateProduct(ctx, "p1", "", domain.ProductChange{CategoryID: &games})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if p.CategoryID != "games" || p.CategoryName != "Games" || p.PreviousCategoryID != "books" {
			t.Errorf("updated = category %q %q (was %q), want games, Games (was books)", p.CategoryID, p.CategoryName, p.PreviousCategoryID)
		}
		if got, want := n, 3; got != want {
			t.Errorf("store operations = %d, want %d: the index, the product's read and replace", got, want)
		}
	})
	t.Run("an unknown category is refused before the product is read", func(t *testing.T) {
		ws, _ := catalog(t)
		if _, err := ws.UpdateProduct(t.Context(), "missing", "", domain.ProductChange{CategoryID: &nope}); !domain.IsCode(err, domain.EINVALID) {
			t.Errorf("update = %v, want EINVALID", err)
		}
	})
	t.Run("a stale If-Match is refused and changes nothing", func(t *testing.T) {
		ws, repos := catalog(t)
		before, err := repos.Products.Get(t.Context(), "p1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.UpdateProduct(t.Context(), "p1", "", domain.ProductChange{PriceCents: &price}); err != nil {
			t.Fatal(err)
		}
		again := int64(800)
		if _, err := ws.UpdateProduct(t.Context(), "p1", before.ETag, domain.ProductChange{PriceCents: &again}); !domain.IsCode(err, domain.EPRECONDITION) {
			t.Fatalf("update with the old ETag = %v, want EPRECONDITION", err)
		}
		if p, err := repos.Products.Get(t.Context(), "p1"); err != nil || p.PriceCents != 700 {
			t.Errorf("price = %d (%v), want the first update's 700", p.PriceCents, err)
		}
	})
}

func TestDeleteProduct(t *testing.T) {
	ws, repos := catalog(t)
	n, err := ops(t, func(ctx context.Context) error { return ws.DeleteProduct(ctx, "p1", "") })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 2; got != want {
		t.Errorf("store operations = %d, want %d: the product's read and replace", got, want)
	}
	p, err := repos.Products.GetAny(t.Context(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Deleted || p.TTL == nil || *p.TTL != writes.DeletedProductTTL {
		t.Errorf("deleted product = deleted %v ttl %v, want a soft delete with ttl %d", p.Deleted, p.TTL, writes.DeletedProductTTL)
	}
	if _, err := repos.Products.Get(t.Context(), "p1"); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Errorf("get after delete = %v, want ENOTFOUND", err)
	}
	if err := ws.DeleteProduct(t.Context(), "p1", ""); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Errorf("second delete = %v, want ENOTFOUND", err)
	}
}

func TestPutCategory(t *testing.T) {
	t.Run("creates the index on first use", func(t *testing.T) {
		ws := writes.New(repo.New(openStore(t), 0), nil, func() time.Time { return catalogClock })
		c, created, err := ws.PutCategory(t.Context(), "toys", "Toys")
		if err != nil {
			t.Fatal(err)
		}
		if !created || c != (domain.Category{ID: "toys", Name: "Toys"}) {
			t.Errorf("put = %+v, created %v; want toys, created", c, created)
		}
	})
	t.Run("renames and keeps the count", func(t *testing.T) {
		ws, repos := catalog(t)
		var c domain.Category
		var created bool
		n, err := ops(t, func(ctx context.Context) (err error) {
			c, created, err = ws.PutCategory(ctx, "books", "Books & Manuals")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if created || c != (domain.Category{ID: "books", Name: "Books & Manuals", ProductCount: 1}) {
			t.Errorf("put = %+v, created %v; want the renamed books, not created", c, created)
		}
		if got, want := n, 2; got != want {
			t.Errorf("store operations = %d, want %d: the index's read and replace", got, want)
		}
		cats, err := repos.Products.Categories(t.Context())
		if err != nil || len(cats.Items) != 2 || !cats.LastUpdated.Equal(catalogClock) {
			t.Errorf("index = %d categories, lastUpdated %v (%v); want 2, the writes' clock", len(cats.Items), cats.LastUpdated, err)
		}
	})
}

func TestCreateReview(t *testing.T) {
	review := func(productID string) domain.Review {
		return domain.Review{ProductID: productID, UserID: "u1", UserName: "U", Rating: 5, Title: "Good"}
	}
	t.Run("stamps createdAt, one per user", func(t *testing.T) {
		ws, _ := catalog(t)
		var rv domain.Review
		n, err := ops(t, func(ctx context.Context) (err error) {
			rv, err = ws.CreateReview(ctx, review("p1"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rv.ID != domain.ReviewID("u1") || !rv.CreatedAt.Equal(catalogClock) {
			t.Errorf("review = id %q createdAt %v, want %q at the writes' clock", rv.ID, rv.CreatedAt, domain.ReviewID("u1"))
		}
		if got, want := n, 2; got != want {
			t.Errorf("store operations = %d, want %d: the product's read, the review's create", got, want)
		}
		if _, err := ws.CreateReview(t.Context(), review("p1")); !domain.IsCode(err, domain.ECONFLICT) {
			t.Errorf("second review = %v, want ECONFLICT", err)
		}
	})
	t.Run("of a missing product writes nothing", func(t *testing.T) {
		ws, repos := catalog(t)
		if _, err := ws.CreateReview(t.Context(), review("missing")); !domain.IsCode(err, domain.ENOTFOUND) {
			t.Fatalf("review = %v, want ENOTFOUND", err)
		}
		if page, _, err := repos.Reviews.Page(t.Context(), "missing", 10, ""); err != nil || len(page) != 0 {
			t.Errorf("reviews of the missing product = %d (%v), want none", len(page), err)
		}
	})
}
