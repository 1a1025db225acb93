package changefeed

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Follow places a position at the present end of every feed range of
// watched and returns; from then on, in the background until ctx ends, it
// reads each range and hands every page of changes to handle, so every
// change written after Follow returned reaches handle. It holds its
// positions in memory only: no leases, no checkpoints. So every process
// that follows a container sees every change (a Processor's leases share
// the changes out among the instances, one instance per change), and
// nothing is left behind in the lease container when the process goes. It
// is for a consumer that can start over from nothing, such as a cache of
// this process: after a restart it starts at the end of the feed again.
//
// Each range is read to its end every every (200 ms when 0); a page with
// no items costs what one point read does, so a follower spends about
// ranges/every reads per second on each container it follows. A failed
// read (throttled, unavailable) is tried again at the next round, and a
// range that split goes on in its children from the same continuation
// (ReadChangeFeed's contract). handle must not block for long: the next
// read waits for it.
func Follow(ctx context.Context, watched store.Container, every time.Duration, handle func(items [][]byte)) error {
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	f := follower{c: watched, handle: handle, at: map[store.FeedRange]string{}}
	if err := f.start(ctx); err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			f.round(ctx)
		}
	}()
	return nil
}

// follower is Follow's state: the continuation reached in each range.
type follower struct {
	c      store.Container
	handle func(items [][]byte)
	at     map[store.FeedRange]string
}

// start places a position at the present end of every feed range
// (FeedFromNow sends no request), retrying while the store is throttled
// or unavailable until ctx ends.
func (f *follower) start(ctx context.Context) error {
	for {
		ranges, err := f.c.ReadFeedRanges(ctx)
		if err == nil {
			for _, r := range ranges {
				page, err := f.c.ReadChangeFeed(ctx, r, store.FeedFromNow, 1)
				if err != nil {
					return err
				}
				f.at[r] = page.Continuation
			}
			return nil
		}
		if !domain.IsCode(err, domain.EUNAVAILABLE) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// round reads each range up to its end.
func (f *follower) round(ctx context.Context) {
	for r, cont := range f.at {
		for ctx.Err() == nil {
			page, err := f.c.ReadChangeFeed(ctx, r, cont, 100)
			if errors.Is(err, store.ErrFeedRangeGone) {
				f.split(ctx, r, cont)
				break
			}
			if err != nil {
				break // throttled or unavailable: the next round tries again
			}
			cont = page.Continuation
			f.at[r] = cont
			if len(page.Items) == 0 {
				break
			}
			f.handle(page.Items)
		}
	}
}

// split replaces r by the current ranges it contains, each starting at
// r's continuation. Ranges read at the next round.
func (f *follower) split(ctx context.Context, r store.FeedRange, cont string) {
	ranges, err := f.c.ReadFeedRanges(ctx)
	if err != nil {
		return // r fails again at the next round, which tries again
	}
	delete(f.at, r)
	for _, child := range ranges {
		if r.Contains(child) {
			f.at[child] = cont
		}
	}
}
