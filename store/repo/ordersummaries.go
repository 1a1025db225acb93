package repo

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// OrderSummaries is the repository of `ordersByStatus` (pk /statusDay,
// synthetic "placed:07:2026-11-29": status, bucket, UTC day). One day of
// one status is Buckets() logical partitions, so that every checkout's
// summary does not land in one partition (docs/order-views.md).
type OrderSummaries struct {
	c       store.Container
	buckets int
}

// NewOrderSummaries returns the view's repository over s, with the
// default number of buckets (domain.DefaultStatusBuckets).
func NewOrderSummaries(s store.Store) *OrderSummaries {
	return NewOrderSummariesIn(s, domain.DefaultStatusBuckets)
}

// NewOrderSummariesIn returns the view's repository over s with n
// buckets per status and day (1..domain.MaxStatusBuckets; out of range
// is the default). Every writer and reader of one store must use the
// same n.
func NewOrderSummariesIn(s store.Store, n int) *OrderSummaries {
	if n < 1 || n > domain.MaxStatusBuckets {
		n = domain.DefaultStatusBuckets
	}
	return &OrderSummaries{c: s.Container(store.OrdersByStatusContainer), buckets: n}
}

// Buckets is the number of partitions of one status on one day.
func (r *OrderSummaries) Buckets() int { return r.buckets }

// Key is the partition key of o's summary when o has the given status.
func (r *OrderSummaries) Key(status string, o domain.Order) string {
	return domain.StatusDayKey(status, o.CreatedAt, o.ID, r.buckets)
}

// DayPage returns one page of one status on one day, newest first (ties
// by id, descending) across every bucket of the day: one single-partition
// query per bucket, run concurrently and merged. continuation is "" for
// the first page, else the previous page's next (a dayCursor); next is ""
// on the last page. A page holds at most limit orders, and fewer only
// when a bucket's store page came back short (see Query.Limit).
func (r *OrderSummaries) DayPage(ctx context.Context, status string, day time.Time, limit int, continuation string) (items []domain.OrderSummary, next string, err error) {
	keys := domain.StatusDayKeys(status, day, r.buckets)
	cur, err := decodeDayCursor(continuation, domain.StatusDay(status, day), len(keys))
	if err != nil {
		return nil, "", err
	}
	fetched := make([]bucketFetch, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	for b, key := range keys {
		if cur.Buckets[b].Done {
			fetched[b].end = cur.Buckets[b]
			continue
		}
		g.Go(func() (err error) {
			fetched[b], err = r.fetchBucket(gctx, key, cur.Buckets[b], limit)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", err
	}
	items, cur.Buckets = mergeBuckets(fetched, limit)
	return items, cur.encode(), nil
}

// bucketFetch is what one bucket offered a page: its next summaries in
// order, each with the position to resume at it, and the position after
// the last of them.
type bucketFetch struct {
	items []domain.OrderSummary
	at    []BucketPos
	end   BucketPos
}

// maxBucketPages bounds the store pages one bucket reads for one page of
// the day query (a bucket whose pages come back short or empty).
const maxBucketPages = 4

// fetchBucket reads up to limit summaries of one bucket from pos: the
// store page at pos.Continuation again (pos.Shown larger), without the
// summaries pos says the client was shown.
func (r *OrderSummaries) fetchBucket(ctx context.Context, key string, pos BucketPos, limit int) (bucketFetch, error) {
	var f bucketFetch
	cont, shown, last := pos.Continuation, pos.Shown, pos.Last
	for range maxBucketPages {
		page, next, err := queryPage[domain.OrderSummary](ctx, r.c, store.Query{
			PartitionKey: key,
			Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrderSummary}},
			OrderBy:      "createdAt",
			Desc:         true,
			Limit:        min(shown+limit, store.MaxQueryPageSize),
			Continuation: cont,
		})
		if err != nil {
			return f, err
		}
		for i, s := range page {
			if pos.unseen(s) {
				f.items = append(f.items, s)
				f.at = append(f.at, BucketPos{Continuation: cont, Shown: i, Last: last})
			}
			last = keyOf(s)
		}
		shown = 0
		if next == "" {
			f.end = BucketPos{Done: true}
			return f, nil
		}
		cont = next
		if len(f.items) >= limit {
			break
		}
	}
	f.end = BucketPos{Continuation: cont, Last: last}
	return f, nil
}

// mergeBuckets takes the newest limit summaries of the buckets' offers
// and returns them with each bucket's position after what it gave. It
// stops early where a bucket that is not done has offered nothing more:
// its next summary may be newer than any other's.
func mergeBuckets(fetched []bucketFetch, limit int) ([]domain.OrderSummary, []BucketPos) {
	taken := make([]int, len(fetched))
	var out []domain.OrderSummary
	for len(out) < limit {
		best := -1
		for b, f := range fetched {
			if taken[b] == len(f.items) {
				if !f.end.Done {
					best = -1
					break
				}
				continue
			}
			if best < 0 || newer(f.items[taken[b]], fetched[best].items[taken[best]]) {
				best = b
			}
		}
		if best < 0 {
			break
		}
		out = append(out, fetched[best].items[taken[best]])
		taken[best]++
	}
	pos := make([]BucketPos, len(fetched))
	for b, f := range fetched {
		pos[b] = f.end
		if taken[b] < len(f.items) {
			pos[b] = f.at[taken[b]]
		}
	}
	return out, pos
}

// newer is the day query's order: createdAt descending, ties by id
// descending (the composite index of ordersByStatus).
func newer(a, b domain.OrderSummary) bool {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

// Get point-reads one summary.
func (r *OrderSummaries) Get(ctx context.Context, statusDay, orderID string) (domain.OrderSummary, error) {
	return ReadDoc[domain.OrderSummary](ctx, r.c, statusDay, orderID)
}

// Put writes the summary under the version guard (see ProductSummaries.Put).
func (r *OrderSummaries) Put(ctx context.Context, s domain.OrderSummary) (bool, error) {
	res, err := putGuarded(ctx, r.c, s.StatusDay, s.ID, orderSummaryVersion, s)
	return res.Wrote, err
}

func orderSummaryVersion(s domain.OrderSummary) int64 { return s.SourceVersion }

// Project makes the view hold exactly one summary of o, an order that
// rests (the view holds no order in progress: its summary would move
// three times in a checkout's few milliseconds): it is put
// (version-guarded) in o's status partition and deleted in the same
// bucket of every resting status o can have held before
// (domain.RestingBefore: the workflow only moves forward). A partition key never changes in
// place, so a status change is a create in one partition and a delete in
// another. o must be the CURRENT order, read from orders: the guard is
// per partition, so an older version would re-create its old status's
// copy. Projecting the current order again writes and deletes nothing.
func (r *OrderSummaries) Project(ctx context.Context, o domain.Order) error {
	if _, err := r.Put(ctx, domain.SummaryOf(o, r.buckets)); err != nil {
		return err
	}
	for _, s := range domain.RestingBefore(o.Status) {
		if err := r.Delete(ctx, r.Key(s, o), o.ID); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes a summary; a missing one is fine (idempotent).
func (r *OrderSummaries) Delete(ctx context.Context, statusDay, orderID string) error {
	_, err := r.c.Delete(ctx, statusDay, orderID, nil)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
}
