// Package paymentstest is the contract every adapter of the payments port
// must pass: each behavior the checkout relies on is specified once,
// through the port only, and run against payments/embedded always and
// payments/stripe against stripe-mock.
//
// The contract is about state: a payment moves Authorized → Captured →
// Refunded or Authorized → Voided, a key answers the payment as it is
// now, a move from the wrong state is ErrState. A target that keeps no
// state (stripe-mock answers every request with fixture data) declares
// itself Stateless, and is held only to what it can show: every call is
// accepted and its answer maps onto a Payment.
//
// Every test makes its own order ids, so the suite can run against a
// shared Stripe test account: idempotency keys there live for a day.
package paymentstest

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain/payments"
)

// Options say what the target is held to. The zero value: everything.
type Options struct {
	// Stateless: the target answers fixtures, not the payments it made,
	// so only the shape of each call and its mapping are checked.
	Stateless bool
}

// Auditor is a provider that lists an order's payments, as the embedded
// one does (embedded.Provider.ByOrder). The suite then checks that a
// repeated key made no second payment; through the port alone it can
// only check that the same payment was answered.
type Auditor interface {
	ByOrder(orderID string) []payments.Payment
}

// Run runs the contract suite. newProvider returns a provider for one
// subtest; it must release it when t ends (t.Cleanup).
func Run(t *testing.T, newProvider func(t *testing.T) payments.Provider, opts Options) {
	tests := []struct {
		name     string
		fn       func(t *testing.T, p payments.Provider)
		stateful bool // meaningful only on a target that keeps state
	}{
		{"InvalidAuthorizationRefused", testInvalid, false},
		{"EveryCallAcceptedAndMapped", testAcceptedAndMapped, false},
		{"AuthorizeSucceeds", testAuthorize, true},
		{"TestMethodsDeclineAsStripeDocuments", testDeclines, true},
		{"UnknownMethod", testUnknownMethod, true},
		{"SameKeySamePayment", testSameKey, true},
		{"SameKeyOtherAuthorizationRefused", testKeyReuse, true},
		{"Capture", testCapture, true},
		{"Void", testVoid, true},
		{"CaptureAfterVoidIsErrState", testCaptureAfterVoid, true},
		{"VoidAfterCaptureIsErrState", testVoidAfterCapture, true},
		{"Refund", testRefund, true},
		{"RefundOfAuthorizedIsErrState", testRefundOfAuthorized, true},
		{"UnknownPaymentIsErrNotFound", testNotFound, true},
		{"EveryMoveFromEveryState", testEveryMoveFromEveryState, true},
		{"VoidBeforeTheAuthorizeArrives", testVoidOvertakesAuthorize, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.stateful && opts.Stateless {
				t.Skip("the target keeps no state: the state semantics are specified on a stateful provider")
			}
			tt.fn(t, newProvider(t))
		})
	}
}

var ctx = context.Background()

// The amount every test authorizes: above Stripe's $0.50 minimum.
const (
	amount   = 2599
	currency = "usd"
)

// authorization returns an authorization of a new order with method.
func authorization(method string) payments.Authorization {
	order := "order-" + rand.Text()
	return payments.Authorization{
		OrderID:       order,
		AmountCents:   amount,
		Currency:      currency,
		PaymentMethod: method,
		Key:           payments.Key(order, payments.StepAuthorize),
	}
}

// authorize authorizes a with a card that succeeds and checks the answer.
func authorize(t *testing.T, p payments.Provider) (payments.Authorization, payments.Payment) {
	t.Helper()
	a := authorization("pm_card_visa")
	got, err := p.Authorize(ctx, a)
	if err != nil {
		t.Fatalf("Authorize(pm_card_visa): %v", err)
	}
	if got.Status != payments.Authorized {
		t.Fatalf("Authorize(pm_card_visa).Status = %q, want %q", got.Status, payments.Authorized)
	}
	return a, got
}

// step calls the move named step on id with the order's key for it.
func step(p payments.Provider, stepName, id, orderID string) (payments.Payment, error) {
	return stepKey(p, stepName, id, payments.Key(orderID, stepName))
}

// stepKey calls the move named step on id with key.
func stepKey(p payments.Provider, stepName, id, key string) (payments.Payment, error) {
	switch stepName {
	case payments.StepCapture:
		return p.Capture(ctx, id, key)
	case payments.StepVoid:
		return p.Void(ctx, id, key)
	case payments.StepRefund:
		return p.Refund(ctx, id, key)
	}
	panic("paymentstest: no step " + stepName)
}

// mustStep moves the payment and checks it reached want.
func mustStep(t *testing.T, p payments.Provider, stepName string, pay payments.Payment, want string) payments.Payment {
	t.Helper()
	got, err := step(p, stepName, pay.ID, pay.OrderID)
	if err != nil {
		t.Fatalf("%s(%s): %v", stepName, pay.ID, err)
	}
	if got.ID != pay.ID || got.Status != want {
		t.Fatalf("%s(%s) = %s %q, want %s %q", stepName, pay.ID, got.ID, got.Status, pay.ID, want)
	}
	return got
}

// wantState checks that err is ErrState and that the answer is the
// payment as it is, in status want.
func wantState(t *testing.T, what string, got payments.Payment, err error, id, want string) {
	t.Helper()
	if !errors.Is(err, payments.ErrState) {
		t.Fatalf("%s: error = %v, want ErrState", what, err)
	}
	if got.ID != id || got.Status != want {
		t.Errorf("%s answered %s %q, want the payment as it is: %s %q", what, got.ID, got.Status, id, want)
	}
}

// wantGet checks that Get answers want.
func wantGet(t *testing.T, p payments.Provider, want payments.Payment) {
	t.Helper()
	got, err := p.Get(ctx, want.ID)
	if err != nil {
		t.Fatalf("Get(%s): %v", want.ID, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get(%s) (-want +got):\n%s", want.ID, diff)
	}
}

// wantPayments checks, on an Auditor, that the order has n payments.
func wantPayments(t *testing.T, p payments.Provider, orderID string, n int) {
	t.Helper()
	if a, ok := p.(Auditor); ok {
		if got := a.ByOrder(orderID); len(got) != n {
			t.Errorf("order %s has %d payments, want %d: %v", orderID, len(got), n, got)
		}
	}
}
