package embedded

import (
	"context"
	"fmt"

	"github.com/reference-shop/shop/domain"
)

// Fault is what an injected fault does to one call.
type Fault int

const (
	// NoFault: the call runs as usual.
	NoFault Fault = iota
	// Timeout: the call fails as a timeout (an error wrapping
	// context.DeadlineExceeded) and nothing is done. It returns at
	// once: the test needs the outcome, not the wait.
	Timeout
	// Unavailable: the call fails as a 5xx (EUNAVAILABLE) and nothing is
	// done.
	Unavailable
	// LostAnswer: the call takes effect and is kept, then fails as a
	// timeout: the answer was lost on the way back. The caller cannot
	// tell it from Timeout, and must not need to: it retries with the
	// same key, which answers what was done.
	LostAnswer
)

func (f Fault) String() string {
	switch f {
	case NoFault:
		return "no fault"
	case Timeout:
		return "timeout"
	case Unavailable:
		return "unavailable"
	case LostAnswer:
		return "lost answer"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// opGet names Get to the fault function; the moves are named by their
// steps (payments.StepAuthorize, StepCapture, StepVoid, StepRefund).
const opGet = "get"

// InjectFaults makes every later call ask f what to do: op is the step
// (payments.StepAuthorize, ...) or "get", key the call's idempotency key
// (the payment id for "get"). nil injects nothing again. f is called
// from the callers' goroutines: it must be safe for concurrent use.
func (p *Provider) InjectFaults(f func(op, key string) Fault) {
	if f == nil {
		p.faults.Store(nil)
		return
	}
	p.faults.Store(&f)
}

func (p *Provider) fault(op, key string) Fault {
	if f := p.faults.Load(); f != nil {
		return (*f)(op, key)
	}
	return NoFault
}

// call runs fn as the call op with key, asking the fault function once:
// a context already done, an injected Timeout or Unavailable fail it
// before fn runs; an injected LostAnswer fails it after fn took effect.
func (p *Provider) call(ctx context.Context, op, key string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("payments: %s %s: %w", op, key, err)
	}
	fault := p.fault(op, key)
	switch fault {
	case Timeout:
		return fmt.Errorf("payments: %s %s: injected timeout: %w", op, key, context.DeadlineExceeded)
	case Unavailable:
		return domain.Errorf(domain.EUNAVAILABLE, "payments: %s %s: the provider is unavailable (injected)", op, key)
	}
	if err := fn(); err != nil {
		return err
	}
	if fault == LostAnswer {
		return fmt.Errorf("payments: %s %s: the answer was lost after the call took effect (injected): %w", op, key, context.DeadlineExceeded)
	}
	return nil
}
