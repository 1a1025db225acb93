package embedded

import (
	"fmt"
	"sync"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// TestManyGoroutines runs readers, writers, patchers, batches, queries and
// feed readers against one container at once (run with -race); every
// patch increment must land exactly once.
func TestManyGoroutines(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	c := ensure(t, s, "c", ttlOf(-1))
	if _, err := c.Create(bg, "hot", doc("hot", "counter", "n", 0)); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*6)
	run := func(f func(w, i int) error) {
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					if err := f(w, i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	run(func(w, i int) error {
		_, err := c.Patch(bg, "hot", "counter", []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: 1}}, nil)
		return err
	})
	run(func(w, i int) error {
		pk := fmt.Sprintf("w%d", w)
		_, err := c.Upsert(bg, pk, doc(pk, fmt.Sprintf("i%d", i%5), "i", i), nil)
		return err
	})
	run(func(w, i int) error {
		_, err := c.Read(bg, "hot", "counter")
		return err
	})
	run(func(w, i int) error {
		pk := fmt.Sprintf("b%d", w)
		_, err := c.ExecuteBatch(bg, pk, []store.BatchOp{
			{Kind: store.BatchUpsert, Item: doc(pk, "x", "i", i)},
			{Kind: store.BatchUpsert, Item: doc(pk, "y", "i", i)},
		})
		return err
	})
	run(func(w, i int) error {
		_, err := c.Query(bg, store.Query{PartitionKey: fmt.Sprintf("w%d", w), OrderBy: "i", Limit: 10})
		return err
	})
	run(func(w, i int) error {
		ranges, err := c.ReadFeedRanges(bg)
		if err != nil {
			return err
		}
		_, err = c.ReadChangeFeed(bg, ranges[(w+i)%len(ranges)], "", 50)
		return err
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r, err := c.Read(bg, "hot", "counter")
	if err != nil {
		t.Fatal(err)
	}
	got, err := repo.Decode[map[string]any](r.Item)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(workers * rounds); got["n"] != want {
		t.Errorf("counter = %v after %v concurrent increments", got["n"], want)
	}
	if _, err := c.Read(bg, "w0", "i4"); domain.ErrorCode(err) != "" {
		t.Errorf("upserted item: %v", err)
	}
}
