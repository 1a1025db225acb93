package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// splitGuard keeps a split from moving a container's buckets under an
// operation. Every operation holds it shared from the moment it resolves
// the container's state until it returns (Store.acquire); a split holds
// it exclusively, so it waits for the operations in flight and the ones
// after it see the new layout. Every definition of the container shares
// it (EnsureContainer passes it on, as it does the orderSet).
type splitGuard struct {
	mu sync.RWMutex
	// gen counts the container's splits; a state of an older generation
	// names buckets that may be gone. Written under mu held exclusively.
	gen uint64
}

// acquire returns the container's current state, held against a split
// until release. An operation acquires once: a second shared hold while
// a split waits would deadlock (sync.RWMutex).
func (s *Store) acquire(name string) (*containerState, error) {
	for {
		st, err := s.state(name)
		if err != nil {
			return nil, err
		}
		st.guard.mu.RLock()
		if st.gen == st.guard.gen {
			return st, nil
		}
		// A split replaced this state between the lookup and the hold.
		st.guard.mu.RUnlock()
	}
}

func (st *containerState) release() { st.guard.mu.RUnlock() }

// SplitPartition splits the physical partition of container that serves
// feed range r into two halves of its hash range, as Cosmos splits a
// partition that outgrew its storage or throughput, and returns the two
// new feed ranges. Afterwards r is gone (ReadChangeFeed of r fails with
// store.ErrFeedRangeGone) and a continuation of r is valid on each half.
//
// Every item, with its change-feed entry and its LSN, moves to the half
// its partition key hashes into, and each half's LSNs go on from r's
// latest (as Cosmos's children inherit the parent's LSNs). So a half read
// from a continuation of r yields exactly the changes of its keys after
// that position: none lost, none from before. The order indexes are
// rebuilt in the halves. It is one transaction, recorded in the file: a
// reopened store has the halves. It waits for the container's operations
// in flight, and the next ones wait for it.
//
// EINVALID if r is not one of the container's ranges or too narrow to
// halve; ENOTFOUND if the container does not exist.
func (s *Store) SplitPartition(ctx context.Context, container string, r store.FeedRange) ([]store.FeedRange, error) {
	if err := ctx.Err(); err != nil {
		return nil, canceled(err)
	}
	first, err := s.state(container)
	if err != nil {
		return nil, err
	}
	guard := first.guard
	guard.mu.Lock()
	defer guard.mu.Unlock()
	// EnsureContainer takes only s.mu: hold it too, so the definition
	// cannot change while the layout does.
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.containers[container]
	i, err := rangeIndex(st.ranges, r)
	if err != nil {
		return nil, err
	}
	parent := st.parts[i]
	if parent.Hi-parent.Lo < 2 {
		return nil, domain.Errorf(domain.EINVALID, "feed range %s is too narrow to split", r)
	}
	next := 0
	for _, p := range slices.Concat(st.parts, st.split) {
		next = max(next, p.Bucket+1)
	}
	mid := parent.Lo + (parent.Hi-parent.Lo)/2
	halves := []partition{{Bucket: next, Lo: parent.Lo, Hi: mid}, {Bucket: next + 1, Lo: mid, Hi: parent.Hi}}
	rec := st.record(st.def)
	rec.Layout = slices.Concat(st.parts[:i], halves, st.parts[i+1:])
	rec.Partitions = len(rec.Layout)
	rec.Split = append(slices.Clone(st.split), parent)
	split := newContainerState(rec)
	split.guard, split.gen = guard, guard.gen+1
	for j, p := range split.parts {
		if k := slices.Index(st.parts, p); k >= 0 {
			split.meters[j] = st.meters[k]
		}
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := moveHalves(tx, st, i, split, halves); err != nil {
			return err
		}
		for _, oi := range st.orders.load() {
			if tx.Bucket(oi.buckets[i]) == nil {
				continue
			}
			if err := tx.DeleteBucket(oi.buckets[i]); err != nil {
				return err
			}
		}
		if err := syncOrderIndexes(tx, split, nil, split.orders.load()); err != nil {
			return err
		}
		return tx.Bucket(containersBucket).Put([]byte(container), raw)
	})
	if err != nil {
		return nil, storeError(err)
	}
	guard.gen = split.gen
	s.containers[container] = split
	return rangesOf(halves), nil
}

// moveHalves moves the items and change-feed entries of partition i of
// st into the buckets of the halves (partitions of split), each to the
// half its partition key hashes into, and deletes the parent's buckets.
// The halves' sequences start at the parent's: their next LSNs follow
// every LSN the parent gave out.
func moveHalves(tx *bolt.Tx, st *containerState, i int, split *containerState, halves []partition) error {
	type half struct{ items, feed *bolt.Bucket }
	var hs []half
	for _, h := range halves {
		j := slices.Index(split.parts, h)
		items, err := tx.CreateBucket(split.items[j])
		if err != nil {
			return err
		}
		feed, err := tx.CreateBucket(split.feed[j])
		if err != nil {
			return err
		}
		hs = append(hs, half{items, feed})
	}
	items, feed := tx.Bucket(st.items[i]), tx.Bucket(st.feed[i])
	into := func(key []byte) half {
		pk, _ := splitItemKey(key)
		return hs[locate(halves, pk)]
	}
	// Values alias the parent's pages, deleted below: copy them.
	err := items.ForEach(func(k, v []byte) error {
		return into(k).items.Put(bytes.Clone(k), bytes.Clone(v))
	})
	if err != nil {
		return err
	}
	err = feed.ForEach(func(lsn, key []byte) error {
		return into(key).feed.Put(bytes.Clone(lsn), bytes.Clone(key))
	})
	if err != nil {
		return err
	}
	for _, h := range hs {
		if err := h.feed.SetSequence(feed.Sequence()); err != nil {
			return err
		}
	}
	if err := tx.DeleteBucket(st.items[i]); err != nil {
		return err
	}
	return tx.DeleteBucket(st.feed[i])
}

// splitFrom returns the partition that split whose feed range is r.
func (st *containerState) splitFrom(r string) (partition, bool) {
	for _, p := range st.split {
		if p.feedRange().String() == r {
			return p, true
		}
	}
	return partition{}, false
}
