package stripe_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/stripe"
)

// TestAuthorizeRequest: Authorize creates and confirms a PaymentIntent
// with manual capture, for cards, declining rather than asking for 3-D
// Secure, with the order in its metadata and the port's key as Stripe's
// Idempotency-Key.
func TestAuthorizeRequest(t *testing.T) {
	p, f := newFake(t, map[string]reply{
		"POST /v1/payment_intents": {body: paymentIntent("pi_1", "requires_capture", "")},
	})
	got, err := p.Authorize(ctx, visa)
	if err != nil {
		t.Fatal(err)
	}
	want := payments.Payment{ID: "pi_1", OrderID: "o1", AmountCents: 2599, Status: payments.Authorized}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Authorize (-want +got):\n%s", diff)
	}
	sent := f.sent()
	if len(sent) != 1 {
		t.Fatalf("requests = %v, want one", f.routes())
	}
	wantForm := map[string]string{
		"amount":                   "2599",
		"currency":                 "usd",
		"payment_method":           "pm_card_visa",
		"payment_method_types[0]":  "card",
		"confirm":                  "true",
		"capture_method":           "manual",
		"error_on_requires_action": "true",
		"metadata[order_id]":       "o1",
	}
	for k, v := range wantForm {
		if got := sent[0].form.Get(k); got != v {
			t.Errorf("form %s = %q, want %q", k, got, v)
		}
	}
	if got, want := sent[0].header.Get("Idempotency-Key"), visa.Key; got != want {
		t.Errorf("Idempotency-Key = %q, want %q", got, want)
	}
}

// TestDeclineIsAnAnswer: Stripe's card_error (HTTP 402) is the Declined
// payment Stripe made, with the issuer's reason, and no error.
func TestDeclineIsAnAnswer(t *testing.T) {
	declinedPI := `"payment_intent": ` + paymentIntent("pi_d", "requires_payment_method", "")
	tests := []struct {
		name  string
		body  string
		wantC string
		wantM string
	}{
		{"InsufficientFunds", stripeError("card_error", "card_declined", "Your card has insufficient funds.",
			`"decline_code": "insufficient_funds", `+declinedPI), "insufficient_funds", "Your card has insufficient funds."},
		{"CodeWithoutDeclineCode", stripeError("card_error", "expired_card", "Your card has expired.", declinedPI),
			"expired_card", "Your card has expired."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newFake(t, map[string]reply{
				"POST /v1/payment_intents": {status: http.StatusPaymentRequired, body: tt.body},
			})
			got, err := p.Authorize(ctx, visa)
			if err != nil {
				t.Fatalf("Authorize: %v, want a decline and no error", err)
			}
			want := payments.Payment{ID: "pi_d", OrderID: "o1", AmountCents: 2599, Status: payments.Declined,
				DeclineCode: tt.wantC, Message: tt.wantM}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Authorize (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorMapping: each of Stripe's refusals maps onto the port's error,
// an ErrState with the payment as it is now (read back), and anything
// else stays an error the caller may retry. No call is retried here.
func TestErrorMapping(t *testing.T) {
	const pi = "/v1/payment_intents/pi_1"
	refundedCharge := `"latest_charge": {"id": "ch_1", "object": "charge", "refunded": true, "amount_refunded": 2599}`
	tests := []struct {
		name       string
		replies    map[string]reply
		call       func(p *stripe.Provider) (payments.Payment, error)
		wantErr    error  // errors.Is
		wantCode   string // domain.ErrorCode, when wantErr is nil
		wantStatus string // the payment answered with the error, if any
		wantCalls  int
	}{
		{
			name: "UnknownPaymentMethod",
			replies: map[string]reply{"POST /v1/payment_intents": {status: 400, body: stripeError("invalid_request_error",
				"resource_missing", "No such PaymentMethod: 'pm_nope'", `"param": "payment_method"`)}},
			call:    authorize,
			wantErr: payments.ErrUnknownMethod, wantCalls: 1,
		},
		{
			name: "KeyReusedForAnotherRequest",
			replies: map[string]reply{"POST /v1/payment_intents": {status: 400, body: stripeError("idempotency_error",
				"", "Keys for idempotent requests can only be used with the same parameters they were first used with.", "")}},
			call:     authorize,
			wantCode: domain.EUNPROCESSABLE, wantCalls: 1,
		},
		{
			name:     "ServerError",
			replies:  map[string]reply{"POST /v1/payment_intents": {status: 500, body: stripeError("api_error", "", "An unknown error occurred", "")}},
			call:     authorize,
			wantCode: domain.EINTERNAL, wantCalls: 1,
		},
		{
			// One stripe-go would retry: the caller does, with its key,
			// when it chooses (see New).
			name:     "LockTimeoutNotRetried",
			replies:  map[string]reply{"POST /v1/payment_intents": {status: 429, body: stripeError("invalid_request_error", "lock_timeout", "This object cannot be accessed right now.", "")}},
			call:     authorize,
			wantCode: domain.EINTERNAL, wantCalls: 1,
		},
		{
			name: "CaptureOfCanceled",
			replies: map[string]reply{
				"POST " + pi + "/capture": {status: 400, body: stripeError("invalid_request_error", "payment_intent_unexpected_state",
					"This PaymentIntent could not be captured because it has a status of canceled.", `"payment_intent": `+paymentIntent("pi_1", "canceled", ""))},
				"GET " + pi: {body: paymentIntent("pi_1", "canceled", "")},
			},
			call:    func(p *stripe.Provider) (payments.Payment, error) { return p.Capture(ctx, "pi_1", "o1/capture") },
			wantErr: payments.ErrState, wantStatus: payments.Voided, wantCalls: 2,
		},
		{
			name: "VoidOfRefundedReadsItBack",
			replies: map[string]reply{
				"POST " + pi + "/cancel": {status: 400, body: stripeError("invalid_request_error", "payment_intent_unexpected_state",
					"You cannot cancel this PaymentIntent because it has a status of succeeded.", `"payment_intent": `+paymentIntent("pi_1", "succeeded", ""))},
				"GET " + pi: {body: paymentIntent("pi_1", "succeeded", refundedCharge)},
			},
			call:    func(p *stripe.Provider) (payments.Payment, error) { return p.Void(ctx, "pi_1", "o1/void") },
			wantErr: payments.ErrState, wantStatus: payments.Refunded, wantCalls: 2,
		},
		{
			name: "RefundOfUncapturedWithoutACode",
			replies: map[string]reply{
				"POST /v1/refunds": {status: 400, body: stripeError("invalid_request_error", "", "This PaymentIntent does not have a successful charge to refund.", "")},
				"GET " + pi:        {body: paymentIntent("pi_1", "requires_capture", "")},
			},
			call:    func(p *stripe.Provider) (payments.Payment, error) { return p.Refund(ctx, "pi_1", "o1/refund") },
			wantErr: payments.ErrState, wantStatus: payments.Authorized, wantCalls: 2,
		},
		{
			name: "RefundRefusedOfACaptureIsNotErrState",
			replies: map[string]reply{
				"POST /v1/refunds": {status: 400, body: stripeError("invalid_request_error", "balance_insufficient", "Insufficient funds in Stripe account.", "")},
				"GET " + pi:        {body: paymentIntent("pi_1", "succeeded", "")},
			},
			call:     func(p *stripe.Provider) (payments.Payment, error) { return p.Refund(ctx, "pi_1", "o1/refund") },
			wantCode: domain.EINTERNAL, wantCalls: 2,
		},
		{
			name: "CaptureOfMissing",
			replies: map[string]reply{"POST " + pi + "/capture": {status: 404, body: stripeError("invalid_request_error",
				"resource_missing", "No such payment_intent: 'pi_1'", `"param": "intent"`)}},
			call:    func(p *stripe.Provider) (payments.Payment, error) { return p.Capture(ctx, "pi_1", "o1/capture") },
			wantErr: payments.ErrNotFound, wantCalls: 1,
		},
		{
			name: "GetOfMissing",
			replies: map[string]reply{"GET " + pi: {status: 404, body: stripeError("invalid_request_error",
				"resource_missing", "No such payment_intent: 'pi_1'", `"param": "intent"`)}},
			call:    func(p *stripe.Provider) (payments.Payment, error) { return p.Get(ctx, "pi_1") },
			wantErr: payments.ErrNotFound, wantCalls: 1,
		},
		{
			name: "RefundOfMissing",
			replies: map[string]reply{"POST /v1/refunds": {status: 400, body: stripeError("invalid_request_error",
				"resource_missing", "No such payment_intent: 'pi_1'", `"param": "payment_intent"`)}},
			call:    func(p *stripe.Provider) (payments.Payment, error) { return p.Refund(ctx, "pi_1", "o1/refund") },
			wantErr: payments.ErrNotFound, wantCalls: 1,
		},
	}
	portErrors := []error{payments.ErrUnknownMethod, payments.ErrState, payments.ErrNotFound}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, f := newFake(t, tt.replies)
			got, err := tt.call(p)
			if err == nil {
				t.Fatalf("no error, want one")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil {
				if i := slices.IndexFunc(portErrors, func(e error) bool { return errors.Is(err, e) }); i >= 0 {
					t.Errorf("error %v is %v, want none of the port's errors", err, portErrors[i])
				}
				if code := domain.ErrorCode(err); code != tt.wantCode {
					t.Errorf("error %v has code %q, want %q", err, code, tt.wantCode)
				}
			}
			if got.Status != tt.wantStatus {
				t.Errorf("answered a payment %q, want %q", got.Status, tt.wantStatus)
			}
			if routes := f.routes(); len(routes) != tt.wantCalls {
				t.Errorf("requests %v, want %d", routes, tt.wantCalls)
			}
		})
	}
}

func authorize(p *stripe.Provider) (payments.Payment, error) { return p.Authorize(ctx, visa) }

// TestReplayAnswersThePresent: an answer Stripe replays for a key shows
// the PaymentIntent as it was when the key was first used; the adapter
// reads it back, so a late Authorize after a Void answers Voided.
func TestReplayAnswersThePresent(t *testing.T) {
	p, f := newFake(t, map[string]reply{
		"POST /v1/payment_intents": {body: paymentIntent("pi_1", "requires_capture", ""),
			header: http.Header{"Idempotent-Replayed": {"true"}}},
		"GET /v1/payment_intents/pi_1": {body: paymentIntent("pi_1", "canceled", "")},
	})
	got, err := p.Authorize(ctx, visa)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != payments.Voided {
		t.Errorf("the replayed Authorize answered %q, want %q", got.Status, payments.Voided)
	}
	if diff := cmp.Diff([]string{"POST /v1/payment_intents", "GET /v1/payment_intents/pi_1"}, f.routes()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
