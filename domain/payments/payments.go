// Package payments is the shop's port to a payment provider: authorize an
// amount for an order, capture it when the order ships, void the
// authorization or refund the capture when the order ends otherwise.
//
// Card numbers never reach the shop. A checkout carries a payment-method
// token (Stripe's test tokens, "pm_card_visa", or one Stripe.js made in
// the buyer's browser), and the provider answers with a Payment: its id
// and state. Every call carries an idempotency key derived from the order
// id and the step (Key), so a retry, or a second worker carrying the same
// order on, never charges twice: the provider answers a key it has seen
// with the payment as it is now, and does nothing again.
//
// Two adapters implement the port, with one contract suite
// (paymentstest.Run): payments/embedded, a provider with state kept in a
// file beside the embedded store, which follows Stripe's test cards and
// can inject faults; and payments/stripe, PaymentIntents with manual
// capture on github.com/stripe/stripe-go.
package payments

import (
	"context"
	"errors"
	"slices"

	"github.com/reference-shop/shop/domain"
)

// Payment states. A payment is authorized (the amount is held on the
// card), then either captured (charged) or voided (the hold released); a
// capture may be refunded. A declined authorization holds nothing.
const (
	Authorized = "authorized"
	Declined   = "declined"
	Captured   = "captured"
	Voided     = "voided"
	Refunded   = "refunded"
)

// Authorization asks to hold AmountCents on the card behind
// PaymentMethod for OrderID.
type Authorization struct {
	OrderID       string
	AmountCents   int64
	Currency      string // ISO 4217, lower case ("usd")
	PaymentMethod string // a payment-method token, never a card number
	Key           string // idempotency key: Key(OrderID, StepAuthorize)
}

// Validate refuses an authorization no provider could hold (EINVALID):
// both adapters apply it before anything is sent or kept, so the answer
// does not depend on which one runs.
func (a Authorization) Validate() error {
	switch {
	case a.OrderID == "":
		return domain.Errorf(domain.EINVALID, "payments: an authorization needs an order id")
	case a.AmountCents <= 0:
		return domain.Errorf(domain.EINVALID, "payments: an authorization needs an amount above 0, got %d", a.AmountCents)
	case a.Currency == "":
		return domain.Errorf(domain.EINVALID, "payments: an authorization needs a currency")
	case a.PaymentMethod == "":
		return domain.Errorf(domain.EINVALID, "payments: an authorization needs a payment method")
	case a.Key == "":
		return domain.Errorf(domain.EINVALID, "payments: an authorization needs an idempotency key")
	}
	return nil
}

// Payment is one order's payment as the provider keeps it.
type Payment struct {
	ID          string `json:"id"`
	OrderID     string `json:"orderId"`
	AmountCents int64  `json:"amountCents"`
	Status      string `json:"status"`
	// DeclineCode and Message say why an authorization was declined, in
	// the provider's words ("insufficient_funds", "Your card has
	// insufficient funds.").
	DeclineCode string `json:"declineCode,omitempty"`
	Message     string `json:"message,omitempty"`
}

// Live reports whether p holds or took the buyer's money: an
// authorization not voided, or a capture not refunded.
func (p Payment) Live() bool { return p.Status == Authorized || p.Status == Captured }

// Provider is the port. Each method is idempotent by its key: called
// again with the same key it changes nothing and answers the payment as
// it is now. A declined authorization is an answer (Status Declined, nil
// error), not an error.
//
// Errors: ErrUnknownMethod for a payment-method token the provider does
// not know (the buyer's mistake: never retried); ErrState when the
// payment is in a state the move cannot start from (capturing a voided
// authorization, voiding a capture), with the payment as it is; ErrNotFound
// for an unknown payment id; anything else is a failure that may or may
// not have taken effect (a timeout, a 5xx, an answer lost on the way),
// which the caller retries with the same key.
//
// A void can overtake the authorization it undoes: an Authorize whose
// answer never came (a timeout, a worker that died, the sweeper ending
// the order) leaves no payment id to void, and the request itself may
// still be on its way. The one who must release the money sends the
// same authorization again, under the order's key, which answers the
// payment the first call made or makes it now, and voids that. When the first call arrives
// after the void, its key answers the payment as it is now, Voided, and
// nothing is held.
type Provider interface {
	Authorize(ctx context.Context, a Authorization) (Payment, error)
	Capture(ctx context.Context, paymentID, key string) (Payment, error)
	Void(ctx context.Context, paymentID, key string) (Payment, error)
	Refund(ctx context.Context, paymentID, key string) (Payment, error)
	Get(ctx context.Context, paymentID string) (Payment, error)
}

var (
	ErrUnknownMethod = errors.New("payments: no such payment method")
	ErrState         = errors.New("payments: the payment is not in a state this move starts from")
	ErrNotFound      = errors.New("payments: no such payment")
)

// The workflow's payment steps, which name their idempotency keys.
const (
	StepAuthorize = "authorize"
	StepCapture   = "capture"
	StepVoid      = "void"
	StepRefund    = "refund"
)

// Move is a step after the authorization: the states it starts from and
// the one it leaves the payment in. The table is Stripe's, whose
// PaymentIntents both adapters follow: a declined authorization can be
// voided as well (a PaymentIntent waiting for another payment method can
// be canceled), though nothing is held. Any other start is ErrState.
type Move struct {
	Step string
	From []string
	To   string
}

// Moves are the steps Capture, Void and Refund make.
var Moves = []Move{
	{StepCapture, []string{Authorized}, Captured},
	{StepVoid, []string{Authorized, Declined}, Voided},
	{StepRefund, []string{Captured}, Refunded},
}

// MoveOf returns the move of step.
func MoveOf(step string) (Move, bool) {
	for _, m := range Moves {
		if m.Step == step {
			return m, true
		}
	}
	return Move{}, false
}

// StartsFrom reports whether m starts from status.
func (m Move) StartsFrom(status string) bool { return slices.Contains(m.From, status) }

// Key is the idempotency key of an order's step: the same for every
// retry and every worker that carries the order on.
func Key(orderID, step string) string { return orderID + "/" + step }

// TestMethod is one of Stripe's published test payment-method tokens.
type TestMethod struct {
	Token string `json:"token"`
	Label string `json:"label"`
	// DeclineCode is empty for a card that authorizes.
	DeclineCode string `json:"declineCode,omitempty"`
	Message     string `json:"message,omitempty"`
}

// TestMethods are the tokens the embedded provider knows, with the
// outcome Stripe documents for each (stripe.com/docs/testing): what the
// storefront offers by name.
var TestMethods = []TestMethod{
	{Token: "pm_card_visa", Label: "Visa (succeeds)"},
	{Token: "pm_card_mastercard", Label: "Mastercard (succeeds)"},
	{Token: "pm_card_amex", Label: "American Express (succeeds)"},
	{Token: "pm_card_chargeDeclined", Label: "Declined card", DeclineCode: "generic_decline", Message: "Your card was declined."},
	{Token: "pm_card_chargeDeclinedInsufficientFunds", Label: "Insufficient funds", DeclineCode: "insufficient_funds", Message: "Your card has insufficient funds."},
	{Token: "pm_card_chargeDeclinedExpiredCard", Label: "Expired card", DeclineCode: "expired_card", Message: "Your card has expired."},
	{Token: "pm_card_chargeDeclinedIncorrectCvc", Label: "Incorrect CVC", DeclineCode: "incorrect_cvc", Message: "Your card's security code is incorrect."},
	{Token: "pm_card_chargeDeclinedFraudulent", Label: "Fraudulent (declined)", DeclineCode: "fraudulent", Message: "Your card was declined."},
	{Token: "pm_card_chargeDeclinedProcessingError", Label: "Processing error (declined)", DeclineCode: "processing_error", Message: "An error occurred while processing your card. Try again in a little bit."},
}

// LookupTestMethod returns the test method of token.
func LookupTestMethod(token string) (TestMethod, bool) {
	for _, m := range TestMethods {
		if m.Token == token {
			return m, true
		}
	}
	return TestMethod{}, false
}
