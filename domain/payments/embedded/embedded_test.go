package embedded_test

import (
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
)

var ctx = context.Background()

// Its payments can be listed, so the suite also counts them.
var _ paymentstest.Auditor = (*embedded.Provider)(nil)

func TestContract(t *testing.T) {
	// The zero Options: the embedded provider is held to everything.
	paymentstest.Run(t, func(t *testing.T) payments.Provider { return open(t, "") }, paymentstest.Options{})
}

// open opens the provider at path ("" in memory), closed when t ends.
func open(t *testing.T, path string) *embedded.Provider {
	t.Helper()
	p, err := embedded.Open(path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// authorization is an authorization of a new order by a card that succeeds.
func authorization() payments.Authorization {
	order := "order-" + rand.Text()
	return payments.Authorization{OrderID: order, AmountCents: 1250, Currency: "eur",
		PaymentMethod: "pm_card_visa", Key: payments.Key(order, payments.StepAuthorize)}
}

// TestPaymentsSurviveReopen: what a call answered is in the file: the
// payment, its state and its key, which still answers it.
func TestPaymentsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payments.db")
	p, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := authorization()
	pay, err := p.Authorize(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	captured, err := p.Capture(ctx, pay.ID, payments.Key(a.OrderID, payments.StepCapture))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	p = open(t, path)
	got, err := p.Get(ctx, pay.ID)
	if err != nil {
		t.Fatalf("Get after reopen: %v", err)
	}
	if diff := cmp.Diff(captured, got); diff != "" {
		t.Errorf("Get after reopen (-before +after):\n%s", diff)
	}
	again, err := p.Authorize(ctx, a)
	if err != nil {
		t.Fatalf("Authorize with the same key after reopen: %v", err)
	}
	if diff := cmp.Diff(captured, again); diff != "" {
		t.Errorf("Authorize with the same key after reopen (-want +got):\n%s", diff)
	}
	if got := p.ByOrder(a.OrderID); len(got) != 1 {
		t.Errorf("after reopen the order has %d payments, want 1: %v", len(got), got)
	}
}

// TestConcurrentAuthorizeOneKey: workers racing with one key make one
// payment, and every one of them is answered it.
func TestConcurrentAuthorizeOneKey(t *testing.T) {
	p := open(t, "")
	a := authorization()
	const workers = 16
	ids := make([]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pay, err := p.Authorize(ctx, a)
			ids[w], errs[w] = pay.ID, err
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		if ids[w] != ids[0] {
			t.Errorf("worker %d was answered %s, worker 0 %s", w, ids[w], ids[0])
		}
	}
	if got := p.ByOrder(a.OrderID); len(got) != 1 {
		t.Errorf("the order has %d payments, want 1: %v", len(got), got)
	}
}

// TestConcurrentCaptureAndVoid: a capture and a void racing on one
// authorization: exactly one moves it, the other is ErrState with the
// payment as the winner left it.
func TestConcurrentCaptureAndVoid(t *testing.T) {
	p := open(t, "")
	for range 20 {
		a := authorization()
		pay, err := p.Authorize(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		var captured, voided payments.Payment
		var capErr, voidErr error
		var wg sync.WaitGroup
		wg.Go(func() { captured, capErr = p.Capture(ctx, pay.ID, payments.Key(a.OrderID, payments.StepCapture)) })
		wg.Go(func() { voided, voidErr = p.Void(ctx, pay.ID, payments.Key(a.OrderID, payments.StepVoid)) })
		wg.Wait()
		final, err := p.Get(ctx, pay.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case capErr == nil && errors.Is(voidErr, payments.ErrState):
			if final.Status != payments.Captured || voided.Status != payments.Captured {
				t.Errorf("capture won: final %q, the void answered %q; want both captured", final.Status, voided.Status)
			}
		case voidErr == nil && errors.Is(capErr, payments.ErrState):
			if final.Status != payments.Voided || captured.Status != payments.Voided {
				t.Errorf("void won: final %q, the capture answered %q; want both voided", final.Status, captured.Status)
			}
		default:
			t.Fatalf("capture: %v, void: %v; want exactly one ErrState", capErr, voidErr)
		}
	}
}

// TestPaymentsListsEverything: the audit sees declines too, and each
// order's payments under its id.
func TestPaymentsListsEverything(t *testing.T) {
	p := open(t, "")
	ok, declined := authorization(), authorization()
	declined.PaymentMethod = "pm_card_chargeDeclinedInsufficientFunds"
	var want []payments.Payment
	for _, a := range []payments.Authorization{ok, declined} {
		pay, err := p.Authorize(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, pay)
		if diff := cmp.Diff([]payments.Payment{pay}, p.ByOrder(a.OrderID)); diff != "" {
			t.Errorf("ByOrder(%s) (-want +got):\n%s", a.OrderID, diff)
		}
	}
	byID := cmpopts.SortSlices(func(a, b payments.Payment) bool { return a.ID < b.ID })
	if diff := cmp.Diff(want, p.Payments(), byID); diff != "" {
		t.Errorf("Payments (-want +got):\n%s", diff)
	}
	if got := p.ByOrder("order-none"); len(got) != 0 {
		t.Errorf("ByOrder of an order without payments = %v, want none", got)
	}
}

// TestMoveNeedsAKey: a move without an idempotency key could not be
// retried safely, so it is refused.
func TestMoveNeedsAKey(t *testing.T) {
	p := open(t, "")
	pay, err := p.Authorize(ctx, authorization())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Capture(ctx, pay.ID, ""); err == nil {
		t.Errorf("Capture without a key: no error")
	}
}
