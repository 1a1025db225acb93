package changefeed

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The lease set follows the watched container's feed ranges through
// splits, as the .NET change-feed processor's does
// (PartitionSynchronizerCore):
//
//   - It is built from the leases that exist. A feed range that an
//     existing lease overlaps is that lease's: after a split, the
//     parent's lease covers its children until it is split. Only a range
//     no lease overlaps gets a new lease (at the beginning of the feed,
//     or with StartFromNow at the present), so a restart after a split
//     neither replays the parent's history into the children nor skips
//     what was written while no processor ran.
//   - The owner of a lease whose range split replaces it by one lease per
//     child, each starting from the parent's checkpoint: the port
//     promises a continuation of a range that split is valid on each
//     child, where it yields exactly the child's changes after it. It
//     does so when it takes the lease (a restart) and when it finds the
//     split while reading (the feed ranges changed, or a read answered
//     ErrFeedRangeGone).
//   - A merge (ranges joined into one, which Cosmos does only when an
//     operator asks) leaves the leases as they are: each lease's range
//     lies inside the merged range, and its owner goes on reading it.
//     The embedded store does not merge.

// sync makes the lease set cover the watched container's feed ranges,
// creating a lease only for a range no existing lease overlaps, and
// records the ranges and the ids of every lease of the processor.
func (p *Processor) sync(ctx context.Context) error {
	ranges, err := p.watched.ReadFeedRanges(ctx)
	if err != nil {
		return fmt.Errorf("feed ranges of %s: %w", p.cfg.Watched, err)
	}
	existing, err := p.docs.listLeases(ctx, p.cfg.Name)
	if err != nil {
		return fmt.Errorf("leases of %s: %w", p.cfg.Name, err)
	}
	var from func(context.Context, store.FeedRange) (string, error)
	if p.cfg.StartFromNow {
		from = p.feedNow
	}
	ids := make([]string, 0, len(existing)+len(ranges))
	for _, l := range existing {
		ids = append(ids, l.ID)
	}
	for _, r := range ranges {
		if slices.ContainsFunc(existing, func(l lease) bool { return l.FeedRange.Overlaps(r) }) {
			continue
		}
		l, err := p.docs.ensureLease(ctx, p.cfg.Name, p.cfg.Watched, r, from)
		if err != nil {
			return fmt.Errorf("lease %s: %w", leaseID(p.cfg.Name, r), err)
		}
		if !slices.Contains(ids, l.ID) {
			ids = append(ids, l.ID)
		}
	}
	slices.Sort(ids)
	p.mu.Lock()
	p.ranges, p.leases, p.resync = ranges, ids, false
	p.mu.Unlock()
	return nil
}

// feedNow returns the continuation at the present end of one feed range:
// the port's FeedFromNow, which reads no history (one read of a counter
// on the embedded store, no request at all on Cosmos).
func (p *Processor) feedNow(ctx context.Context, r store.FeedRange) (string, error) {
	page, err := p.watched.ReadChangeFeed(ctx, r, store.FeedFromNow, 1)
	return page.Continuation, err
}

// stale re-reads the feed ranges (on Cosmos from the SDK's routing cache:
// no request while it is fresh) and reports whether the lease set must be
// synced: the ranges changed, or a lease was found gone (another instance
// split it).
func (p *Processor) stale(ctx context.Context) bool {
	ranges, err := p.watched.ReadFeedRanges(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && !slices.Equal(ranges, p.ranges) {
		p.ranges = ranges
		p.resync = true
	}
	return p.resync
}

// children returns the parts of the current feed ranges a lease of r now
// covers when r split (two or more of them), or nil: r is still a range,
// or it lies inside one (a merge), and the lease reads on.
func (p *Processor) children(r store.FeedRange) []store.FeedRange {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Contains(p.ranges, r) {
		return nil
	}
	var out []store.FeedRange
	for _, cr := range p.ranges {
		if cr.Overlaps(r) {
			out = append(out, r.Intersect(cr))
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// split replaces the worker's lease, whose range split, by one lease per
// child, each at the parent's checkpoint (its last checkpoint and time)
// and free for the balancing to take; the first child carries the
// parent's dead-letter count, so the processor's total stays. The
// children are created before the parent is deleted (with If-Match: only
// its owner deletes it), so a crash between the two leaves the parent,
// which is split again when next taken: Create of a child that exists is
// refused and that child keeps its own checkpoint. It reports whether the
// lease is done with (split, or lost to another instance).
func (w *leaseWorker) split(ctx context.Context, children []store.FeedRange) (bool, error) {
	p := w.p
	w.mu.Lock()
	defer w.mu.Unlock()
	parent := w.l
	var ids []string
	for i, r := range children {
		child := lease{
			ID: leaseID(p.cfg.Name, r), Type: TypeLease, SchemaVersion: domain.SchemaVersion,
			Processor: p.cfg.Name, Watched: p.cfg.Watched, FeedRange: r,
			Continuation: parent.Continuation, LastCheckpoint: parent.LastCheckpoint, LagEstimate: -1,
		}
		if i == 0 {
			child.DeadLetters = parent.DeadLetters
		}
		if _, err := p.docs.createLease(ctx, child); err != nil {
			return false, fmt.Errorf("lease %s, child of %s: %w", child.ID, parent.ID, err)
		}
		ids = append(ids, child.ID)
	}
	err := p.docs.deleteLease(ctx, parent)
	if err != nil && !lostLease(err) {
		return false, fmt.Errorf("lease %s, split: %w", parent.ID, err)
	}
	p.mu.Lock()
	p.leases = slices.DeleteFunc(p.leases, func(id string) bool { return id == parent.ID })
	for _, id := range ids {
		if !slices.Contains(p.leases, id) {
			p.leases = append(p.leases, id)
		}
	}
	slices.Sort(p.leases)
	p.mu.Unlock()
	return true, nil
}

// rangeGone reports a read of a feed range that split.
func rangeGone(err error) bool { return errors.Is(err, store.ErrFeedRangeGone) }
