package embedded

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/reference-shop/shop/store"
)

// TestQueryMemoNeverReadsBackInTime: while a writer counts a document up,
// queries that may come from the memo (several readers, the writer itself
// after each write) never see the count go down, and the writer always
// sees at least what it last wrote. A page kept from before a write, used
// after the write was seen, fails both.
func TestQueryMemoNeverReadsBackInTime(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	c := ensure(t, s, "c", nil)
	if _, err := c.Upsert(bg, "p", doc("p", "n", "kind", "count", "n", 0), nil); err != nil {
		t.Fatal(err)
	}
	q := store.Query{PartitionKey: "p", Filters: []store.Filter{{Path: "kind", Op: store.OpEqual, Value: "count"}}}
	count := func() (int, error) {
		page, err := c.Query(bg, q)
		if err != nil || len(page.Items) != 1 {
			return 0, err
		}
		var d struct{ N int }
		err = json.Unmarshal(page.Items[0], &d)
		return d.N, err
	}
	const writes = 300
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 3 {
		wg.Go(func() {
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				n, err := count()
				if err != nil {
					errs <- err.Error()
					return
				}
				if n < last {
					errs <- "a reader saw the count go back"
					return
				}
				last = n
			}
		})
	}
	for i := 1; i <= writes; i++ {
		if _, err := c.Upsert(bg, "p", doc("p", "n", "kind", "count", "n", i), nil); err != nil {
			t.Fatal(err)
		}
		if n, err := count(); err != nil || n < i {
			t.Fatalf("after writing %d the writer read %d (%v)", i, n, err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
