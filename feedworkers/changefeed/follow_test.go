package changefeed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
)

// TestFollow: two followers of one container (two processes) each see
// every change written after Follow returned, none written before, and
// go on through a split of their feed ranges; they write no lease.
func TestFollow(t *testing.T) {
	raw, st := openStore(t)
	products := st.Container(store.ProductsContainer)
	before := writeThings(t, st, "before", 5)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	followers := []*deliveries{{n: map[string]int{}}, {n: map[string]int{}}}
	for _, d := range followers {
		if err := changefeed.Follow(ctx, products, 10*time.Millisecond, func(items [][]byte) {
			_ = d.handler(ctx, items)
		}); err != nil {
			t.Fatal(err)
		}
	}
	first := writeThings(t, st, "first", 20)
	for i, d := range followers {
		eventually(t, 5*time.Second, fmt.Sprintf("follower %d sees the first writes", i), func() (bool, string) { return d.has(first) })
	}
	splitProducts(t, raw, st)
	second := writeThings(t, st, "second", 20)
	for i, d := range followers {
		eventually(t, 5*time.Second, fmt.Sprintf("follower %d sees the writes after the split", i), func() (bool, string) { return d.has(second) })
		for _, id := range before {
			if n := d.count(id); n != 0 {
				t.Errorf("follower %d got %s, written before it started, %d times", i, id, n)
			}
		}
	}
	page, err := st.Container(store.LeasesContainer).Query(t.Context(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 {
		t.Errorf("the lease container holds %d documents, want none: a follower keeps its positions in memory", len(page.Items))
	}
}
