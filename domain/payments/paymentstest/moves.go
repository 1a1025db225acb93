package paymentstest

import (
	"crypto/rand"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain/payments"
)

func testCapture(t *testing.T, p payments.Provider) {
	_, pay := authorize(t, p)
	captured := mustStep(t, p, payments.StepCapture, pay, payments.Captured)
	again := mustStep(t, p, payments.StepCapture, pay, payments.Captured)
	if diff := cmp.Diff(captured, again); diff != "" {
		t.Errorf("Capture again with the same key (-first +again):\n%s", diff)
	}
	wantGet(t, p, captured)
}

func testVoid(t *testing.T, p payments.Provider) {
	_, pay := authorize(t, p)
	voided := mustStep(t, p, payments.StepVoid, pay, payments.Voided)
	mustStep(t, p, payments.StepVoid, pay, payments.Voided)
	if voided.Live() {
		t.Errorf("a voided payment is Live")
	}
	wantGet(t, p, voided)
}

func testCaptureAfterVoid(t *testing.T, p payments.Provider) {
	_, pay := authorize(t, p)
	mustStep(t, p, payments.StepVoid, pay, payments.Voided)
	got, err := step(p, payments.StepCapture, pay.ID, pay.OrderID)
	wantState(t, "Capture after Void", got, err, pay.ID, payments.Voided)
}

func testVoidAfterCapture(t *testing.T, p payments.Provider) {
	_, pay := authorize(t, p)
	captured := mustStep(t, p, payments.StepCapture, pay, payments.Captured)
	got, err := step(p, payments.StepVoid, pay.ID, pay.OrderID)
	wantState(t, "Void after Capture", got, err, pay.ID, payments.Captured)
	wantGet(t, p, captured)
}

func testRefund(t *testing.T, p payments.Provider) {
	_, pay := authorize(t, p)
	mustStep(t, p, payments.StepCapture, pay, payments.Captured)
	refunded := mustStep(t, p, payments.StepRefund, pay, payments.Refunded)
	mustStep(t, p, payments.StepRefund, pay, payments.Refunded)
	if refunded.Live() {
		t.Errorf("a refunded payment is Live")
	}
	wantGet(t, p, refunded)
}

// testRefundOfAuthorized: only a capture is refunded; an authorization
// is voided.
func testRefundOfAuthorized(t *testing.T, p payments.Provider) {
	_, pay := authorize(t, p)
	got, err := step(p, payments.StepRefund, pay.ID, pay.OrderID)
	wantState(t, "Refund of an authorization", got, err, pay.ID, payments.Authorized)
}

func testNotFound(t *testing.T, p payments.Provider) {
	const id = "pi_nosuchpayment"
	if _, err := p.Get(ctx, id); !errors.Is(err, payments.ErrNotFound) {
		t.Errorf("Get(%s): error %v, want ErrNotFound", id, err)
	}
	for _, s := range []string{payments.StepCapture, payments.StepVoid, payments.StepRefund} {
		if _, err := step(p, s, id, "order-"+rand.Text()); !errors.Is(err, payments.ErrNotFound) {
			t.Errorf("%s(%s): error %v, want ErrNotFound", s, id, err)
		}
	}
}

// testVoidOvertakesAuthorize: the rule on payments.Provider. The first
// Authorize's answer is lost; whoever releases the money authorizes again
// with the order's key and voids what that answers; the first call,
// arriving (or retried) after the void, answers Voided and holds nothing.
func testVoidOvertakesAuthorize(t *testing.T, p payments.Provider) {
	a := authorization("pm_card_visa")
	pay, err := p.Authorize(ctx, a) // the compensation's own call
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	mustStep(t, p, payments.StepVoid, pay, payments.Voided)
	late, err := p.Authorize(ctx, a) // the first call, arriving late
	if err != nil {
		t.Fatalf("the late Authorize: %v", err)
	}
	if late.ID != pay.ID || late.Status != payments.Voided {
		t.Errorf("the late Authorize = %s %q, want the voided payment %s", late.ID, late.Status, pay.ID)
	}
	got, err := step(p, payments.StepCapture, pay.ID, a.OrderID)
	wantState(t, "Capture of what the late Authorize answered", got, err, pay.ID, payments.Voided)
	wantPayments(t, p, a.OrderID, 1)

	t.Run("Declined", func(t *testing.T) {
		a := authorization("pm_card_chargeDeclined")
		pay, err := p.Authorize(ctx, a)
		if err != nil || pay.Status != payments.Declined {
			t.Fatalf("Authorize(pm_card_chargeDeclined) = %q, %v; want Declined", pay.Status, err)
		}
		// Nothing is held; the void closes the payment all the same, as
		// Stripe cancels a PaymentIntent a decline left open.
		voided := mustStep(t, p, payments.StepVoid, pay, payments.Voided)
		if voided.Live() {
			t.Errorf("a voided decline is Live")
		}
		if late, err := p.Authorize(ctx, a); err != nil || late.ID != pay.ID || late.Status != payments.Voided {
			t.Errorf("the late Authorize = %s %q, %v; want the voided payment %s", late.ID, late.Status, err, pay.ID)
		}
	})
}

// testEveryMoveFromEveryState: payments.Moves is the whole state machine:
// from each state a payment can rest in, a move under a key not used
// before leads to the move's state if it starts from there, and is
// ErrState answering the payment unchanged if not.
func testEveryMoveFromEveryState(t *testing.T, p payments.Provider) {
	reach := map[string][]string{ // the steps that lead to a state after its authorization
		payments.Authorized: nil,
		payments.Declined:   nil,
		payments.Captured:   {payments.StepCapture},
		payments.Voided:     {payments.StepVoid},
		payments.Refunded:   {payments.StepCapture, payments.StepRefund},
	}
	for _, from := range states {
		for _, m := range payments.Moves {
			t.Run(from+"/"+m.Step, func(t *testing.T) {
				method := "pm_card_visa"
				if from == payments.Declined {
					method = "pm_card_chargeDeclined"
				}
				pay, err := p.Authorize(ctx, authorization(method))
				if err != nil {
					t.Fatalf("Authorize(%s): %v", method, err)
				}
				for _, s := range reach[from] {
					pay = mustStep(t, p, s, pay, mustMove(s).To)
				}
				got, err := stepKey(p, m.Step, pay.ID, payments.Key(pay.OrderID, m.Step+"-table"))
				if !m.StartsFrom(from) {
					wantState(t, m.Step+" of a payment "+from, got, err, pay.ID, from)
					return
				}
				if err != nil || got.Status != m.To {
					t.Errorf("%s of a payment %s = %q, %v; want %q", m.Step, from, got.Status, err, m.To)
				}
			})
		}
	}
}

func mustMove(step string) payments.Move {
	m, ok := payments.MoveOf(step)
	if !ok {
		panic("paymentstest: no move " + step)
	}
	return m
}
