package embedded

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
)

// Group commit: concurrent writes share one bbolt transaction and so one
// fsync, instead of queueing one fsync each behind bbolt's single writer.
// The writes that arrive while a group commits form the next group, which
// commits as soon as the file is free: a lone write waits for nobody, and
// under load a group holds what arrived during one fsync. (bbolt's own
// db.Batch closes a group on a timer instead, so while one group syncs
// the writes arriving meanwhile split into many small groups that each
// pay their own fsync.) A write returns only after the transaction holding
// it is on disk, so an acknowledged write survives a crash as before.
type groupCommit struct {
	db *bolt.DB

	mu      sync.Mutex
	queue   []*commitCall
	running bool // a leader is committing a group

	// commits counts the transactions committed (Store.Commits).
	commits atomic.Uint64
}

// maxGroup bounds one transaction: the writes beyond it form the next.
const maxGroup = 512

type commitCall struct {
	fn func(*bolt.Tx) error
	// done receives errLead (commit the next group), errSolo (run fn
	// alone) or the group's result.
	done chan error
}

var (
	errLead = errors.New("lead the next group commit")
	errSolo = errors.New("run alone: the function failed in a group")
	// errNoWrite is what a function of the group returns when it wrote
	// nothing (a refused write, Store.update): a transaction of such
	// functions alone is rolled back, not committed, as it has nothing to
	// make durable, and each of them is told it ran.
	errNoWrite = errors.New("wrote nothing")
)

// update runs fn in a group commit. fn may run more than once (when
// another write of its group fails, the group is retried without it), so
// fn must set its results afresh on every run. A rerun is harmless: LSNs
// come from the transaction, which the retry rolled back, and an _etag
// made in a run that did not commit (Patch and batches make theirs inside
// fn) is simply never seen; only the committing run's results return.
//
// fn must return a *domain.Error (a refused precondition, a conflict, a
// missing item) only before it has written anything: that error is kept
// aside and fn reports that it wrote nothing, so the writes of the rest
// of the group still commit and the refused write commits nothing; a
// group of refusals alone makes no commit, and no fsync. Any other error
// aborts the transaction: the group is retried without fn, which then
// runs alone.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	var refused error
	err := s.group.run(func(tx *bolt.Tx) error {
		refused = nil
		err := fn(tx)
		if _, ok := errors.AsType[*domain.Error](err); ok {
			refused = err
			return errNoWrite
		}
		return err
	})
	if err != nil {
		return err
	}
	return refused
}

// run queues fn and waits for the transaction holding it. The first
// caller finding no group committing leads: it commits the queue as one
// group, then hands the lead to the first write queued meanwhile (which
// commits the next group) and returns. Each leader commits one group, so
// no caller waits for more than the group before its own.
func (g *groupCommit) run(fn func(*bolt.Tx) error) error {
	call := &commitCall{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, call)
	lead := !g.running
	g.running = true
	g.mu.Unlock()
	if !lead {
		if err := <-call.done; err != errLead {
			return g.result(call, err)
		}
	}
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	calls := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	g.commit(calls)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- errLead
	} else {
		g.running = false
		g.queue = nil
	}
	g.mu.Unlock()
	return g.result(call, <-call.done)
}

// result runs fn alone when its group could not hold it.
func (g *groupCommit) result(call *commitCall, err error) error {
	if err == errSolo {
		if err := g.update(call.fn); err != errNoWrite {
			return err
		}
		return nil
	}
	return err
}

// update is bbolt's Update, counted when it commits.
func (g *groupCommit) update(fn func(*bolt.Tx) error) error {
	err := g.db.Update(fn)
	if err == nil {
		g.commits.Add(1)
	}
	return err
}

// Commits is how many write transactions of items the store has
// committed since it was opened: one per write made alone, one per group
// of concurrent writes, a batch of several items as one. Each is a bbolt
// commit, made durable by its fdatasyncs (the pages, then the meta page)
// unless Options.NoSync: the figure the write path's cost rests on
// (`shop cost --writepath` reads it around each operation). The store's
// own upkeep (a container's definition, a split, the TTL purge) is not
// counted.
func (s *Store) Commits() uint64 { return s.group.commits.Load() }

// commit runs calls in one transaction. A call that fails is taken out
// and told to run alone, and the rest are retried, so one failing write
// never undoes the others (the rule bbolt's db.Batch follows too). A
// transaction in which no call wrote is rolled back (errNoWrite).
func (g *groupCommit) commit(calls []*commitCall) {
	for len(calls) > 0 {
		failed := -1
		err := g.update(func(tx *bolt.Tx) error {
			wrote := false
			for i, c := range calls {
				switch err := safelyCall(c.fn, tx); err {
				case nil:
					wrote = true
				case errNoWrite:
				default:
					failed = i
					return err
				}
			}
			if !wrote {
				return errNoWrite
			}
			return nil
		})
		if err == errNoWrite {
			err = nil
		}
		if failed < 0 {
			for _, c := range calls {
				c.done <- err
			}
			return
		}
		calls[failed].done <- errSolo
		calls = append(calls[:failed], calls[failed+1:]...)
	}
}

// safelyCall turns a panic of fn into an error, so that it fails only its
// own write: fn panics again when it runs alone, in its own goroutine.
func safelyCall(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(tx)
}
