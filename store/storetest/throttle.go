package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Throttler is a store whose provisioned throughput a test can set, as
// the embedded store's (embedded.Store.SetThroughput): ru Request Units
// per second for each container, split evenly over its physical
// partitions, 0 for unlimited. A Cosmos account's throughput is at least
// 400 RU/s per container and shared with whatever else runs on it, so
// against an account the throttle test is skipped; there the adapter
// maps the real 429 (store/cosmos/errors.go), and Options.Elsewhere says
// which tests show it.
type Throttler interface {
	SetThroughput(ru float64)
}

// testThrottle: a physical partition that has spent its share of the
// container's throughput refuses the next call as Cosmos throttles one
// (EUNAVAILABLE, RetryAfter within the second), and the refused call
// costs nothing and writes nothing, while a partition with budget left
// still serves.
func testThrottle(t *testing.T, s store.Store) {
	th, ok := s.(Throttler)
	if !ok {
		withoutHook(t, ThrottledOverBudget, "Throttler")
		return
	}
	c := newContainer(t, s, nil)
	for i := range 16 {
		pk := fmt.Sprintf("k%02d", i)
		mustCreate(t, c, pk, item(pk, "i"))
	}
	// Which keys share a physical partition: the feed of each range.
	f := newFeedReader(t, c)
	rangeOf := map[string]store.FeedRange{}
	for r, items := range f.drain(100) {
		for _, it := range items {
			rangeOf[it["pk"].(string)] = r
		}
	}
	hot := "k00"
	cold := ""
	for pk, r := range rangeOf {
		if r != rangeOf[hot] {
			cold = pk
		}
	}
	// 10 RU per partition per second: a point read costs about 1.
	th.SetThroughput(10 * float64(len(f.ranges)))
	t.Cleanup(func() { th.SetThroughput(0) })

	refused := func(what string, call func() (float64, error)) {
		t.Helper()
		for range 1000 {
			charge, err := call()
			if err == nil {
				continue
			}
			e, ok := errors.AsType[*domain.Error](err)
			if !ok || e.Code != domain.EUNAVAILABLE || e.RetryAfter <= 0 || e.RetryAfter > time.Second {
				t.Fatalf("%s: %v, want EUNAVAILABLE with a RetryAfter within the second (429)", what, err)
			}
			if charge != 0 {
				t.Errorf("%s: refused, yet charged %v RU", what, charge)
			}
			return
		}
		t.Fatalf("%s: 1000 calls on one partition at 10 RU/s, none refused", what)
	}
	refused("a burst of reads", func() (float64, error) {
		r, err := c.Read(ctx, hot, "i")
		return r.RequestCharge, err
	})
	if cold != "" {
		if _, err := c.Read(ctx, cold, "i"); err != nil {
			t.Errorf("read on another partition while %s's is out of budget: %v", hot, err)
		}
	}
	n := 0
	refused("a burst of creates", func() (float64, error) {
		n++
		r, err := c.Create(ctx, hot, item(hot, fmt.Sprint("new", n)))
		return r.RequestCharge, err
	})
	th.SetThroughput(0)
	if _, err := c.Read(ctx, hot, fmt.Sprint("new", n)); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Errorf("read of the refused create: %v, want ENOTFOUND", err)
	}
}
