package writes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// stalledCard holds every authorization until released.
type stalledCard struct {
	payments.Provider
	entered, release chan struct{}
}

func (p stalledCard) Authorize(ctx context.Context, a payments.Authorization) (payments.Payment, error) {
	p.entered <- struct{}{}
	<-p.release
	return p.Provider.Authorize(ctx, a)
}

// TestWaitOutlastsTheCheckoutsCaller: a checkout goes on after its caller
// has gone, and Wait, which a shutdown calls before it closes the store,
// returns only once it has reached a state of the workflow.
func TestWaitOutlastsTheCheckoutsCaller(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 10})
	card := stalledCard{Provider: s.pay, entered: make(chan struct{}, 1), release: make(chan struct{})}
	w := writes.New(repo.New(s.st, 0), card, nil)
	writes.SetBound(w, time.Minute)
	if _, err := w.SetCartLine(t.Context(), "u1", "p1", "", 1, ""); err != nil {
		t.Fatal(err)
	}
	caller, hangUp := context.WithCancel(t.Context())
	placed := make(chan domain.Order, 1)
	go func() {
		o, _ := w.Checkout(caller, checkout("u1", "k1", "pm_card_visa"))
		placed <- o
	}()
	<-card.entered
	hangUp()

	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := w.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait during the authorization: %v, want the deadline", err)
	}
	close(card.release)
	if err := w.Wait(t.Context()); err != nil {
		t.Fatalf("Wait after the release: %v", err)
	}
	orders, err := allOrders(t.Context(), s.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 1 || orders[0].Status != domain.StatusPlaced {
		t.Errorf("once Wait returned the store holds %+v, want one order %s", orders, domain.StatusPlaced)
	}
	if o := <-placed; o.Status != domain.StatusPlaced {
		t.Errorf("the checkout answered %s, want %s", o.Status, domain.StatusPlaced)
	}
}
