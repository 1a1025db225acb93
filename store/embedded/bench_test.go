package embedded

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reference-shop/shop/store"
)

// product2KB is a product document of about 2 KB, the size of the
// product page's one point read.
func product2KB(id, category string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "type": "product", "schemaVersion": 1,
		"name": "Trail running shoe " + id, "categoryId": category, "categoryName": "Shoes",
		"description": strings.Repeat("Breathable mesh, grippy sole. ", 50),
		"priceCents":  12900, "currency": "EUR", "priceVersion": 3,
		"imageUrl":    "https://example.com/img/" + id + ".jpg",
		"reviewStats": map[string]any{"count": 12, "average": 4.25, "histogram": []int{0, 1, 1, 4, 6}},
		"lastUpdated": "2026-11-29T12:00:00Z", "version": 7,
	})
	return b
}

// cpuTime is the CPU time this process has used (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op: on a shared machine wall time per op includes
// waiting for a core, CPU time per op does not.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func benchStore(b *testing.B, opts Options) *Store {
	b.Helper()
	s, err := Open(b.TempDir()+"/bench.db", opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchContainer(b *testing.B, s *Store, pkPath string) store.Container {
	b.Helper()
	def := store.ContainerDef{ID: "c", PartitionKeyPath: pkPath, IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}}}
	if _, err := s.EnsureContainer(bg, def); err != nil {
		b.Fatal(err)
	}
	return s.Container("c")
}

// BenchmarkPointRead2KB: goal 200,000 reads/s per core (go test -cpu 1).
func BenchmarkPointRead2KB(b *testing.B) {
	s := benchStore(b, Options{})
	c := benchContainer(b, s, "/id")
	item := product2KB("p-000042", "shoes")
	if _, err := c.Create(bg, "p-000042", item); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(item)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := c.Read(bg, "p-000042", "p-000042"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
	reportCPU(b, start)
}

// BenchmarkReplace2KB replaces a 2 KB product; with fsync (the default)
// the disk's flush time dominates, NoSync shows the store's own cost.
func BenchmarkReplace2KB(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			s := benchStore(b, Options{NoSync: !sync})
			c := benchContainer(b, s, "/id")
			item := product2KB("p-1", "shoes")
			if _, err := c.Create(bg, "p-1", item); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := c.Replace(bg, "p-1", "p-1", item, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkQueryPage20: one page of 20 product summaries ordered by name,
// from a partition of 200, in a container that declares no composite
// index: the scan-and-sort plan (BenchmarkQueryPageOrdered has the index).
func BenchmarkQueryPage20(b *testing.B) {
	s := benchStore(b, Options{NoSync: true})
	c := benchContainer(b, s, "/categoryId")
	ops := []store.BatchOp{}
	for i := range 200 {
		id := fmt.Sprintf("p-%04d", i)
		item, _ := json.Marshal(map[string]any{"id": id, "categoryId": "shoes", "name": fmt.Sprintf("Shoe %03d", (i*37)%200),
			"priceCents": 1000 + i, "imageUrl": "https://example.com/" + id + ".jpg", "averageRating": 4.5, "reviewCount": i})
		ops = append(ops, store.BatchOp{Kind: store.BatchCreate, Item: item})
		if len(ops) == store.MaxBatchOps {
			if _, err := c.ExecuteBatch(bg, "shoes", ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	q := store.Query{PartitionKey: "shoes", OrderBy: "name", Limit: 20}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		p, err := c.Query(bg, q)
		if err != nil || len(p.Items) != 20 {
			b.Fatalf("%d items, %v", len(p.Items), err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkChangeFeedPage100 reads a page of 100 2 KB items of one feed
// range holding 1,000.
func BenchmarkChangeFeedPage100(b *testing.B) {
	s := benchStore(b, Options{NoSync: true, PhysicalPartitions: 1})
	c := benchContainer(b, s, "/id")
	for i := range 1000 {
		id := fmt.Sprintf("p-%04d", i)
		if _, err := c.Create(bg, id, product2KB(id, "shoes")); err != nil {
			b.Fatal(err)
		}
	}
	r := store.FeedRange{Min: "", Max: "FF"}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		p, err := c.ReadChangeFeed(bg, r, "", 100)
		if err != nil || len(p.Items) != 100 {
			b.Fatalf("%d items, %v", len(p.Items), err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkReplaceParallel: many writers at once (HTTP requests, seed
// writers, feed workers), each replacing its own 2 KB item with fsync on;
// writers=N is N goroutines per GOMAXPROCS. Concurrent commits share one
// transaction and one fsync (group commit), so throughput grows with
// writers instead of queueing on the disk.
func BenchmarkReplaceParallel(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := benchStore(b, Options{})
			c := benchContainer(b, s, "/id")
			var next atomic.Int64
			b.SetParallelism(writers)
			b.ReportAllocs()
			start := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				id := fmt.Sprintf("p-%d", next.Add(1))
				item := product2KB(id, "shoes")
				if _, err := c.Create(bg, id, item); err != nil {
					b.Error(err)
					return
				}
				for pb.Next() {
					if _, err := c.Replace(bg, id, id, item, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			reportCPU(b, start)
		})
	}
}

// BenchmarkChangeFeedLag reads the first page of 100 of a feed range
// holding 50,000 small items: a processor far behind. Its lag estimate
// (Remaining) must not cost a walk of the 49,900 entries after the page.
func BenchmarkChangeFeedLag(b *testing.B) {
	s := benchStore(b, Options{NoSync: true, PhysicalPartitions: 1})
	c := benchContainer(b, s, "/pk")
	for batch := range 500 {
		pk := fmt.Sprintf("cart-%03d", batch)
		ops := make([]store.BatchOp, store.MaxBatchOps)
		for i := range ops {
			item, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("line-%03d", i), "pk": pk, "quantity": i})
			ops[i] = store.BatchOp{Kind: store.BatchCreate, Item: item}
		}
		if _, err := c.ExecuteBatch(bg, pk, ops); err != nil {
			b.Fatal(err)
		}
	}
	r := store.FeedRange{Min: "", Max: "FF"}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		p, err := c.ReadChangeFeed(bg, r, "", 100)
		if err != nil || len(p.Items) != 100 || p.Remaining != 49900 {
			b.Fatalf("%d items, %d remaining, %v", len(p.Items), p.Remaining, err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkReplaceAfterChurn replaces one 2 KB product in a file that
// many writes have left with free pages (20,000 products created, every
// other one deleted): the case of a shop that has served for a while.
// Each commit writes bbolt's list of free pages, longer after churn.
// bbolt can skip that (NoFreelistSync: a third less CPU here, and 100 KB
// less garbage per commit), but then it rebuilds the list when it opens
// the file by reading every page, which makes the whole file resident:
// the bench's shop went from 28 MB to 228 MB when ready. Store.Open keeps
// bbolt's defaults.
func BenchmarkReplaceAfterChurn(b *testing.B) {
	s := benchStore(b, Options{NoSync: true})
	c := benchContainer(b, s, "/id")
	const n = 20000
	for i := range n {
		id := fmt.Sprintf("p-%06d", i)
		if _, err := c.Create(bg, id, product2KB(id, "shoes")); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < n; i += 2 {
		id := fmt.Sprintf("p-%06d", i)
		if _, err := c.Delete(bg, id, id, nil); err != nil {
			b.Fatal(err)
		}
	}
	item := product2KB("p-000001", "shoes")
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := c.Replace(bg, "p-000001", "p-000001", item, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}
