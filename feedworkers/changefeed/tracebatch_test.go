package changefeed_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

type traceKey struct{}

// TraceBatch wraps each batch: the handler runs in the context it returns
// (so a span started there is the parent of the batch's store calls), and
// its end sees the batch's item count and outcome.
func TestTraceBatchWrapsTheHandler(t *testing.T) {
	st := newStore(t)
	var mu sync.Mutex
	var traced, inHandler, ended int
	cfg := testConfig("a", func(ctx context.Context, items [][]byte) error {
		if ctx.Value(traceKey{}) == "batch" {
			mu.Lock()
			inHandler += len(items)
			mu.Unlock()
		}
		return nil
	})
	cfg.TraceBatch = func(ctx context.Context, lease string) (context.Context, func(int, float64, error)) {
		mu.Lock()
		traced++
		mu.Unlock()
		return context.WithValue(ctx, traceKey{}, "batch"), func(items int, ru float64, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ended += items
			}
		}
	}
	startProcessor(t, context.Background(), st, cfg)
	for _, id := range []string{"t1", "t2", "t3"} {
		writeThing(t, st, id)
	}
	eventually(t, 10*time.Second, "every item traced", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return inHandler == 3 && ended == 3 && traced >= 1, ""
	})
}
