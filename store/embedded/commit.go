package embedded

import (
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"

	"shop/domain"
)

// Group commit: concurrent writes share one bbolt transaction and so one
// fsync (db.Batch), instead of queueing one fsync each behind bbolt's
// single writer. A write still returns only after the transaction holding
// it is on disk, so an acknowledged write survives a crash as before.
const (
	// batchDelay is how long the first write of a group waits for others
	// to join it: long enough that writers arriving during one fsync form
	// the next group, short against a lone write's own commit.
	batchDelay = 500 * time.Microsecond
	// batchSize starts a group's commit without waiting once this many
	// writes have joined it.
	batchSize = 256
)

// update runs fn in a group commit. bbolt may run fn more than once (when
// another write of the group fails, the group is retried without it), so
// fn must set its results afresh on every run; the etags and timestamps of
// a write are fixed before it is handed to update, and LSNs are taken
// inside the transaction, so a rerun commits the same thing.
//
// fn must return a *domain.Error (a refused precondition, a conflict, a
// missing item) only before it has written anything: that error is kept
// aside and fn reports success, so the writes of the rest of the group
// still commit and the refused write commits nothing. Any other error
// aborts the transaction: bbolt retries the group without fn and then
// reruns fn alone.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	var refused error
	err := s.db.Batch(func(tx *bolt.Tx) error {
		refused = nil
		err := fn(tx)
		if _, ok := errors.AsType[*domain.Error](err); ok {
			refused = err
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return refused
}
