package changefeed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// leaseWorker is the loop of one owned lease: read a page, hand it to the
// handler, checkpoint only after the handler succeeded.
type leaseWorker struct {
	p      *Processor
	id     string
	cancel context.CancelFunc
	lag    atomic.Int64
	// pending is the _ts (Unix seconds) of the oldest change of the page
	// in hand, the oldest the lease has not applied; 0 when none is known.
	pending atomic.Int64

	// mu serializes the writes to the lease document (renewals from the
	// balancing loop, checkpoints from this loop), so each carries the
	// _etag of the previous one as If-Match.
	mu sync.Mutex
	l  lease
}

// write changes the lease document with If-Match on the version this
// instance last wrote. Any 412 means someone else wrote it: we lost it.
func (w *leaseWorker) write(ctx context.Context, change func(*lease)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.l
	change(&l)
	got, err := w.p.docs.replaceLease(ctx, l)
	if err != nil {
		return err
	}
	w.l = got
	return nil
}

func (w *leaseWorker) snapshot() lease {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.l
}

func (w *leaseWorker) run(ctx context.Context) {
	p := w.p
	start := w.snapshot()
	name, r, cont := w.id, start.FeedRange, start.Continuation
	readFailures := 0
	// The first batch after taking the lease may have been applied by
	// the previous owner, which then stopped before the checkpoint.
	replay := true
	for {
		select {
		case <-p.stopping:
			return
		case <-ctx.Done():
			return
		default:
		}
		if children := p.children(r); children != nil {
			// The range split: the lease becomes one per child
			// (leaseset.go), taken by the next balancing pass.
			if done, _ := w.split(ctx, children); done {
				p.drop(w)
				p.wake()
				return
			}
			// Not split yet (the lease store failed): the lease is still
			// ours; try again after a while.
			readFailures++
			if !p.sleep(ctx, p.backoff(readFailures)) {
				return
			}
			continue
		}
		page, err := p.watched.ReadChangeFeed(ctx, r, cont, p.cfg.MaxItems)
		if err != nil {
			if rangeGone(err) {
				// Re-read the ranges now, so the next turn splits.
				p.stale(ctx)
			}
			readFailures++
			if !p.sleep(ctx, p.backoff(readFailures)) {
				return
			}
			continue
		}
		readFailures = 0
		// The page in hand counts as lag until it is checkpointed.
		w.lag.Store(page.Remaining + int64(len(page.Items)))
		w.pending.Store(writtenAt(page.Items))
		if len(page.Items) == 0 {
			// Nothing new yet: keep the continuation, no checkpoint
			// (nothing was processed), poll again later.
			cont = page.Continuation
			if !p.sleep(ctx, p.cfg.PollEvery) {
				return
			}
			continue
		}
		parked, err := p.apply(ctx, name, Batch{Items: page.Items, MayBeReplay: replay})
		if ctx.Err() != nil {
			// Cancelled between the handler and the checkpoint: the
			// batch will be read again from the old continuation and
			// applied again (at least once; the handlers are idempotent).
			return
		}
		if err == nil {
			now := time.Now().UTC()
			err = w.write(ctx, func(l *lease) {
				l.Continuation = page.Continuation
				l.Heartbeat, l.LastCheckpoint = now, &now
				l.LagEstimate = page.Remaining
				l.DeadLetters += parked
			})
		}
		if err != nil {
			if lostLease(err) {
				p.drop(w)
				return
			}
			// A dead letter or the checkpoint could not be written but
			// the lease is still ours (a throttled or unavailable store):
			// read the batch again from the old continuation and apply it
			// again (the handlers are idempotent) rather than leave the
			// lease owned and unread.
			readFailures++
			replay = true
			if !p.sleep(ctx, p.backoff(readFailures)) {
				return
			}
			continue
		}
		replay = false
		w.lag.Store(page.Remaining)
		if page.Remaining == 0 {
			w.pending.Store(0)
		}
		cont = page.Continuation
	}
}

// writtenAt is the _ts of the first item of a page, the oldest change in
// it (the feed is in write order within a range), or 0 for an empty page.
// It decodes one item per page read, no store call.
func writtenAt(items [][]byte) int64 {
	if len(items) == 0 {
		return 0
	}
	head, err := repo.Decode[struct {
		TS int64 `json:"_ts"`
	}](items[0])
	if err != nil {
		return 0
	}
	return head.TS
}

// wake asks the loop for a balancing pass now.
func (p *Processor) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// sleep waits d, or less if the processor is stopping; it reports false
// when the loop must end now.
func (p *Processor) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.stopping:
		return false
	case <-ctx.Done():
		return false
	}
}

// backoff is Backoff × 2^(attempt-1), at most 100 × Backoff.
func (p *Processor) backoff(attempt int) time.Duration {
	d := p.cfg.Backoff << min(attempt-1, 16)
	return min(d, 100*p.cfg.Backoff)
}

// apply runs the handler on a batch, retrying with exponential backoff.
// After MaxAttempts failures it looks for the poison documents by applying
// the items one at a time, parks each one that still fails MaxAttempts
// times in a dead-letter record, and moves on: one bad document must not
// stop the feed behind it. It returns how many documents it parked, and
// an error when ctx ended or a dead letter could not be written.
func (p *Processor) apply(ctx context.Context, lease string, b Batch) (int, error) {
	err := p.attempts(ctx, lease, b)
	if err == nil || ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if len(b.Items) == 1 {
		if err := p.park(ctx, lease, b.Items[0], err); err != nil {
			return 0, err
		}
		return 1, nil
	}
	parked := 0
	for _, it := range b.Items {
		// The failed attempts may have applied part of the batch.
		err := p.attempts(ctx, lease, Batch{Items: [][]byte{it}, MayBeReplay: true})
		if ctx.Err() != nil {
			return parked, ctx.Err()
		}
		if err == nil {
			continue
		}
		if err := p.park(ctx, lease, it, err); err != nil {
			return parked, err
		}
		parked++
	}
	return parked, nil
}

// attempts tries the handler up to MaxAttempts times. A processor asked
// to stop still finishes the batch it is on (Stop's contract), so only
// ctx ends the retries early.
//
// A throttled or unavailable store (EUNAVAILABLE: a 429 or 503 on Cosmos)
// does not spend an attempt: it says nothing about the documents, and
// parking them for it would leave their copies stale. Those batches are
// retried until the store answers or ctx ends: after the wait a throttle
// asks for (RetryAfter, Cosmos's x-ms-retry-after-ms, as the SDK retries
// a 429), else with backoff. Waiting the backoff instead, which reaches
// 100 × Backoff, left a throttled partition's budget unspent for seconds
// between attempts while each attempt had to redo the batch's reads: a
// fan-out of 10 price changes to 100 carts each at 400 RU/s per container
// took over 5 minutes, and 35 s once the wait was the one asked for.
func (p *Processor) attempts(ctx context.Context, lease string, b Batch) error {
	var err error
	for attempt, tries := 1, 0; attempt <= p.cfg.MaxAttempts; tries++ {
		if tries > 0 {
			t := time.NewTimer(p.retryWait(tries, err))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		if tries == 1 {
			// The failed attempt may have applied part of the batch.
			b.MayBeReplay = true
		}
		err = p.call(ctx, lease, b)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !domain.IsCode(err, domain.EUNAVAILABLE) {
			attempt++
		}
	}
	return err
}

// retryWait is how long to wait before try number tries of a batch that
// failed with err: the wait a throttle asked for, else the backoff.
func (p *Processor) retryWait(tries int, err error) time.Duration {
	if e, ok := errors.AsType[*domain.Error](err); ok && e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return p.backoff(tries)
}

// call runs the handler once under a fresh Meter, so the hook sees the
// Request Units of this batch alone. A panic is a failure of this batch,
// not of the process: the poison hunt then finds the document causing it.
func (p *Processor) call(ctx context.Context, lease string, b Batch) (err error) {
	mctx, m := store.WithMeter(ctx)
	var end func(items int, ru float64, err error)
	if p.cfg.TraceBatch != nil {
		mctx, end = p.cfg.TraceBatch(mctx, lease)
	}
	defer func() {
		if r := recover(); r != nil {
			err = domain.Errorf(domain.EINTERNAL, "handler panic: %v", r)
		}
		_, ru, _ := m.Totals()
		if end != nil {
			end(len(b.Items), ru, err)
		}
		if p.cfg.OnBatch != nil {
			p.cfg.OnBatch(ctx, lease, len(b.Items), ru, err)
		}
	}()
	if err := p.handler(mctx, b); err != nil {
		return fmt.Errorf("%s: %w", lease, err)
	}
	return nil
}
