package embedded

import (
	"context"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain/payments"
)

// TestALoneCallCommitsAtOnce: a call while no other is writing commits in
// a transaction of its own at once; only calls that overlap wait to
// share one. With the wait for company set beyond any test's length, a
// lone authorization answers all the same. (The bound below only tells
// a call that never answers from one that does.)
func TestALoneCallCommitsAtOnce(t *testing.T) {
	p, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.db.MaxBatchDelay = time.Hour
	done := make(chan error, 1)
	go func() {
		_, err := p.Authorize(context.Background(), payments.Authorization{OrderID: "o1", AmountCents: 100, Currency: "eur",
			PaymentMethod: "pm_card_visa", Key: payments.Key("o1", payments.StepAuthorize)})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a lone authorization waited for other calls to share its transaction")
	}
}
