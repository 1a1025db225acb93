package repo

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// ProductSummaries is the repository of the `productsByCategory` view
// (pk /categoryId): a table per read pattern, so the category page is one
// single-partition query instead of a fan-out over `products`.
type ProductSummaries struct{ c store.Container }

// NewProductSummaries returns the view's repository over s.
func NewProductSummaries(s store.Store) *ProductSummaries {
	return &ProductSummaries{s.Container(store.ProductsByCategoryContainer)}
}

// Sort orders of the category page.
const (
	SortByName   = "name"
	SortByPrice  = "price"
	SortByRating = "rating"
)

// Page returns one page of a category's products ordered by name or price
// (ties by id): ONE single-partition query served by a composite index.
// By rating, best first, it reads the whole category (byRating).
//
// facets ("size=M", domain.Facet) keep the products having a variant of
// each of those attribute values: one ARRAY_CONTAINS per facet on the
// summaries' attribute array, which the container's index on
// /attributes/[]/? serves, so the filter is part of the same one query
// and a page pays for the products it returns, not for the category
// (the attribute-array pattern; `shop cost` measures it against the
// same page filtered by the client).
func (r *ProductSummaries) Page(ctx context.Context, categoryID, sort string, facets []string, limit int, continuation string) (Page[domain.ProductSummary], error) {
	filters := summaryFilters(facets)
	if sort == SortByRating {
		return r.byRating(ctx, categoryID, filters, limit, continuation)
	}
	orderBy := "name"
	if sort == SortByPrice {
		orderBy = "priceCents"
	}
	return rawPage[domain.ProductSummary](ctx, r.c, store.Query{
		PartitionKey: categoryID,
		Filters:      filters,
		OrderBy:      orderBy,
		Limit:        limit,
		Continuation: continuation,
	})
}

// summaryFilters are a category page's conditions: the summaries, with
// every facet in their attribute array.
func summaryFilters(facets []string) []store.Filter {
	filters := []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProductSummary}}
	for _, f := range facets {
		filters = append(filters, store.Filter{Path: "attributes", Op: store.OpArrayContains, Value: f})
	}
	return filters
}

// byRating is the rating sort without an index: the view has no composite
// index (averageRating, id) (the one on ratingScore serves the featured
// list's score, another property), and Cosmos refuses an ORDER BY of two
// properties without one (index-composite). So it reads every summary of
// the category (one single-partition query, unordered), sorts them here
// (averageRating descending, ties by id descending) and returns the page
// after the continuation, the last product shown as "rating:id": a
// keyset, as an index walk's continuation is, so a product added or
// removed before it moves no other across the page boundary. Every page
// pays for the whole category: the exercise of
// docs/workshop/05-a-table-per-read-pattern.md makes it an index walk.
func (r *ProductSummaries) byRating(ctx context.Context, categoryID string, filters []store.Filter, limit int, continuation string) (Page[domain.ProductSummary], error) {
	if limit <= 0 {
		limit = store.DefaultPageSize
	}
	var after *domain.ProductSummary
	if continuation != "" {
		rating, id, ok := strings.Cut(continuation, ":")
		avg, err := strconv.ParseFloat(rating, 64)
		if !ok || err != nil || id == "" {
			return Page[domain.ProductSummary]{}, domain.Errorf(domain.EINVALID, "continuation is not one this server issued")
		}
		after = &domain.ProductSummary{Meta: domain.Meta{ID: id}, AverageRating: avg}
	}
	// Each summary beside the bytes it was decoded from: the page
	// returns the bytes, in the order of the values.
	type doc struct {
		s   domain.ProductSummary
		raw []byte
	}
	var all []doc
	cont := ""
	for {
		page, err := rawPage[domain.ProductSummary](ctx, r.c, store.Query{
			PartitionKey: categoryID,
			Filters:      filters,
			Limit:        store.MaxQueryPageSize,
			Continuation: cont,
		})
		if err != nil {
			return Page[domain.ProductSummary]{}, err
		}
		summaries, err := page.Decode()
		if err != nil {
			return Page[domain.ProductSummary]{}, err
		}
		for i, s := range summaries {
			all = append(all, doc{s, page.Items[i]})
		}
		if page.Next == "" {
			break
		}
		cont = page.Next
	}
	byRating := func(a, b domain.ProductSummary) int {
		return cmp.Or(cmp.Compare(b.AverageRating, a.AverageRating), cmp.Compare(b.ID, a.ID))
	}
	slices.SortFunc(all, func(a, b doc) int { return byRating(a.s, b.s) })
	start := 0
	if after != nil {
		start = len(all)
		if i := slices.IndexFunc(all, func(d doc) bool { return byRating(d.s, *after) > 0 }); i >= 0 {
			start = i
		}
	}
	end := min(start+limit, len(all))
	var out Page[domain.ProductSummary]
	for _, d := range all[start:end] {
		out.Items = append(out.Items, d.raw)
	}
	if end < len(all) {
		last := all[end-1].s
		out.Next = strconv.FormatFloat(last.AverageRating, 'g', -1, 64) + ":" + last.ID
	}
	return out, nil
}

// Best returns the n best-rated products of a category (by ratingScore,
// domain.RatingScore) that are not sold out, for the home page's featured
// list: a single-partition query ordered by the composite index
// (ratingScore desc, id desc) the migrations declare, a page of n+2 at a
// time (a few more than asked: sold-out products are skipped), and another
// page only while the page read held too many sold out. Usually one query.
func (r *ProductSummaries) Best(ctx context.Context, categoryID string, n int) ([]domain.ProductSummary, error) {
	var best []domain.ProductSummary
	cont := ""
	for {
		page, next, err := queryPage[domain.ProductSummary](ctx, r.c, store.Query{
			PartitionKey: categoryID,
			Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProductSummary}},
			OrderBy:      "ratingScore",
			Desc:         true,
			Limit:        n + 2,
			Continuation: cont,
		})
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			if s.StockStatus != domain.SoldOut {
				best = append(best, s)
			}
		}
		if len(best) >= n || next == "" {
			return best[:min(n, len(best))], nil
		}
		cont = next
	}
}

// IDs returns the ids of every product in a category (for pushing a
// category rename to the products): single-partition, projected to id.
func (r *ProductSummaries) IDs(ctx context.Context, categoryID string) ([]string, error) {
	var ids []string
	cont := ""
	for {
		page, err := r.c.Query(ctx, store.Query{
			PartitionKey: categoryID,
			Select:       []string{"id"},
			Limit:        store.MaxQueryPageSize,
			Continuation: cont,
		})
		if err != nil {
			return nil, err
		}
		rows, err := decodeItems[struct {
			ID string `json:"id"`
		}](page.Items)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if page.Continuation == "" {
			return ids, nil
		}
		cont = page.Continuation
	}
}

// Get point-reads one summary.
func (r *ProductSummaries) Get(ctx context.Context, categoryID, productID string) (domain.ProductSummary, error) {
	return ReadDoc[domain.ProductSummary](ctx, r.c, categoryID, productID)
}

// Put writes the summary unless the view already holds the same or a newer
// sourceVersion (the version guard: an older product change never
// overwrites a newer one). It reports whether it wrote.
func (r *ProductSummaries) Put(ctx context.Context, s domain.ProductSummary) (bool, error) {
	res, err := r.PutReport(ctx, s)
	return res.Wrote, err
}

// PutReport is Put, also saying whether the summary was created: a new
// member of its category partition, the one case where a put changes the
// category's product count.
func (r *ProductSummaries) PutReport(ctx context.Context, s domain.ProductSummary) (PutResult, error) {
	return putGuarded(ctx, r.c, s.CategoryID, s.ID, productSummaryVersion, s)
}

func productSummaryVersion(s domain.ProductSummary) int64 { return s.SourceVersion }

// Delete removes a summary; a missing one is fine (idempotent).
func (r *ProductSummaries) Delete(ctx context.Context, categoryID, productID string) error {
	_, err := r.c.Delete(ctx, categoryID, productID, nil)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
}
