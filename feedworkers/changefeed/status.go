package changefeed

import (
	"context"
	"math"
	"time"

	"github.com/reference-shop/shop/domain"
)

// ProcessorStatus is the state of one processor (GET /v1/admin/feeds
// lists one per processor): how far behind it is, in the figures an
// operator reads first, then each of its leases. Summarize derives the
// figures from the leases, so they cost nothing beyond Status's reads.
type ProcessorStatus struct {
	Processor string `json:"processor"`
	// CaughtUp: every lease is held by a live instance and had read its
	// feed range to the end when its owner last looked (see Summarize).
	CaughtUp bool `json:"caughtUp"`
	// LagEstimate is the changes still ahead of the processor: the sum of
	// its leases' lag estimates, the unknown ones left out.
	LagEstimate int64 `json:"lagEstimate"`
	// UnknownLeases counts the leases whose lag is not known yet (-1: not
	// read since they were created or split).
	UnknownLeases int `json:"unknownLeases"`
	// UnownedLeases counts the leases no live instance holds (released,
	// or their owner stopped renewing them): their changes wait until a
	// balancing pass takes them, after the lease expiry for a crashed owner.
	UnownedLeases int `json:"unownedLeases"`
	// LastCheckpoint is the newest checkpoint of the leases (nil before
	// the first), CheckpointAgeSeconds how long before the answer it was.
	LastCheckpoint       *time.Time `json:"lastCheckpoint"`
	CheckpointAgeSeconds *float64   `json:"checkpointAgeSeconds"`
	// OldestPendingSeconds is how long ago the oldest change not yet
	// applied was written: 0 when no lease is behind; nil when no lease
	// that is behind knows it (only this instance's leases do). With some
	// of them unknown it is a lower bound.
	OldestPendingSeconds *float64 `json:"oldestPendingSeconds"`
	// DeadLetters is the documents its leases parked.
	DeadLetters int           `json:"deadLetters"`
	Leases      []LeaseStatus `json:"leases"`
}

// LeaseStatus is the state of one lease.
type LeaseStatus struct {
	Lease string `json:"lease"`
	// Owner is the instance holding it; "" when released or expired.
	Owner string `json:"owner"`
	// LagEstimate is how many changes were still ahead of the lease on
	// its owner's last read; -1 before the first read. For a lease held by
	// another instance, as of that instance's last heartbeat or checkpoint.
	LagEstimate    int64      `json:"lagEstimate"`
	LastCheckpoint *time.Time `json:"lastCheckpoint"`
	// OldestPending is when the oldest change the lease has not applied
	// was written (its _ts, whole seconds); nil when none is pending or
	// the lease is not held by this instance.
	OldestPending *time.Time `json:"oldestPending"`
	DeadLetters   int        `json:"deadLetters"`
}

// Status reports every lease of the processor. A lease this instance
// holds costs no request: its loop keeps the document as it last wrote it
// (every write to it is this instance's, with If-Match, until another
// takes it, which the next renewal finds out within RenewEvery), and its
// lag and oldest pending change in memory, fresher than the document.
// Each other lease costs one point read (1 RU on Cosmos; a handful of feed
// ranges), so the leases other instances own are shown too. A poll of
// GET /v1/admin/feeds therefore spends nothing from the lease container's
// throughput while one instance holds every lease.
func (p *Processor) Status(ctx context.Context) ([]LeaseStatus, error) {
	ids := p.leaseIDs()
	out := make([]LeaseStatus, 0, len(ids))
	now := time.Now()
	for _, id := range ids {
		p.mu.Lock()
		w := p.owned[id]
		p.mu.Unlock()
		var l lease
		if w != nil {
			l = w.snapshot()
		} else {
			var err error
			l, err = p.docs.readLease(ctx, id)
			if domain.IsCode(err, domain.ENOTFOUND) {
				// Split since the lease set was last synced.
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		st := LeaseStatus{Lease: l.ID, LagEstimate: l.LagEstimate, LastCheckpoint: l.LastCheckpoint, DeadLetters: l.DeadLetters}
		if !l.free(now, p.cfg.LeaseExpiry) {
			st.Owner = l.Owner
		}
		if w != nil && l.Owner == p.cfg.Instance {
			st.LagEstimate = w.lag.Load()
			if ts := w.pending.Load(); ts > 0 && st.LagEstimate > 0 {
				t := time.Unix(ts, 0).UTC()
				st.OldestPending = &t
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// Summarize returns the status of the processor named processor from its
// leases, as of now; it reads nothing.
//
// A processor is caught up when it has leases, each held by a live
// instance (its heartbeat within the lease expiry) and each at lag 0. The
// lag of a lease held here is the one its loop saw on its last read
// (every PollEvery when idle); of a lease held elsewhere, the one its
// owner wrote with its last heartbeat or checkpoint, at most RenewEvery
// old while that owner lives. An owner that crashed keeps showing its
// last lag until its lease expires; then the lease is unowned, and the
// processor is not caught up until a live instance has taken it and read
// its range.
func Summarize(processor string, leases []LeaseStatus, now time.Time) ProcessorStatus {
	s := ProcessorStatus{Processor: processor, Leases: leases, CaughtUp: len(leases) > 0}
	if s.Leases == nil {
		s.Leases = []LeaseStatus{}
	}
	var oldest *time.Time
	pendingKnown := true
	for _, l := range leases {
		s.DeadLetters += l.DeadLetters
		if l.Owner == "" {
			s.UnownedLeases++
			s.CaughtUp = false
		}
		switch {
		case l.LagEstimate < 0:
			s.UnknownLeases++
			s.CaughtUp, pendingKnown = false, false
		case l.LagEstimate > 0:
			s.LagEstimate += l.LagEstimate
			s.CaughtUp = false
			if l.OldestPending == nil {
				pendingKnown = false
			} else if oldest == nil || l.OldestPending.Before(*oldest) {
				oldest = l.OldestPending
			}
		}
		if c := l.LastCheckpoint; c != nil && (s.LastCheckpoint == nil || c.After(*s.LastCheckpoint)) {
			s.LastCheckpoint = c
		}
	}
	if s.LastCheckpoint != nil {
		s.CheckpointAgeSeconds = ageSeconds(now, *s.LastCheckpoint)
	}
	switch {
	case oldest != nil:
		s.OldestPendingSeconds = ageSeconds(now, *oldest)
	case pendingKnown:
		zero := 0.0
		s.OldestPendingSeconds = &zero
	}
	return s
}

// ageSeconds is how long before now t was, in seconds to a tenth, never
// below 0 (another instance's clock may be ahead of ours).
func ageSeconds(now, t time.Time) *float64 {
	a := math.Round(max(now.Sub(t).Seconds(), 0)*10) / 10
	return &a
}
