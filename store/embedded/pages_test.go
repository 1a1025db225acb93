package embedded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// TestCrossPartitionPagesAreFull: the contract lets a cross-partition page
// hold fewer items than its limit, as Cosmos may; the embedded store,
// which merges its simulated partitions into one page, holds itself to
// full pages, the last one alone short.
func TestCrossPartitionPagesAreFull(t *testing.T) {
	ctx := context.Background()
	s := open(t, embedded.Options{PhysicalPartitions: 4})
	def := store.ContainerDef{ID: "things", PartitionKeyPath: "/pk", IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}}}
	if _, err := s.EnsureContainer(ctx, def); err != nil {
		t.Fatal(err)
	}
	c := s.Container("things")
	const items, limit = 23, 5
	for i := range items {
		pk := fmt.Sprintf("k%d", i%7)
		if _, err := c.Create(ctx, pk, fmt.Appendf(nil, `{"id":"i%02d","pk":%q}`, i, pk)); err != nil {
			t.Fatal(err)
		}
	}
	q := store.Query{Limit: limit}
	var sizes []int
	for {
		p, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(p.Items))
		if p.Continuation == "" {
			break
		}
		q.Continuation = p.Continuation
	}
	if got, want := fmt.Sprint(sizes), "[5 5 5 5 3]"; got != want {
		t.Errorf("page sizes %s, want %s", got, want)
	}
}
