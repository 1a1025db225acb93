package feedworkers

import (
	"context"
	"encoding/json"
	"time"

	"shop/domain"
	"shop/store"
)

// TypeLease is the discriminator of a lease document in `leases`.
const TypeLease = "lease"

// lease is one feed range of the watched container, held by at most one
// processor instance at a time. It lives in `leases` (pk /id) under the id
// "<processor>.<range>": every write to it is a point operation with
// If-Match on its _etag, so two instances can never both believe they
// acquired, renewed or checkpointed it (optimistic concurrency, no locks).
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
	// LagEstimate is the Remaining the owner saw on its last read.
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

// leaseStore reads and writes the lease documents of one processor.
type leaseStore struct {
	c store.Container
}

func (s leaseStore) read(ctx context.Context, id string) (lease, error) {
	r, err := s.c.Read(ctx, id, id)
	if err != nil {
		return lease{}, err
	}
	var l lease
	if err := json.Unmarshal(r.Item, &l); err != nil {
		return lease{}, domain.Errorf(domain.EINTERNAL, "decode lease %s: %v", id, err)
	}
	return l, nil
}

// ensure creates the lease of a feed range the first time any instance
// sees it. Several instances may race: Create is refused (409) for all but
// one, and everyone then reads the winner's document. A new lease starts
// at the beginning of the feed, or at from's continuation when from is
// set; an existing lease keeps its checkpoint.
func (s leaseStore) ensure(ctx context.Context, processor, watched string, r store.FeedRange, from func(context.Context, store.FeedRange) (string, error)) (lease, error) {
	id := leaseID(processor, r)
	l, err := s.read(ctx, id)
	if !domain.IsCode(err, domain.ENOTFOUND) {
		return l, err
	}
	start := ""
	if from != nil {
		if start, err = from(ctx, r); err != nil {
			return lease{}, err
		}
	}
	b, err := json.Marshal(lease{
		ID: id, Type: TypeLease, SchemaVersion: domain.SchemaVersion,
		Processor: processor, Watched: watched, FeedRange: r, LagEstimate: -1,
		Continuation: start,
	})
	if err != nil {
		return lease{}, domain.Errorf(domain.EINTERNAL, "encode lease: %v", err)
	}
	if _, err := s.c.Create(ctx, id, b); err != nil && !domain.IsCode(err, domain.ECONFLICT) {
		return lease{}, err
	}
	return s.read(ctx, id)
}

// replace writes l with If-Match on the _etag it was read with. A 412
// means another instance wrote the lease since: it was stolen or taken
// over, and the caller no longer owns it.
func (s leaseStore) replace(ctx context.Context, l lease) (lease, error) {
	etag := l.ETag
	l.ETag = ""
	b, err := json.Marshal(l)
	if err != nil {
		return lease{}, domain.Errorf(domain.EINTERNAL, "encode lease: %v", err)
	}
	w, err := s.c.Replace(ctx, l.ID, l.ID, b, &store.WriteOptions{IfMatch: etag})
	if err != nil {
		return lease{}, err
	}
	var out lease
	if err := json.Unmarshal(w.Item, &out); err != nil {
		return lease{}, domain.Errorf(domain.EINTERNAL, "decode lease %s: %v", l.ID, err)
	}
	return out, nil
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
