package changefeed_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
)

// TestThrottledBatchIsRetriedAfterTheWaitAskedFor: a batch that failed
// on a throttle is tried again after its RetryAfter, not after the
// backoff (an hour here): the processor gets through a burst of 429s as
// the SDK does, at the pace the store allows.
func TestThrottledBatchIsRetriedAfterTheWaitAskedFor(t *testing.T) {
	st := newStore(t)
	var calls atomic.Int64
	s := &seen{by: map[string]string{}}
	cfg := testConfig("a", s.handler("a", func([][]byte) error {
		if calls.Add(1) <= 20 {
			return &domain.Error{Code: domain.EUNAVAILABLE, Message: "throttled (429)", RetryAfter: time.Millisecond}
		}
		return nil
	}))
	cfg.Backoff = time.Hour
	startProcessor(t, t.Context(), st, cfg)
	writeThing(t, st, "x")
	eventually(t, 10*time.Second, "x applied after 20 throttles", func() (bool, string) { return s.has("x") })
}
