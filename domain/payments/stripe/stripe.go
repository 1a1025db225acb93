// Package stripe implements the payments port on Stripe's PaymentIntents
// with manual capture: Authorize creates and confirms a PaymentIntent
// (the amount is held on the card), Capture captures it, Void cancels
// it, Refund creates a Refund of it. Each call carries the port's key as
// Stripe's Idempotency-Key, so a retry is answered from Stripe's record
// of the first call instead of charging twice.
//
// The contract's state semantics (declines, ErrState, a key answering
// the payment as it is now) are specified in paymentstest and held by
// payments/embedded; here they rest on the mapping of Stripe's answers
// (errors.go), tested against Stripe-shaped responses from an httptest
// server. The wire tests run the contract against stripe-mock, which
// serves Stripe's OpenAPI description: it checks the shape of every
// request (each endpoint and parameter exists, required ones are there,
// enumerations such as capture_method hold a valid value) and answers
// fixtures. It keeps no state, declines nothing, and knows no missing
// object, so there the suite checks only that every call is accepted and
// its answer maps onto a Payment.
package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/reference-shop/shop/domain/payments"
)

var _ payments.Provider = (*Provider)(nil)

// DefaultTimeout bounds each HTTP call to Stripe unless WithHTTPClient
// says otherwise: a checkout must not wait on a stalled connection longer
// than its own retry would take (stripe-go's default is 80 s).
const DefaultTimeout = 20 * time.Second

// Provider is the port on one Stripe account.
type Provider struct {
	sc *stripego.Client
}

type config struct {
	baseURL string
	client  *http.Client
}

// Option configures New.
type Option func(*config)

// WithBaseURL sends every call to url instead of https://api.stripe.com
// (stripe-mock: "http://127.0.0.1:12111").
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithHTTPClient makes the calls with client, whose Timeout bounds each.
func WithHTTPClient(client *http.Client) Option { return func(c *config) { c.client = client } }

// New returns the provider on the account of the secret key.
func New(key string, opts ...Option) *Provider {
	cfg := config{client: &http.Client{Timeout: DefaultTimeout}}
	for _, o := range opts {
		o(&cfg)
	}
	noRetries := int64(0)
	noTelemetry := false
	bc := &stripego.BackendConfig{
		HTTPClient: cfg.client,
		// The caller retries, with the same key, and decides when to stop
		// (the checkout, then the sweeper): retries here too would
		// multiply the wait of every failure.
		MaxNetworkRetries: &noRetries,
		EnableTelemetry:   &noTelemetry,
		// A decline is an answer, not an event to log; errors reach the
		// caller, which logs what it does not handle.
		LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull},
	}
	if cfg.baseURL != "" {
		bc.URL = &cfg.baseURL
	}
	return &Provider{sc: stripego.NewClient(key, stripego.WithBackends(stripego.NewBackendsWithConfig(bc)))}
}

// Authorize creates a PaymentIntent for a and confirms it at once with
// manual capture: on success the amount is held (requires_capture); a
// declined card is Stripe's card_error, answered as a Declined payment.
func (p *Provider) Authorize(ctx context.Context, a payments.Authorization) (payments.Payment, error) {
	if err := a.Validate(); err != nil {
		return payments.Payment{}, err
	}
	params := &stripego.PaymentIntentCreateParams{
		Amount:        stripego.Int64(a.AmountCents),
		Currency:      stripego.String(a.Currency),
		PaymentMethod: stripego.String(a.PaymentMethod),
		// Cards only: a method that redirects the buyer would need a
		// return_url and a page the workflow does not have.
		PaymentMethodTypes: stripego.StringSlice([]string{"card"}),
		Confirm:            stripego.Bool(true),
		CaptureMethod:      stripego.String(string(stripego.PaymentIntentCaptureMethodManual)),
		// A card asking for 3-D Secure cannot be answered off-session:
		// Stripe declines it (authentication_required) instead of leaving
		// the PaymentIntent waiting in requires_action.
		ErrorOnRequiresAction: stripego.Bool(true),
		Metadata:              map[string]string{metadataOrderID: a.OrderID},
	}
	params.SetIdempotencyKey(a.Key)
	pi, err := p.sc.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		if d, ok := declined(err, a); ok {
			return d, nil
		}
		return payments.Payment{}, mapError(err, "authorize order "+a.OrderID, true)
	}
	return p.current(ctx, pi)
}

// Capture captures the whole authorization.
func (p *Provider) Capture(ctx context.Context, paymentID, key string) (payments.Payment, error) {
	params := &stripego.PaymentIntentCaptureParams{}
	params.SetIdempotencyKey(key)
	pi, err := p.sc.V1PaymentIntents.Capture(ctx, paymentID, params)
	if err != nil {
		return p.refused(ctx, payments.StepCapture, paymentID, mapError(err, "capture "+paymentID, false))
	}
	return p.current(ctx, pi)
}

// Void cancels the PaymentIntent, releasing the hold.
func (p *Provider) Void(ctx context.Context, paymentID, key string) (payments.Payment, error) {
	params := &stripego.PaymentIntentCancelParams{}
	params.SetIdempotencyKey(key)
	pi, err := p.sc.V1PaymentIntents.Cancel(ctx, paymentID, params)
	if err != nil {
		return p.refused(ctx, payments.StepVoid, paymentID, mapError(err, "void "+paymentID, false))
	}
	return p.current(ctx, pi)
}

// Refund refunds the whole capture. The Refund's PaymentIntent is
// expanded, so the answer names the order without a second call; a
// refund is final, so a replayed answer is the payment as it is now.
func (p *Provider) Refund(ctx context.Context, paymentID, key string) (payments.Payment, error) {
	params := &stripego.RefundCreateParams{PaymentIntent: stripego.String(paymentID)}
	params.SetIdempotencyKey(key)
	params.AddExpand("payment_intent")
	r, err := p.sc.V1Refunds.Create(ctx, params)
	if err != nil {
		return p.refused(ctx, payments.StepRefund, paymentID, mapError(err, "refund "+paymentID, false))
	}
	return refunded(r, paymentID)
}

// Get retrieves the PaymentIntent with its latest charge, which tells a
// refunded capture from one that stands.
func (p *Provider) Get(ctx context.Context, paymentID string) (payments.Payment, error) {
	params := &stripego.PaymentIntentRetrieveParams{}
	params.AddExpand("latest_charge")
	pi, err := p.sc.V1PaymentIntents.Retrieve(ctx, paymentID, params)
	if err != nil {
		return payments.Payment{}, mapError(err, "get "+paymentID, false)
	}
	return paymentOf(pi)
}

// current answers pi, or, when Stripe replayed the answer it saved for
// the key, the PaymentIntent as it is now: the replay shows it as it was
// when the key was first used, and the port promises the present (a late
// Authorize after a Void answers Voided).
func (p *Provider) current(ctx context.Context, pi *stripego.PaymentIntent) (payments.Payment, error) {
	if replayed(pi.LastResponse) {
		return p.Get(ctx, pi.ID)
	}
	return paymentOf(pi)
}

// refused answers a move Stripe refused. ErrState is answered with the
// payment as it is now, read back with its latest charge (the
// PaymentIntent in Stripe's error does not say whether its capture was
// refunded). Any other invalid request of a payment the move does not
// start from (payments.Moves) is ErrState too, whatever its code: Stripe
// does not give every such refusal a code of its own (a refund of an
// uncaptured PaymentIntent). Other errors pass through.
func (p *Provider) refused(ctx context.Context, step, paymentID string, err error) (payments.Payment, error) {
	state := errors.Is(err, payments.ErrState)
	if !state && !invalidRequest(err) {
		return payments.Payment{}, err
	}
	pay, gerr := p.Get(ctx, paymentID)
	switch {
	case gerr != nil && state:
		return payments.Payment{ID: paymentID}, fmt.Errorf("%w (reading it back: %v)", err, gerr)
	case gerr != nil:
		return payments.Payment{}, err
	case state:
		return pay, err
	}
	if m, _ := payments.MoveOf(step); !m.StartsFrom(pay.Status) {
		return pay, fmt.Errorf("%w: %v", payments.ErrState, err)
	}
	return payments.Payment{}, err
}

func replayed(r *stripego.APIResponse) bool {
	return r != nil && r.Header.Get("Idempotent-Replayed") == "true"
}
