package migrations

import (
	"context"
	"fmt"
	"io"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// BucketOrderSummaries moves every order summary that is not under its
// key among n buckets ("placed:07:2026-11-29", domain.StatusDayKey) to
// it: the summaries written before the status view was bucketed (pk
// "placed:2026-11-29", domain.StatusDay), or under another number of
// buckets (SHOP_STATUS_BUCKETS changed). The admin day query reads only
// the n buckets, so until this has run those orders are missing from it
// (the orders themselves are untouched: the view is a copy).
//
// Each old summary is replaced by the projection of its CURRENT order
// (the orders feed's rule: the order is the truth, so an order whose
// status changed since is not copied back into its old status), then
// deleted. Idempotent: a second run finds nothing to move and costs one
// scan. The scan is a cross-partition query (every physical partition is
// asked), acceptable once, at a deploy: `shop migrate` runs it, never the
// shop's requests.
//
// It scans s, and writes through repos, the process's repositories: the
// number of buckets is theirs (repo.New), the one the shop's API and feeds
// use.
func BucketOrderSummaries(ctx context.Context, s store.Store, repos *repo.Set, log io.Writer) (moved int, err error) {
	c := s.Container(store.OrdersByStatusContainer)
	cont := ""
	for {
		page, err := c.Query(ctx, store.Query{
			Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrderSummary}},
			Select:       []string{"id", "userId", "statusDay", "status", "createdAt"},
			Limit:        store.MaxQueryPageSize,
			Continuation: cont,
		})
		if err != nil {
			return moved, err
		}
		for _, raw := range page.Items {
			sum, err := repo.Decode[domain.OrderSummary](raw)
			if err != nil {
				return moved, err
			}
			if sum.StatusDay == domain.StatusDayKey(sum.Status, sum.CreatedAt, sum.ID, repos.OrderSummaries.Buckets()) {
				continue
			}
			if err := rebucket(ctx, repos, sum); err != nil {
				return moved, fmt.Errorf("order %s of %s: %w", sum.ID, sum.UserID, err)
			}
			moved++
		}
		if page.Continuation == "" {
			break
		}
		cont = page.Continuation
	}
	fmt.Fprintf(log, "view %-20s %d order summaries moved into their %d buckets\n", store.OrdersByStatusContainer, moved, repos.OrderSummaries.Buckets())
	return moved, nil
}

// rebucket projects the summary's current order into its bucket, then
// deletes the misplaced copy (an order deleted since leaves no copy).
func rebucket(ctx context.Context, repos *repo.Set, sum domain.OrderSummary) error {
	o, err := repos.Orders.Get(ctx, sum.UserID, sum.ID)
	switch {
	case err == nil:
		if err := repos.OrderSummaries.Project(ctx, o); err != nil {
			return err
		}
	case !domain.IsCode(err, domain.ENOTFOUND):
		return err
	}
	return repos.OrderSummaries.Delete(ctx, sum.StatusDay, sum.ID)
}
