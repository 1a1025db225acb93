package embedded

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reference-shop/shop/store"
)

// seedCategory fills logical partition "shoes" of a productsByCategory-like
// container with n product summaries whose names are not in id order.
func seedCategory(b *testing.B, c store.Container, n int) {
	b.Helper()
	ops := make([]store.BatchOp, 0, store.MaxBatchOps)
	for i := range n {
		id := fmt.Sprintf("p-%06d", i)
		item, _ := json.Marshal(map[string]any{"id": id, "categoryId": "shoes", "type": "productSummary",
			"name": fmt.Sprintf("Shoe %06d", (i*7919)%n), "priceCents": 1000 + (i*31)%5000,
			"imageUrl": "https://example.com/" + id + ".jpg", "averageRating": 4.5, "reviewCount": i})
		ops = append(ops, store.BatchOp{Kind: store.BatchCreate, Item: item})
		if len(ops) == store.MaxBatchOps || i == n-1 {
			if _, err := c.ExecuteBatch(bg, "shoes", ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
}

// BenchmarkQueryPageOrdered: the category page (type filter, ORDER BY
// name, 20 per page) on a logical partition of 1,250 and of 10,000
// products, first page and a middle one. The container declares the
// composite index (name asc, id asc), so the page is an index walk
// (index-composite) whose cost does not grow with the partition.
func BenchmarkQueryPageOrdered(b *testing.B) {
	for _, n := range []int{1250, 10000} {
		s := benchStore(b, Options{NoSync: true})
		def := store.ContainerDef{ID: "c", PartitionKeyPath: "/categoryId", IndexingPolicy: store.IndexingPolicy{
			IncludedPaths:    []string{"/*"},
			CompositeIndexes: [][]store.CompositePath{{{Path: "/name", Order: "ascending"}, {Path: "/id", Order: "ascending"}}},
		}}
		if _, err := s.EnsureContainer(bg, def); err != nil {
			b.Fatal(err)
		}
		c := s.Container("c")
		seedCategory(b, c, n)
		q := store.Query{PartitionKey: "shoes", Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: "productSummary"}},
			OrderBy: "name", Limit: 20}
		first := q
		middle := q
		for range n / 20 / 2 {
			p, err := c.Query(bg, middle)
			if err != nil {
				b.Fatal(err)
			}
			middle.Continuation = p.Continuation
		}
		for _, page := range []struct {
			name string
			q    store.Query
		}{{"first", first}, {"middle", middle}} {
			b.Run(fmt.Sprintf("items=%d/page=%s", n, page.name), func(b *testing.B) {
				b.ReportAllocs()
				start := cpuTime()
				var ru float64
				for b.Loop() {
					p, err := c.Query(bg, page.q)
					if err != nil || len(p.Items) != 20 || p.Continuation == "" {
						b.Fatalf("%d items, %v", len(p.Items), err)
					}
					ru = p.RequestCharge
				}
				b.ReportMetric(ru, "RU/page")
				reportCPU(b, start)
			})
		}
	}
}

// BenchmarkReplaceOrdered: what keeping the order indexes costs a write.
// A product summary whose name and price change moves in both indexes
// (name, priceCents) of its container; without composite indexes there
// is nothing to move. NoSync, so the disk's flush does not hide it.
func BenchmarkReplaceOrdered(b *testing.B) {
	for _, composites := range []int{0, 2} {
		b.Run(fmt.Sprintf("composites=%d", composites), func(b *testing.B) {
			s := benchStore(b, Options{NoSync: true})
			def := store.ContainerDef{ID: "c", PartitionKeyPath: "/categoryId", IndexingPolicy: store.IndexingPolicy{
				IncludedPaths: []string{"/*"},
				CompositeIndexes: [][]store.CompositePath{
					{{Path: "/name", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
					{{Path: "/priceCents", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
				}[:composites],
			}}
			if _, err := s.EnsureContainer(bg, def); err != nil {
				b.Fatal(err)
			}
			c := s.Container("c")
			seedCategory(b, c, 1250)
			items := make([][]byte, 2)
			for i := range items {
				items[i], _ = json.Marshal(map[string]any{"id": "p-000042", "categoryId": "shoes", "type": "productSummary",
					"name": fmt.Sprintf("Renamed %d", i), "priceCents": 1000 + i, "imageUrl": "https://example.com/p.jpg"})
			}
			b.ReportAllocs()
			start := cpuTime()
			i := 0
			for b.Loop() {
				if _, err := c.Replace(bg, "shoes", "p-000042", items[i%2], nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}
