package changefeed

import (
	"context"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// docs is the repository of the processor's own documents in the lease
// container (pk /id, so each document is its own partition): the leases
// and the dead letters. It writes through the port's typed helpers
// (repo.ReadDoc and friends), like every repository of the shop.
//
// A lease's life:
//
//   - created by the first instance whose sync finds a feed range that no
//     lease overlaps (leaseset.go): at the beginning of the feed, or with
//     StartFromNow at the port's FeedFromNow position (on Cosmos a time
//     sent as StartFrom with the first read, so no history is read);
//   - taken, renewed, checkpointed and released by its owners in turn
//     (processor.go, worker.go), each write with If-Match; its
//     lagEstimate is the feed's Remaining its owner last saw, written at
//     each checkpoint and heartbeat (on Cosmos the partition's latest LSN
//     minus the last item's _lsn);
//   - when its range splits, replaced by its owner with one lease per
//     child, each from its checkpoint, and deleted (leaseset.go).
type docs struct {
	c store.Container
}

func (d docs) readLease(ctx context.Context, id string) (lease, error) {
	return repo.ReadDoc[lease](ctx, d.c, id, id)
}

// ensureLease creates the lease of a feed range no lease covers yet
// (sync). Several instances may race: Create is refused (409) for all but
// one, and everyone then reads the winner's document. A new lease starts
// at the beginning of the feed, or at from's continuation when from is
// set; an existing lease keeps its checkpoint.
func (d docs) ensureLease(ctx context.Context, processor, watched string, r store.FeedRange, from func(context.Context, store.FeedRange) (string, error)) (lease, error) {
	id := leaseID(processor, r)
	l, err := d.readLease(ctx, id)
	if !domain.IsCode(err, domain.ENOTFOUND) {
		return l, err
	}
	start := ""
	if from != nil {
		if start, err = from(ctx, r); err != nil {
			return lease{}, err
		}
	}
	return d.createLease(ctx, lease{
		ID: id, Type: TypeLease, SchemaVersion: domain.SchemaVersion,
		Processor: processor, Watched: watched, FeedRange: r, LagEstimate: -1,
		Continuation: start,
	})
}

// createLease creates l unless a lease of its id exists, and returns the
// one stored: a lease that exists keeps its owner and checkpoint.
func (d docs) createLease(ctx context.Context, l lease) (lease, error) {
	_, err := repo.CreateDoc(ctx, d.c, l.ID, l)
	if err != nil && !domain.IsCode(err, domain.ECONFLICT) {
		return lease{}, err
	}
	return d.readLease(ctx, l.ID)
}

// listLeases returns every lease of the processor: a query across the
// lease container's partitions (pk /id), run when the lease set may have
// changed (at Start, after a split), not on every balancing pass.
func (d docs) listLeases(ctx context.Context, processor string) ([]lease, error) {
	q := store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: TypeLease},
			{Path: "processor", Op: store.OpEqual, Value: processor},
		},
		Limit: store.MaxQueryPageSize,
	}
	var out []lease
	for {
		page, err := d.c.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			l, err := repo.Decode[lease](it)
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		}
		if page.Continuation == "" {
			return out, nil
		}
		q.Continuation = page.Continuation
	}
}

// deleteLease removes l with If-Match on the _etag it was read with (412:
// someone else wrote it since).
func (d docs) deleteLease(ctx context.Context, l lease) error {
	_, err := d.c.Delete(ctx, l.ID, l.ID, &store.WriteOptions{IfMatch: l.ETag})
	return err
}

// replaceLease writes l with If-Match on the _etag it was read with. A
// 412 means another instance wrote the lease since: it was stolen or
// taken over, and the caller no longer owns it.
func (d docs) replaceLease(ctx context.Context, l lease) (lease, error) {
	etag := l.ETag
	l.ETag = ""
	return repo.ReplaceDoc(ctx, d.c, l.ID, l.ID, l, &store.WriteOptions{IfMatch: etag})
}

// putDeadLetter upserts a dead letter: its id is keyed by the parked
// version, so parking the same version again rewrites the same record.
func (d docs) putDeadLetter(ctx context.Context, dl DeadLetter) error {
	_, err := repo.UpsertDoc(ctx, d.c, dl.ID, dl, nil)
	return err
}
