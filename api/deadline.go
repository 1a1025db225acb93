package api

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineContext is parent with a deadline whose timer starts only when
// something waits on it (Done): a context.WithDeadline per request costs
// a timer, a channel and a child in the parent's list, and a screen that
// makes one quick store read never waits on its context at all. What a
// caller can see is context.WithDeadline's: Deadline is the deadline, Err
// is DeadlineExceeded once it has passed (or the parent's error), Done is
// a channel closed at the deadline or when the parent ends, and a context
// derived from it is cancelled with it.
//
// Once Done was called, the context is the real context.WithDeadline's,
// Value included: context.WithCancel of this one finds that context's
// cancellation through Value and registers with it, rather than starting
// a goroutine to watch Done.
type deadlineContext struct {
	context.Context // the parent
	deadline        time.Time
	once            sync.Once
	timed           atomic.Pointer[timedContext]
}

type timedContext struct {
	context.Context
	cancel context.CancelFunc
}

// withLazyDeadline returns parent with deadline d. Call its release when
// done with it, as the cancel of context.WithDeadline.
func withLazyDeadline(parent context.Context, d time.Time) *deadlineContext {
	return &deadlineContext{Context: parent, deadline: d}
}

// release stops the timer, if one was started, and cancels what was
// derived from the context.
func (c *deadlineContext) release() {
	if t := c.timed.Load(); t != nil {
		t.cancel()
	}
}

func (c *deadlineContext) Deadline() (time.Time, bool) { return c.deadline, true }

// timer is the real deadline context, started on first use.
func (c *deadlineContext) timer() *timedContext {
	c.once.Do(func() {
		ctx, cancel := context.WithDeadline(c.Context, c.deadline)
		c.timed.Store(&timedContext{ctx, cancel})
	})
	return c.timed.Load()
}

func (c *deadlineContext) Done() <-chan struct{} { return c.timer().Done() }

func (c *deadlineContext) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		// Past it: the real context, so that context.Cause says so too.
		return c.timer().Err()
	}
	return nil
}

func (c *deadlineContext) Value(key any) any {
	if t := c.timed.Load(); t != nil {
		return t.Value(key)
	}
	return c.Context.Value(key)
}
