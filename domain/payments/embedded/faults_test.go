package embedded_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/embedded"
)

// on injects fault into the calls of op only.
func on(op string, fault embedded.Fault) func(string, string) embedded.Fault {
	return func(o, _ string) embedded.Fault {
		if o == op {
			return fault
		}
		return embedded.NoFault
	}
}

// TestFaultsBeforeTheCallDoNothing: a Timeout or an Unavailable fails the
// call before it does anything, and a retry with the same key does it
// once.
func TestFaultsBeforeTheCallDoNothing(t *testing.T) {
	tests := []struct {
		fault embedded.Fault
		is    func(error) bool
		want  string
	}{
		{embedded.Timeout, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }, "an error wrapping context.DeadlineExceeded"},
		{embedded.Unavailable, func(err error) bool { return domain.ErrorCode(err) == domain.EUNAVAILABLE }, "EUNAVAILABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			p := open(t, "")
			a := authorization()
			p.InjectFaults(on(payments.StepAuthorize, tt.fault))
			if _, err := p.Authorize(ctx, a); !tt.is(err) {
				t.Fatalf("Authorize: error %v, want %s", err, tt.want)
			}
			if got := p.ByOrder(a.OrderID); len(got) != 0 {
				t.Fatalf("after a failed Authorize the order has payments %v, want none", got)
			}

			p.InjectFaults(on(payments.StepCapture, tt.fault))
			pay, err := p.Authorize(ctx, a)
			if err != nil {
				t.Fatalf("Authorize retried: %v", err)
			}
			capture := payments.Key(a.OrderID, payments.StepCapture)
			if _, err := p.Capture(ctx, pay.ID, capture); !tt.is(err) {
				t.Fatalf("Capture: error %v, want %s", err, tt.want)
			}
			if got, _ := p.Get(ctx, pay.ID); got.Status != payments.Authorized {
				t.Fatalf("after a failed Capture the payment is %q, want %q", got.Status, payments.Authorized)
			}

			p.InjectFaults(nil)
			if got, err := p.Capture(ctx, pay.ID, capture); err != nil || got.Status != payments.Captured {
				t.Errorf("Capture retried = %q, %v; want %q", got.Status, err, payments.Captured)
			}
			if got := p.ByOrder(a.OrderID); len(got) != 1 {
				t.Errorf("the order has %d payments, want 1: %v", len(got), got)
			}
		})
	}
}

// TestLostAnswerTookEffect: a LostAnswer fails like a timeout, but the
// call took effect; the retry with the same key answers it and does
// nothing again.
func TestLostAnswerTookEffect(t *testing.T) {
	p := open(t, "")
	a := authorization()
	p.InjectFaults(on(payments.StepAuthorize, embedded.LostAnswer))
	if _, err := p.Authorize(ctx, a); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Authorize: error %v, want an error wrapping context.DeadlineExceeded", err)
	}
	held := p.ByOrder(a.OrderID)
	if len(held) != 1 || held[0].Status != payments.Authorized {
		t.Fatalf("after a lost answer the order has %v, want one authorization", held)
	}

	p.InjectFaults(on(payments.StepVoid, embedded.LostAnswer))
	pay, err := p.Authorize(ctx, a)
	if err != nil || pay.ID != held[0].ID {
		t.Fatalf("Authorize retried = %s, %v; want %s", pay.ID, err, held[0].ID)
	}
	void := payments.Key(a.OrderID, payments.StepVoid)
	if _, err := p.Void(ctx, pay.ID, void); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Void: error %v, want an error wrapping context.DeadlineExceeded", err)
	}
	if got, _ := p.Get(ctx, pay.ID); got.Status != payments.Voided {
		t.Fatalf("after a lost answer to Void the payment is %q, want %q", got.Status, payments.Voided)
	}

	p.InjectFaults(nil)
	if got, err := p.Void(ctx, pay.ID, void); err != nil || got.Status != payments.Voided {
		t.Errorf("Void retried = %q, %v; want %q", got.Status, err, payments.Voided)
	}
	if got := p.ByOrder(a.OrderID); len(got) != 1 {
		t.Errorf("the order has %d payments, want 1: %v", len(got), got)
	}
}

// TestFaultSeesOpAndKey: the fault function is asked with the step and
// the call's key (the payment id for Get), so a test can fail one step
// of one order.
func TestFaultSeesOpAndKey(t *testing.T) {
	p := open(t, "")
	a := authorization()
	pay, err := p.Authorize(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ op, key string }
	var calls []call
	p.InjectFaults(func(op, key string) embedded.Fault {
		calls = append(calls, call{op, key})
		return embedded.NoFault
	})
	capture := payments.Key(a.OrderID, payments.StepCapture)
	if _, err := p.Capture(ctx, pay.ID, capture); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(ctx, pay.ID); err != nil {
		t.Fatal(err)
	}
	// Each call asks once.
	want := []call{{payments.StepCapture, capture}, {"get", pay.ID}}
	if len(calls) != len(want) {
		t.Fatalf("the fault function was asked %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("ask %d = %v, want %v", i, calls[i], want[i])
		}
	}
}

// TestDoneContextDoesNothing: a call whose context is already done fails
// with the context's error and does nothing.
func TestDoneContextDoesNothing(t *testing.T) {
	p := open(t, "")
	a := authorization()
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Authorize(done, a); !errors.Is(err, context.Canceled) {
		t.Errorf("Authorize: error %v, want context.Canceled", err)
	}
	if got := p.ByOrder(a.OrderID); len(got) != 0 {
		t.Errorf("the order has payments %v, want none", got)
	}
}
