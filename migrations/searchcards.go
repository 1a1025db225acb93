package migrations

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// legacyEntry is a search entry as the shop wrote it before the search
// card: the category page's whole summary, exact average and review count
// included, so every review rewrote it.
type legacyEntry struct {
	domain.SearchEntry
	AverageRating *float64 `json:"averageRating"`
}

// ReshapeSearchEntries rewrites every search entry still in its old shape
// (it holds averageRating) as a domain.SearchCard: its rating in half
// stars (domain.ShownRating) and its rank built from that, the review
// fields gone. Until it has run, such an entry shows no rating (a result
// reads the card's), however often it is searched: only a change of its
// product rewrites it. It writes from the entry itself, the version it
// claims unchanged, with If-Match on the _etag read, so an entry the feed
// has rewritten meanwhile is left alone. Idempotent: a second run finds
// nothing to reshape and costs one scan, a cross-partition query of the
// index, acceptable once, at a deploy: `shop migrate` runs it.
func ReshapeSearchEntries(ctx context.Context, s store.Store, log io.Writer) (reshaped int, err error) {
	c := s.Container(store.ProductsByTermContainer)
	cont := ""
	for {
		page, err := c.Query(ctx, store.Query{
			Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeSearchEntry}},
			Limit:        store.MaxQueryPageSize,
			Continuation: cont,
		})
		if err != nil {
			return reshaped, err
		}
		for _, raw := range page.Items {
			done, err := reshape(ctx, c, raw)
			if err != nil {
				return reshaped, err
			}
			if done {
				reshaped++
			}
		}
		if page.Continuation == "" {
			break
		}
		cont = page.Continuation
	}
	fmt.Fprintf(log, "index %-19s %d search entries reshaped into cards\n", store.ProductsByTermContainer, reshaped)
	return reshaped, nil
}

// reshape rewrites one entry if it is in the old shape; it reports whether
// it wrote.
func reshape(ctx context.Context, c store.Container, raw []byte) (bool, error) {
	old, err := repo.Decode[legacyEntry](raw)
	if err != nil || old.AverageRating == nil {
		return false, err
	}
	e := old.SearchEntry
	e.Rating = domain.ShownRating(*old.AverageRating)
	e.Rank = domain.SearchRank(e.Rating, e.Name)
	b, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	_, err = c.Replace(ctx, e.Term, e.ID, b, &store.WriteOptions{IfMatch: old.ETag})
	switch {
	case domain.IsCode(err, domain.EPRECONDITION), domain.IsCode(err, domain.ENOTFOUND):
		return false, nil // rewritten or removed since the scan: the feed's
	case err != nil:
		return false, fmt.Errorf("search entry %s under %s: %w", e.ID, e.Term, err)
	}
	return true, nil
}
