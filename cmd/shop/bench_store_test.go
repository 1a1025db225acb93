package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"shop/domain"
	"shop/migrations"
	"shop/store"
	"shop/store/embedded"
)

// Go benchmarks of the embedded store's hot paths, on the cost lab's data
// set: the operations the screens are made of, then each screen in both
// designs. Run with
//
//	go test ./cmd/shop -run '^$' -bench . -benchmem
func newBenchLab(b *testing.B) (store.Store, *labData) {
	b.Helper()
	s, _, _, closeStore, err := openLabStore(context.Background(), noEnv, 4)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeStore)
	d, err := buildLab(context.Background(), s, labOptions{
		Products: 400, Categories: 8, ReviewsPerProduct: 8, Users: 40, OrdersPerUser: 12,
		PriceChanges: 2, CartsPerProduct: 2,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, d
}

func BenchmarkStore(b *testing.B) {
	s, d := newBenchLab(b)
	ctx := context.Background()
	products := s.Container(store.ProductsContainer)
	summaries := s.Container(store.ProductsByCategoryContainer)

	b.Run("PointRead/product", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			id := d.products[i%len(d.products)].ID
			if _, err := products.Read(ctx, id, id); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// The lab's store skips fsync; the shop's does not. Both are shown:
	// on a durable store a write's time is mostly the disk's.
	durable, err := embedded.Open(filepath.Join(b.TempDir(), "durable.db"), embedded.Options{PhysicalPartitions: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { durable.Close() })
	if err := migrations.Apply(ctx, durable, nopWriter{}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    store.Store
	}{{"Replace/cart-if-match-nosync", s}, {"Replace/cart-if-match-fsync", durable}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			c := tc.s.Container(store.CartsContainer)
			user := d.users[0]
			r, err := s.Container(store.CartsContainer).Read(ctx, user, user)
			if err != nil {
				b.Fatal(err)
			}
			w, err := c.Upsert(ctx, user, r.Item, nil)
			if err != nil {
				b.Fatal(err)
			}
			etag := w.ETag
			for b.Loop() {
				w, err := c.Replace(ctx, user, user, r.Item, &store.WriteOptions{IfMatch: etag})
				if err != nil {
					b.Fatal(err)
				}
				etag = w.ETag
			}
		})
	}
	for _, tc := range []struct {
		name string
		pk   func(i int) string
	}{
		{"Query/category-page-single-partition", func(i int) string { return d.categories[i%len(d.categories)] }},
		{"Query/category-page-cross-partition", func(int) string { return "" }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q := store.Query{
					PartitionKey: tc.pk(i),
					Filters:      []store.Filter{{Path: "categoryId", Op: store.OpEqual, Value: d.categories[i%len(d.categories)]}},
					OrderBy:      "name",
					Limit:        categoryPageSize,
				}
				c := summaries
				if q.PartitionKey == "" {
					q.Filters = append(q.Filters, store.Filter{Path: "type", Op: store.OpEqual, Value: domain.TypeProduct})
					c = products
				}
				page, err := c.Query(ctx, q)
				if err != nil || len(page.Items) == 0 {
					b.Fatalf("query: %d items, %v", len(page.Items), err)
				}
				i++
			}
		})
	}
}

// BenchmarkScreens renders each screen of the cost lab in both designs:
// what the Request Unit ratios of `shop cost` mean in time and memory on
// the embedded store.
func BenchmarkScreens(b *testing.B) {
	s, d := newBenchLab(b)
	ctx := context.Background()
	for _, sc := range labScreens(store.Metered(s), d) {
		for _, des := range []design{sc.denormalized, sc.normalized} {
			b.Run(fmt.Sprintf("%s/%s", sc.name, des.name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := des.render(ctx, i); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
