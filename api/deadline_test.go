package api

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

type ctxKey struct{}

// TestLazyDeadlineIsADeadline: what a caller sees is what
// context.WithDeadline gives it, whether or not the timer was started.
func TestLazyDeadlineIsADeadline(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")

	t.Run("BeforeTheDeadline", func(t *testing.T) {
		d := time.Now().Add(time.Hour)
		ctx := withLazyDeadline(parent, d)
		defer ctx.release()
		if got, ok := ctx.Deadline(); !ok || !got.Equal(d) {
			t.Errorf("Deadline = %v, %v", got, ok)
		}
		if ctx.Err() != nil || ctx.Value(ctxKey{}) != "v" {
			t.Errorf("Err = %v, Value = %v", ctx.Err(), ctx.Value(ctxKey{}))
		}
		if ctx.timed.Load() != nil {
			t.Error("the timer started before anything waited")
		}
	})

	t.Run("PastTheDeadlineWithoutWaiting", func(t *testing.T) {
		ctx := withLazyDeadline(parent, time.Now().Add(-time.Millisecond))
		defer ctx.release()
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err = %v", err)
		}
		if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Cause = %v", err)
		}
		select {
		case <-ctx.Done():
		default:
			t.Error("Done is open past the deadline")
		}
	})

	t.Run("DoneClosesAtTheDeadline", func(t *testing.T) {
		ctx := withLazyDeadline(parent, time.Now().Add(20*time.Millisecond))
		defer ctx.release()
		<-ctx.Done() // the test's own timeout catches a Done that never closes
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || ctx.Value(ctxKey{}) != "v" {
			t.Errorf("Err = %v, Value = %v", ctx.Err(), ctx.Value(ctxKey{}))
		}
	})

	t.Run("TheParentEnds", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		ctx := withLazyDeadline(p, time.Now().Add(time.Hour))
		defer ctx.release()
		cancel()
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Err = %v, want the parent's", ctx.Err())
		}
		<-ctx.Done()
	})

	t.Run("ADerivedContextEndsWithIt", func(t *testing.T) {
		ctx := withLazyDeadline(parent, time.Now().Add(time.Hour))
		// A context that context.WithCancel cannot register with gets a
		// goroutine watching it: 100 children would be 100 goroutines.
		before := runtime.NumGoroutine()
		children := make([]context.Context, 100)
		for i := range children {
			var cancel context.CancelFunc
			children[i], cancel = context.WithCancel(ctx)
			defer cancel()
		}
		if n := runtime.NumGoroutine() - before; n >= len(children)/2 {
			t.Errorf("deriving %d contexts started %d goroutines: they should register with the deadline's context", len(children), n)
		}
		child := children[0]
		ctx.release() // the handler returns: its timer is stopped, its children cancelled
		<-child.Done()
		if !errors.Is(child.Err(), context.Canceled) {
			t.Errorf("child Err = %v", child.Err())
		}
	})
}
