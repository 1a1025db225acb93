package feedworkers

import "context"

// replayKey marks the context of a batch that may already have been
// applied, in whole or in part: the first batch a lease loop reads after
// taking a lease (its previous owner may have applied it and stopped
// before the checkpoint), a batch read again after a failed checkpoint,
// and every retry of a failed batch. Handlers that skip work because a
// write found nothing to change (the category recount) must not skip it
// then: the first application may have written and stopped before the
// work that write called for.
type replayKey struct{}

func withReplay(ctx context.Context) context.Context {
	return context.WithValue(ctx, replayKey{}, true)
}

// mayBeReplay reports whether the batch of ctx may have been applied
// before.
func mayBeReplay(ctx context.Context) bool {
	v, _ := ctx.Value(replayKey{}).(bool)
	return v
}
