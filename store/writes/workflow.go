package writes

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// This file is the checkout's workflow, one function per move of
// domain.Moves: the order's status says which step comes next, each step
// ends in ONE conditional write of the order (move), and whoever makes a
// move brings stock, money and cart in line with the state reached
// (CarryOut), as the orders feed does again for every order it delivers.
// A step may run twice, on two workers at once, or die half way: its
// effects are idempotent (the take's reservation id, the payment's
// idempotency key) and of two moves from one version one wins; the loser
// reads the order again and carries on from what it finds.

// Advance carries o on, one step after another, until it is no longer in
// progress (placed, or an end) or ctx ends. A step that fails is tried
// again after a pause while ctx lasts: the answer of a failed step (a
// provider's timeout, a throttled store) says nothing of the order, which
// stays where the last move left it.
func (w *Writes) Advance(ctx context.Context, o domain.Order) (domain.Order, error) {
	for try := 1; o.InProgress(); {
		next, err := w.step(ctx, o)
		if errors.Is(err, repo.ErrMoved) {
			// Another worker moved it first: carry on from there.
			next, err = w.repos.Orders.Get(ctx, o.UserID, o.ID)
		}
		if err == nil {
			o, try = next, 1
			continue
		}
		if ctx.Err() != nil {
			return o, err
		}
		if err := pause(ctx, try); err != nil {
			return o, err
		}
		try++
	}
	return o, nil
}

// step makes the next move of an order in progress.
func (w *Writes) step(ctx context.Context, o domain.Order) (domain.Order, error) {
	switch o.Status {
	case domain.StatusPending:
		return w.reserve(ctx, o)
	case domain.StatusReserved:
		return w.authorize(ctx, o)
	case domain.StatusAuthorized:
		return w.move(ctx, o, domain.StatusPlaced, nil)
	}
	return o, nil
}

// reserve takes every line's units (take): all taken, the order is
// reserved; a line short, it is rejected, naming the short lines, and
// CarryOut gives back what was taken.
func (w *Writes) reserve(ctx context.Context, o domain.Order) (domain.Order, error) {
	short, err := w.take(ctx, o)
	if err != nil {
		return o, err
	}
	if len(short) > 0 {
		return w.move(ctx, o, domain.StatusRejected, func(o *domain.Order) {
			o.Rejection = &domain.Rejection{Reason: domain.RejectedOutOfStock, Shortages: short}
		})
	}
	return w.move(ctx, o, domain.StatusReserved, nil)
}

// authorize asks the provider to hold the order's total, with the key of
// the order's authorize step: asked twice, it answers the same payment.
// Authorized, the order is authorized; declined, it is rejected with the
// provider's reason, and CarryOut gives the units back.
func (w *Writes) authorize(ctx context.Context, o domain.Order) (domain.Order, error) {
	if o.Payment == nil {
		o.Payment = &domain.OrderPayment{AmountCents: o.TotalCents, Currency: Currency}
	}
	p, err := w.pay.Authorize(ctx, authorization(o))
	switch {
	case errors.Is(err, payments.ErrUnknownMethod):
		// No provider would ever authorize it: a decline, not a retry.
		p = payments.Payment{Status: payments.Declined, DeclineCode: "invalid_payment_method", Message: "No such payment method."}
	case domain.IsCode(err, domain.EINVALID):
		p = payments.Payment{Status: payments.Declined, DeclineCode: "invalid_payment_method", Message: domain.ErrorMessage(err)}
	case err != nil:
		return o, err
	}
	switch p.Status {
	case payments.Declined:
		return w.move(ctx, o, domain.StatusRejected, func(o *domain.Order) {
			o.Payment.ID = p.ID
			o.Rejection = &domain.Rejection{Reason: domain.RejectedDeclined, DeclineCode: p.DeclineCode, Message: p.Message}
		})
	case payments.Authorized:
		return w.move(ctx, o, domain.StatusAuthorized, func(o *domain.Order) { o.Payment.ID = p.ID })
	}
	// Voided or refunded: the order ended meanwhile (expired) and its
	// payment was returned; the order, read again, says so.
	return o, repo.ErrMoved
}

// authorization is the order's authorize call.
func authorization(o domain.Order) payments.Authorization {
	return payments.Authorization{
		OrderID: o.ID, AmountCents: o.TotalCents, Currency: Currency,
		PaymentMethod: o.PaymentMethod, Key: payments.Key(o.ID, payments.StepAuthorize),
	}
}

// move makes the move of o, as read, to status to (change adds what the
// move records), as one conditional write (Orders.Move), and then brings
// stock, money and cart in line with it (CarryOut). CarryOut's failure is
// not the move's: the orders feed carries it out again.
func (w *Writes) move(ctx context.Context, o domain.Order, to string, change func(*domain.Order)) (domain.Order, error) {
	from := o.Status
	if err := o.Move(to, w.now()); err != nil {
		return o, err
	}
	if change != nil {
		change(&o)
	}
	moved, err := w.repos.Orders.Move(ctx, o, from)
	if err != nil {
		return o, err
	}
	_ = w.CarryOut(ctx, moved)
	return moved, nil
}

// SetOrderStatus makes a person's move of one of the user's orders (the
// owner's cancel, the admin's PATCH: ship, deliver, cancel), with the
// client's If-Match, and brings stock and money in line with it: shipping
// captures, cancelling gives the units back and voids the authorization
// or refunds the capture. The orders feed does it again if this fails.
func (w *Writes) SetOrderStatus(ctx context.Context, userID, orderID string, ifMatch repo.Precondition, to string) (domain.Order, error) {
	o, err := w.repos.Orders.SetStatus(ctx, userID, orderID, ifMatch, to, w.now())
	if err == nil {
		_ = w.CarryOut(ctx, o)
	}
	return o, err
}

// Sweep carries on an order the sweeper found in progress: one created
// less than stall ago is left to its checkout; one in progress longer
// than expiry is expired (its units and payment go back: CarryOut); any
// other is advanced for as long as ctx lasts. Several sweepers may sweep
// one order at once, and its checkout may still run: every move is
// conditional, so one of them makes it.
func (w *Writes) Sweep(ctx context.Context, o domain.Order, stall, expiry time.Duration) error {
	age := w.now().Sub(o.CreatedAt)
	switch {
	case !o.InProgress(), age < stall:
		return nil
	case age >= expiry:
		_, err := w.move(ctx, o, domain.StatusExpired, nil)
		if errors.Is(err, repo.ErrMoved) {
			return nil // the next pass sees where it went
		}
		return err
	}
	_, err := w.Advance(ctx, o)
	return err
}

// pause waits before a step's next try: a growing delay, at most 200 ms.
func pause(ctx context.Context, try int) error {
	return store.Sleep(ctx, min(time.Duration(try)*20*time.Millisecond, 200*time.Millisecond))
}
