package stripe

import (
	"errors"
	"fmt"
	"net/http"

	stripego "github.com/stripe/stripe-go/v82"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
)

// metadataOrderID is the PaymentIntent's metadata key holding the order
// id, so a payment read back names its order.
const metadataOrderID = "order_id"

// stateCodes are Stripe's error codes for a move the PaymentIntent's
// state does not allow: the port's ErrState.
var stateCodes = map[stripego.ErrorCode]bool{
	stripego.ErrorCodePaymentIntentUnexpectedState: true, // capture of a canceled one, cancel of a succeeded one
	stripego.ErrorCodeChargeAlreadyRefunded:        true, // refund of a refund under another key
	stripego.ErrorCodeChargeAlreadyCaptured:        true,
	stripego.ErrorCodeChargeExpiredForCapture:      true, // the hold lapsed (7 days for most cards)
	stripego.ErrorCodeChargeNotRefundable:          true, // not captured, or disputed
}

// paymentOf maps a PaymentIntent onto the port's Payment.
func paymentOf(pi *stripego.PaymentIntent) (payments.Payment, error) {
	p := payments.Payment{ID: pi.ID, OrderID: pi.Metadata[metadataOrderID], AmountCents: pi.Amount}
	switch pi.Status {
	case stripego.PaymentIntentStatusRequiresCapture:
		p.Status = payments.Authorized
	case stripego.PaymentIntentStatusSucceeded:
		p.Status = payments.Captured
		// Known only when latest_charge was expanded (Get expands it).
		if pi.LatestCharge != nil && pi.LatestCharge.Refunded {
			p.Status = payments.Refunded
		}
	case stripego.PaymentIntentStatusCanceled:
		p.Status = payments.Voided
	case stripego.PaymentIntentStatusRequiresPaymentMethod:
		// Authorize confirms at creation, so a PaymentIntent still
		// asking for a payment method is one whose card was declined.
		p.Status = payments.Declined
		if e := pi.LastPaymentError; e != nil {
			p.DeclineCode, p.Message = declineCode(e), e.Msg
		}
	default:
		// requires_action and requires_confirmation cannot happen with
		// error_on_requires_action and confirm; processing is for
		// methods other than cards.
		return payments.Payment{}, fmt.Errorf("stripe: payment intent %s is %s, a status the shop never leaves one in", pi.ID, pi.Status)
	}
	return p, nil
}

// declined answers a card_error (HTTP 402) of Authorize as the Declined
// payment it is, with the PaymentIntent Stripe made for it.
func declined(err error, a payments.Authorization) (payments.Payment, bool) {
	var se *stripego.Error
	if !errors.As(err, &se) || se.Type != stripego.ErrorTypeCard {
		return payments.Payment{}, false
	}
	p := payments.Payment{OrderID: a.OrderID, AmountCents: a.AmountCents, Status: payments.Declined,
		DeclineCode: declineCode(se), Message: se.Msg}
	if se.PaymentIntent != nil {
		p.ID = se.PaymentIntent.ID
	}
	return p, true
}

// declineCode is the issuer's reason (insufficient_funds) when Stripe
// gives one, else the error's code (expired_card, incorrect_cvc).
func declineCode(e *stripego.Error) string {
	if e.DeclineCode != "" {
		return string(e.DeclineCode)
	}
	return string(e.Code)
}

// mapError maps a failed call onto the port's errors. what names the
// call; authorize says whether it was Authorize, where a missing
// resource is the payment method rather than the payment.
func mapError(err error, what string, authorize bool) error {
	var se *stripego.Error
	if !errors.As(err, &se) {
		// No answer from Stripe (a timeout, a refused connection): the
		// call may or may not have taken effect.
		return fmt.Errorf("stripe: %s: %w", what, err)
	}
	switch {
	case se.Type == stripego.ErrorTypeIdempotency:
		return domain.Errorf(domain.EUNPROCESSABLE, "stripe: %s: the key was used for another request: %s", what, se.Msg)
	case se.Code == stripego.ErrorCodeResourceMissing && authorize && se.Param == "payment_method":
		return fmt.Errorf("%w: stripe: %s", payments.ErrUnknownMethod, se.Msg)
	case se.Code == stripego.ErrorCodeResourceMissing && !authorize:
		return fmt.Errorf("%w: stripe: %s", payments.ErrNotFound, se.Msg)
	case stateCodes[se.Code]:
		return fmt.Errorf("%w: stripe: %s: %s", payments.ErrState, what, se.Msg)
	}
	return fmt.Errorf("stripe: %s: %w", what, err)
}

// refunded answers a created Refund as the payment it refunded.
func refunded(r *stripego.Refund, paymentID string) (payments.Payment, error) {
	switch r.Status {
	case stripego.RefundStatusFailed, stripego.RefundStatusCanceled:
		return payments.Payment{}, fmt.Errorf("stripe: refund %s of %s is %s", r.ID, paymentID, r.Status)
	}
	p := payments.Payment{ID: paymentID, AmountCents: r.Amount, Status: payments.Refunded}
	if pi := r.PaymentIntent; pi != nil && pi.Amount != 0 { // expanded
		p.OrderID, p.AmountCents = pi.Metadata[metadataOrderID], pi.Amount
	}
	return p, nil
}

// invalidRequest reports whether err is Stripe refusing a request (400
// invalid_request_error) that names an existing payment.
func invalidRequest(err error) bool {
	var se *stripego.Error
	return errors.As(err, &se) && se.Type == stripego.ErrorTypeInvalidRequest &&
		se.HTTPStatusCode == http.StatusBadRequest && se.Code != stripego.ErrorCodeResourceMissing
}
