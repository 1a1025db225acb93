package loadbench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/reference-shop/shop/api/client"
)

// How `shop bench --convergence` decides that the feeds have caught up:
// GET /v1/admin/feeds every convergencePoll, until every processor says
// caughtUp in convergenceStreak answers in a row. A lease loop reads its
// range again every 200 ms when idle (changefeed's PollEvery), and a
// batch's own writes (a rename rewriting products) reach the feed just
// before its checkpoint: one answer may say caught up while that work is
// about to be read. Five answers 100 ms apart span two of those reads.
const (
	convergencePoll   = 100 * time.Millisecond
	convergenceStreak = 5
)

// feedPoll is one answer of GET /v1/admin/feeds, as the convergence runs
// read it.
type feedPoll struct {
	// caughtUp: the shop listed processors and every one said caughtUp.
	caughtUp bool
	// lag is the changes still ahead, summed over the processors.
	lag int64
	// oldestPending is the oldest change not yet applied, in seconds
	// (the largest any processor reported).
	oldestPending float64
	// owners are the instances holding a lease.
	owners []string
	// behind names the processors not caught up and why, for an error.
	behind []string
}

// readPoll reads the processors' figures from an answer.
func readPoll(s client.FeedStatus) feedPoll {
	p := feedPoll{caughtUp: len(s.Processors) > 0}
	for _, proc := range s.Processors {
		p.caughtUp = p.caughtUp && proc.CaughtUp
		if !proc.CaughtUp {
			p.behind = append(p.behind, fmt.Sprintf("%s %d changes behind (%d leases unknown, %d unowned)",
				proc.Processor, proc.LagEstimate, proc.UnknownLeases, proc.UnownedLeases))
		}
		p.lag += int64(proc.LagEstimate)
		if o := proc.OldestPendingSeconds; o != nil {
			p.oldestPending = max(p.oldestPending, float64(*o))
		}
		for _, l := range proc.Leases {
			if l.Owner != "" && !slices.Contains(p.owners, l.Owner) {
				p.owners = append(p.owners, l.Owner)
			}
		}
	}
	return p
}

// settled reports whether an answer counts as caught up: every processor
// caught up, and no lease still held by an instance in gone (a process
// that was killed: its leases show its last lag until they expire, which
// says nothing of what was written after it).
func (p feedPoll) settled(gone map[string]bool) bool {
	if !p.caughtUp {
		return false
	}
	for _, o := range p.owners {
		if gone[o] {
			return false
		}
	}
	return true
}

// streak counts the answers in a row that were caught up.
type streak struct {
	need  int
	n     int
	since time.Time
}

// add counts one answer received at at, and reports whether need of them
// in a row were caught up; since is then the first of them.
func (s *streak) add(at time.Time, ok bool) bool {
	if !ok {
		s.n = 0
		return false
	}
	if s.n == 0 {
		s.since = at
	}
	s.n++
	return s.n >= s.need
}

// feedWatcher polls one shop's feed status and keeps what the runs
// report: the peaks of the backlog and the instances seen holding leases.
type feedWatcher struct {
	c   benchClient
	tok string
	// gone are the instances of a killed process (see settled).
	gone map[string]bool

	mu          sync.Mutex
	peakLag     int64
	peakPending float64
	polls       int
	failed      int
	owners      map[string]bool
	// takenOver is when the first answer showed no lease held by an
	// instance in gone.
	takenOver time.Time
}

func newFeedWatcher(c benchClient, tok string, gone map[string]bool) *feedWatcher {
	return &feedWatcher{c: c, tok: tok, gone: gone, owners: map[string]bool{}}
}

// poll sends one GET /v1/admin/feeds, once: an answer that is not a 200
// (a 503 of a throttled store, a shop killed) is counted as failed and
// read as not caught up.
func (w *feedWatcher) poll(ctx context.Context) (feedPoll, bool) {
	r, err := client.OK(w.c.api.FeedStatusWithResponse(ctx, client.Bearer(w.tok)))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	if err != nil || r.JSON200 == nil {
		w.failed++
		return feedPoll{}, false
	}
	p := readPoll(*r.JSON200)
	w.peakLag = max(w.peakLag, p.lag)
	w.peakPending = max(w.peakPending, p.oldestPending)
	held := false
	for _, o := range p.owners {
		w.owners[o] = true
		held = held || w.gone[o]
	}
	if !held && w.takenOver.IsZero() {
		w.takenOver = time.Now()
	}
	return p, true
}

// during polls until done is closed, for the peaks only.
func (w *feedWatcher) during(ctx context.Context, done <-chan struct{}) {
	t := time.NewTicker(convergencePoll)
	defer t.Stop()
	for {
		w.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-t.C:
		}
	}
}

// until polls until convergenceStreak answers in a row are settled, and
// returns when the first of them was received; an error once limit has
// passed.
func (w *feedWatcher) until(ctx context.Context, limit time.Duration) (time.Time, error) {
	s := streak{need: convergenceStreak}
	deadline := time.Now().Add(limit)
	for {
		p, ok := w.poll(ctx)
		if s.add(time.Now(), ok && p.settled(w.gone)) {
			return s.since, nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, errNotCaughtUp(limit, p)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(convergencePoll):
		}
	}
}

// seen returns the instances seen holding a lease so far.
func (w *feedWatcher) seen() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]bool, len(w.owners))
	for o := range w.owners {
		out[o] = true
	}
	return out
}
