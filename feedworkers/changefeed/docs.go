package changefeed

import (
	"context"

	"shop/domain"
	"shop/store"
)

// docs is the repository of the processor's own documents in the lease
// container (pk /id, so each document is its own partition): the leases
// and the dead letters. It writes through the port's typed helpers
// (store.ReadDoc and friends), like every repository of the shop.
type docs struct {
	c store.Container
}

func (d docs) readLease(ctx context.Context, id string) (lease, error) {
	return store.ReadDoc[lease](ctx, d.c, id, id)
}

// ensureLease creates the lease of a feed range the first time any
// instance sees it. Several instances may race: Create is refused (409)
// for all but one, and everyone then reads the winner's document. A new
// lease starts at the beginning of the feed, or at from's continuation
// when from is set; an existing lease keeps its checkpoint.
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
	_, err = store.CreateDoc(ctx, d.c, id, lease{
		ID: id, Type: TypeLease, SchemaVersion: domain.SchemaVersion,
		Processor: processor, Watched: watched, FeedRange: r, LagEstimate: -1,
		Continuation: start,
	})
	if err != nil && !domain.IsCode(err, domain.ECONFLICT) {
		return lease{}, err
	}
	return d.readLease(ctx, id)
}

// replaceLease writes l with If-Match on the _etag it was read with. A
// 412 means another instance wrote the lease since: it was stolen or
// taken over, and the caller no longer owns it.
func (d docs) replaceLease(ctx context.Context, l lease) (lease, error) {
	etag := l.ETag
	l.ETag = ""
	return store.ReplaceDoc(ctx, d.c, l.ID, l.ID, l, &store.WriteOptions{IfMatch: etag})
}

// putDeadLetter upserts a dead letter: its id is keyed by the parked
// version, so parking the same version again rewrites the same record.
func (d docs) putDeadLetter(ctx context.Context, dl DeadLetter) error {
	_, err := store.UpsertDoc(ctx, d.c, dl.ID, dl, nil)
	return err
}
