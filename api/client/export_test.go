package client

import (
	"context"
	"time"
)

// FakeClock makes Retry read a clock that stands at start and moves only
// when Retry waits, and records the waits; undo restores the real clock.
func FakeClock(start time.Time) (waits *[]time.Duration, undo func()) {
	t := start
	waits = new([]time.Duration)
	oldNow, oldSleep := now, sleep
	now = func() time.Time { return t }
	sleep = func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		*waits = append(*waits, d)
		t = t.Add(d)
		return nil
	}
	return waits, func() { now, sleep = oldNow, oldSleep }
}
