package stripe_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain/payments"
)

// TestStatusMapping: each PaymentIntent status the shop can meet maps
// onto a port state; Get expands the latest charge, which tells a
// refunded capture from one that stands.
func TestStatusMapping(t *testing.T) {
	tests := []struct {
		name   string
		pi     string
		want   payments.Payment
		hasErr bool
	}{
		{"RequiresCapture", paymentIntent("pi_1", "requires_capture", ""),
			payments.Payment{Status: payments.Authorized}, false},
		{"Succeeded", paymentIntent("pi_1", "succeeded", `"latest_charge": {"id": "ch_1", "object": "charge", "refunded": false}`),
			payments.Payment{Status: payments.Captured}, false},
		{"SucceededAndRefunded", paymentIntent("pi_1", "succeeded", `"latest_charge": {"id": "ch_1", "object": "charge", "refunded": true}`),
			payments.Payment{Status: payments.Refunded}, false},
		{"Canceled", paymentIntent("pi_1", "canceled", ""),
			payments.Payment{Status: payments.Voided}, false},
		{"RequiresPaymentMethodAfterADecline", paymentIntent("pi_1", "requires_payment_method",
			`"last_payment_error": {"type": "card_error", "code": "card_declined", "decline_code": "generic_decline", "message": "Your card was declined."}`),
			payments.Payment{Status: payments.Declined, DeclineCode: "generic_decline", Message: "Your card was declined."}, false},
		{"RequiresActionIsNeverLeft", paymentIntent("pi_1", "requires_action", ""), payments.Payment{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, f := newFake(t, map[string]reply{"GET /v1/payment_intents/pi_1": {body: tt.pi}})
			got, err := p.Get(ctx, "pi_1")
			if tt.hasErr {
				if err == nil {
					t.Errorf("Get = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.ID, tt.want.OrderID, tt.want.AmountCents = "pi_1", "o1", 2599
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
			if got := f.sent()[0].form.Get("expand[0]"); got != "latest_charge" {
				t.Errorf("Get expanded %q, want latest_charge", got)
			}
		})
	}
}

// TestMovesRequests: Capture, Void and Refund send the port's key as
// Stripe's Idempotency-Key, and map what Stripe answers.
func TestMovesRequests(t *testing.T) {
	const pi = "/v1/payment_intents/pi_1"
	p, f := newFake(t, map[string]reply{
		"POST " + pi + "/capture": {body: paymentIntent("pi_1", "succeeded", "")},
		"POST " + pi + "/cancel":  {body: paymentIntent("pi_1", "canceled", "")},
		"POST /v1/refunds": {body: `{"id": "re_1", "object": "refund", "amount": 2599, "status": "succeeded",
			"payment_intent": ` + paymentIntent("pi_1", "succeeded", "") + `}`},
	})
	tests := []struct {
		route string
		call  func() (payments.Payment, error)
		key   string
		want  string
	}{
		{"POST " + pi + "/capture", func() (payments.Payment, error) { return p.Capture(ctx, "pi_1", "o1/capture") }, "o1/capture", payments.Captured},
		{"POST " + pi + "/cancel", func() (payments.Payment, error) { return p.Void(ctx, "pi_1", "o1/void") }, "o1/void", payments.Voided},
		{"POST /v1/refunds", func() (payments.Payment, error) { return p.Refund(ctx, "pi_1", "o1/refund") }, "o1/refund", payments.Refunded},
	}
	for i, tt := range tests {
		got, err := tt.call()
		if err != nil {
			t.Fatalf("%s: %v", tt.route, err)
		}
		want := payments.Payment{ID: "pi_1", OrderID: "o1", AmountCents: 2599, Status: tt.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.route, diff)
		}
		sent := f.sent()[i]
		if sent.route != tt.route {
			t.Errorf("request %d = %s, want %s", i, sent.route, tt.route)
		}
		if got := sent.header.Get("Idempotency-Key"); got != tt.key {
			t.Errorf("%s: Idempotency-Key = %q, want %q", tt.route, got, tt.key)
		}
	}
	refund := f.sent()[2].form
	if refund.Get("payment_intent") != "pi_1" || refund.Get("expand[0]") != "payment_intent" {
		t.Errorf("refund form = %v, want payment_intent=pi_1 and expand[0]=payment_intent", refund)
	}
}

// TestFailedRefundIsAnError: a refund Stripe made but could not carry
// out returned nothing: the capture stands.
func TestFailedRefundIsAnError(t *testing.T) {
	p, _ := newFake(t, map[string]reply{
		"POST /v1/refunds": {body: `{"id": "re_1", "object": "refund", "amount": 2599, "status": "failed", "payment_intent": "pi_1"}`},
	})
	if got, err := p.Refund(ctx, "pi_1", "o1/refund"); err == nil {
		t.Errorf("Refund = %+v, want an error", got)
	}
}
