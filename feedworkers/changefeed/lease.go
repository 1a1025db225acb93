package changefeed

import (
	"time"

	"github.com/reference-shop/shop/store"
)

// TypeLease is the discriminator of a lease document in the lease
// container.
const TypeLease = "lease"

// lease is one feed range of the watched container, held by at most one
// processor instance at a time. It lives in the lease container (pk /id)
// under the id "<processor>.<range>": every write to it is a point
// operation with If-Match on its _etag (docs.go), so two instances can
// never both believe they acquired, renewed or checkpointed it
// (optimistic concurrency, no locks).
type lease struct {
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schemaVersion"`
	Processor     string          `json:"processor"`
	Watched       string          `json:"watched"`
	FeedRange     store.FeedRange `json:"feedRange"`
	// Owner is the instance holding the lease; "" when released.
	Owner string `json:"owner"`
	// Continuation is the checkpoint: the feed position after the last
	// batch the handler finished. "" reads the feed from the beginning.
	Continuation string `json:"continuation"`
	// Heartbeat is renewed by the owner; older than the expiry, the lease
	// is free for anyone to take.
	Heartbeat      time.Time  `json:"heartbeat"`
	LastCheckpoint *time.Time `json:"lastCheckpoint,omitempty"`
	// LagEstimate is the Remaining the owner saw on its last read, as of
	// its last checkpoint or heartbeat.
	LagEstimate int64 `json:"lagEstimate"`
	// DeadLetters counts the documents parked by this lease. It is written
	// with the checkpoint that moves past them, in the same replace, so a
	// replayed batch does not count them twice.
	DeadLetters int    `json:"deadLetters"`
	ETag        string `json:"_etag,omitempty"`
}

func leaseID(processor string, r store.FeedRange) string { return processor + "." + r.String() }

// free reports whether anyone may take the lease: released, or its owner
// stopped renewing it.
func (l lease) free(now time.Time, expiry time.Duration) bool {
	return l.Owner == "" || now.Sub(l.Heartbeat) > expiry
}

// plan is one balancing decision: which leases this instance should take.
// Each instance aims at ceil(leases / live instances). It takes free
// leases first; when none is free and it holds fewer than its share, it
// steals ONE lease from the busiest owner holding at least two more than
// itself (one at a time, so instances converge instead of trading leases
// back and forth).
func plan(all []lease, self string, now time.Time, expiry time.Duration) (take []lease) {
	owned := map[string]int{self: 0}
	for _, l := range all {
		if !l.free(now, expiry) {
			owned[l.Owner]++
		}
	}
	target := (len(all) + len(owned) - 1) / len(owned)
	mine := owned[self]
	for _, l := range all {
		if mine >= target {
			return take
		}
		if l.free(now, expiry) {
			take = append(take, l)
			mine++
		}
	}
	if mine >= target || len(take) > 0 {
		return take
	}
	busiest, most := "", mine+1
	for owner, n := range owned {
		if owner != self && (n > most || (n == most && busiest != "" && owner < busiest)) {
			busiest, most = owner, n
		}
	}
	if busiest == "" {
		return nil
	}
	for _, l := range all {
		if l.Owner == busiest && !l.free(now, expiry) {
			return []lease{l}
		}
	}
	return nil
}
