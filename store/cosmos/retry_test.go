package cosmos

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
)

// openWithBudget opens a Store on g whose throttling budget is budget.
func (g *gateway) openWithBudget(budget time.Duration) *Store {
	g.t.Helper()
	key := base64.StdEncoding.EncodeToString([]byte("wire-test-key"))
	s, err := Open(context.Background(), Config{Endpoint: g.srv.URL, Key: key, Database: "shop", Emulator: true, MaxRetryWait: budget})
	if err != nil {
		g.t.Fatalf("Open: %v", err)
	}
	g.t.Cleanup(func() { s.Close() })
	return s
}

// A 449 or a 429 that names no wait is retried after the SDK's own
// backoff, and that backoff counts against the budget: the call is over
// within it, not one backoff (up to the budget again) later. Every try
// before giving up takes a local round trip only, so the whole call fits
// in the budget; a policy that does not count the backoff decides to
// retry while under the budget and then sleeps past it, every time.
func TestRetryBudgetCountsTheSDKsBackoff(t *testing.T) {
	const budget = time.Second
	for _, status := range []int{449, 429} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			g := newGateway(t)
			c := g.openWithBudget(budget).Container("carts")
			g.fail(status, "")
			start := time.Now()
			_, err := c.Read(t.Context(), "u1", "u1")
			elapsed := time.Since(start)
			tries := len(g.sent())
			t.Logf("%d tries in %v", tries, elapsed)
			if elapsed > budget {
				t.Errorf("%d tries took %v, over the %v budget", tries, elapsed, budget)
			}
			if tries < 2 {
				t.Errorf("%d tries, want a retry: the first backoff fits in the budget", tries)
			}
			e, ok := errors.AsType[*domain.Error](err)
			if !ok || e.Code != domain.EUNAVAILABLE {
				t.Fatalf("error = %v, want %s", err, domain.EUNAVAILABLE)
			}
			if e.RetryAfter <= 0 {
				t.Errorf("RetryAfter = %v, want a wait for the caller", e.RetryAfter)
			}
		})
	}
}
