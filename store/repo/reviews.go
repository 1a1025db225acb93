package repo

import (
	"context"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Reviews is the repository of `reviews` (pk /productId): the unbounded
// review history, referenced from the product rather than embedded
// (model-embed-related).
type Reviews struct{ c store.Container }

// NewReviews returns the reviews repository over s.
func NewReviews(s store.Store) *Reviews { return &Reviews{s.Container(store.ReviewsContainer)} }

// Create stores a review as a document of the current schema. Its id is
// derived from the user, so a second review by the same user of the same
// product is ECONFLICT.
func (r *Reviews) Create(ctx context.Context, rv domain.Review) (domain.Review, error) {
	rv.Meta = domain.Meta{ID: domain.ReviewID(rv.UserID), Type: domain.TypeReview, SchemaVersion: domain.SchemaVersion}
	b, err := encode(rv)
	if err != nil {
		return domain.Review{}, err
	}
	w, err := r.c.Create(ctx, rv.ProductID, b)
	if domain.IsCode(err, domain.ECONFLICT) {
		return domain.Review{}, domain.Errorf(domain.ECONFLICT, "you have already reviewed product %q", rv.ProductID)
	}
	if err != nil {
		return domain.Review{}, err
	}
	return Decode[domain.Review](w.Item)
}

// Page returns one page of a product's reviews, newest first: a
// single-partition query (pk = productId) served by the composite index
// (createdAt desc, id desc) of migrations.
func (r *Reviews) Page(ctx context.Context, productID string, limit int, continuation string) ([]domain.Review, string, error) {
	return queryPage[domain.Review](ctx, r.c, store.Query{
		PartitionKey: productID,
		Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeReview}},
		OrderBy:      "createdAt",
		Desc:         true,
		Limit:        limit,
		Continuation: continuation,
	})
}

// All returns every review of a product, for recomputing its stats from
// absolute values. Still single-partition: one logical partition, however
// many pages.
func (r *Reviews) All(ctx context.Context, productID string) ([]domain.Review, error) {
	var all []domain.Review
	cont := ""
	for {
		page, next, err := r.Page(ctx, productID, store.MaxQueryPageSize, cont)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			return all, nil
		}
		cont = next
	}
}

// DeleteAll removes every review of a product in transactional batches of
// at most 100 deletes (a batch is confined to one partition key, which all
// of a product's reviews share). It returns how many it deleted.
func (r *Reviews) DeleteAll(ctx context.Context, productID string) (int, error) {
	deleted := 0
	for {
		page, err := r.c.Query(ctx, store.Query{
			PartitionKey: productID,
			Select:       []string{"id"},
			Limit:        store.MaxBatchOps,
		})
		if err != nil {
			return deleted, err
		}
		if len(page.Items) == 0 {
			return deleted, nil
		}
		ids, err := decodeItems[struct {
			ID string `json:"id"`
		}](page.Items)
		if err != nil {
			return deleted, err
		}
		ops := make([]store.BatchOp, len(ids))
		for i, d := range ids {
			ops[i] = store.BatchOp{Kind: store.BatchDelete, ID: d.ID}
		}
		if _, err := r.c.ExecuteBatch(ctx, productID, ops); err != nil && !domain.IsCode(err, domain.ENOTFOUND) {
			return deleted, err
		}
		deleted += len(ops)
	}
}
