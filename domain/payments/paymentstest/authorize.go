package paymentstest

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
)

// testInvalid: an authorization no provider could hold is refused as
// EINVALID, whatever the target: the rule is checked before any call.
func testInvalid(t *testing.T, p payments.Provider) {
	tests := []struct {
		name   string
		modify func(a *payments.Authorization)
	}{
		{"ZeroAmount", func(a *payments.Authorization) { a.AmountCents = 0 }},
		{"NegativeAmount", func(a *payments.Authorization) { a.AmountCents = -100 }},
		{"NoCurrency", func(a *payments.Authorization) { a.Currency = "" }},
		{"NoOrder", func(a *payments.Authorization) { a.OrderID = "" }},
		{"NoKey", func(a *payments.Authorization) { a.Key = "" }},
		{"NoPaymentMethod", func(a *payments.Authorization) { a.PaymentMethod = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := authorization("pm_card_visa")
			tt.modify(&a)
			_, err := p.Authorize(ctx, a)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("Authorize: error %v (code %q), want code %q", err, got, want)
			}
			wantPayments(t, p, a.OrderID, 0)
		})
	}
}

// testAcceptedAndMapped: every call of the port is accepted, for every
// test method, and each answer is a payment of the id asked about, in
// one of the port's states.
func testAcceptedAndMapped(t *testing.T, p payments.Provider) {
	for _, m := range payments.TestMethods {
		t.Run(m.Token, func(t *testing.T) {
			a := authorization(m.Token)
			pay, err := p.Authorize(ctx, a)
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			mapped(t, "Authorize", pay, "")
			for _, s := range []string{payments.StepCapture, payments.StepVoid, payments.StepRefund} {
				got, err := step(p, s, pay.ID, a.OrderID)
				if err != nil && !errors.Is(err, payments.ErrState) {
					t.Fatalf("%s(%s): %v", s, pay.ID, err)
				}
				mapped(t, s, got, pay.ID)
			}
			got, err := p.Get(ctx, pay.ID)
			if err != nil {
				t.Fatalf("Get(%s): %v", pay.ID, err)
			}
			mapped(t, "Get", got, pay.ID)
		})
	}
}

var states = []string{payments.Authorized, payments.Declined, payments.Captured, payments.Voided, payments.Refunded}

// mapped checks that an answer names a payment (id, when given) in one
// of the port's states.
func mapped(t *testing.T, what string, p payments.Payment, id string) {
	t.Helper()
	if p.ID == "" || (id != "" && p.ID != id) {
		t.Errorf("%s answered payment %q, want %q", what, p.ID, id)
	}
	if !slices.Contains(states, p.Status) {
		t.Errorf("%s answered status %q, want one of %v", what, p.Status, states)
	}
}

func testAuthorize(t *testing.T, p payments.Provider) {
	a, got := authorize(t, p)
	want := payments.Payment{ID: got.ID, OrderID: a.OrderID, AmountCents: a.AmountCents, Status: payments.Authorized}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Authorize (-want +got):\n%s", diff)
	}
	if !got.Live() {
		t.Errorf("an authorization is not Live")
	}
	wantGet(t, p, want)
	wantPayments(t, p, a.OrderID, 1)
}

// testDeclines: each test method authorizes or declines as Stripe
// documents it; a decline is an answer with its code, not an error.
func testDeclines(t *testing.T, p payments.Provider) {
	for _, m := range payments.TestMethods {
		t.Run(m.Token, func(t *testing.T) {
			a := authorization(m.Token)
			got, err := p.Authorize(ctx, a)
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			want := payments.Payment{ID: got.ID, OrderID: a.OrderID, AmountCents: a.AmountCents, Status: payments.Authorized}
			if m.DeclineCode != "" {
				want.Status, want.DeclineCode, want.Message = payments.Declined, m.DeclineCode, m.Message
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Authorize (-want +got):\n%s", diff)
			}
			if got.ID == "" {
				t.Errorf("Authorize answered no payment id")
			}
			if again, err := p.Authorize(ctx, a); err != nil || again.ID != got.ID || again.Status != want.Status {
				t.Errorf("Authorize again = %s %q, %v; want the same answer", again.ID, again.Status, err)
			}
		})
	}
}

func testUnknownMethod(t *testing.T, p payments.Provider) {
	a := authorization("pm_card_made_up")
	if _, err := p.Authorize(ctx, a); !errors.Is(err, payments.ErrUnknownMethod) {
		t.Errorf("Authorize(pm_card_made_up): error %v, want ErrUnknownMethod", err)
	}
	wantPayments(t, p, a.OrderID, 0)
}

// testSameKey: a retry, or a second worker, with the authorization's key
// answers the payment the first call made and holds nothing more.
func testSameKey(t *testing.T, p payments.Provider) {
	a, first := authorize(t, p)
	again, err := p.Authorize(ctx, a)
	if err != nil {
		t.Fatalf("Authorize again: %v", err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("Authorize again with the same key (-first +again):\n%s", diff)
	}
	wantPayments(t, p, a.OrderID, 1)
}

// testKeyReuse: a key answers only the call it was made for: another
// amount under it is refused (EUNPROCESSABLE), not answered with a
// payment of the wrong amount.
func testKeyReuse(t *testing.T, p payments.Provider) {
	a, _ := authorize(t, p)
	other := a
	other.AmountCents++
	_, err := p.Authorize(ctx, other)
	if got, want := domain.ErrorCode(err), domain.EUNPROCESSABLE; got != want {
		t.Errorf("Authorize with the key of another amount: error %v (code %q), want code %q", err, got, want)
	}
	wantPayments(t, p, a.OrderID, 1)
}
