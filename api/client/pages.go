package client

import (
	"context"
	"fmt"
	"iter"
)

// Pages yields the items of a list, page after page: it calls page with a
// nil continuation for the first page, then with the continuation each
// page returns, and stops after the page whose continuation is nil or
// empty (the last), when the loop breaks, or at an error, which it yields
// (with T's zero value) as its last pair. A page that hands back the
// continuation it was asked with would repeat forever: that is an error.
//
// CategoryProducts, SearchResults, Reviews and Orders page the shop's
// lists; Pages is for any other:
//
//	for p, err := range client.CategoryProducts(ctx, c, "coffee-tea", client.ListCategoryProductsParams{}) {
//		if err != nil {
//			return err
//		}
//		...
//	}
func Pages[T any](ctx context.Context, page func(ctx context.Context, continuation *string) (items []T, next *string, err error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var continuation *string
		for {
			items, next, err := page(ctx, continuation)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil || *next == "" {
				return
			}
			if continuation != nil && *next == *continuation {
				var zero T
				yield(zero, fmt.Errorf("client: the page after continuation %.32q gave it back", *next))
				return
			}
			continuation = next
		}
	}
}

// CategoryProducts yields the products of a category page after page, in
// params' sort and page size; params.Continuation is set for each page.
func CategoryProducts(ctx context.Context, c ClientWithResponsesInterface, categoryID CategoryID, params ListCategoryProductsParams, editors ...RequestEditorFn) iter.Seq2[ProductSummary, error] {
	return Pages(ctx, func(ctx context.Context, continuation *string) ([]ProductSummary, *string, error) {
		params.Continuation = continuation
		r, err := OK(c.ListCategoryProductsWithResponse(ctx, categoryID, &params, editors...))
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200.Items, r.JSON200.Continuation, nil
	})
}

// SearchResults yields the products a search finds, page after page.
func SearchResults(ctx context.Context, c ClientWithResponsesInterface, params SearchProductsParams, editors ...RequestEditorFn) iter.Seq2[SearchResult, error] {
	return Pages(ctx, func(ctx context.Context, continuation *string) ([]SearchResult, *string, error) {
		params.Continuation = continuation
		r, err := OK(c.SearchProductsWithResponse(ctx, &params, editors...))
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200.Items, r.JSON200.Continuation, nil
	})
}

// Reviews yields the reviews of a product, page after page.
func Reviews(ctx context.Context, c ClientWithResponsesInterface, productID ProductID, params ListReviewsParams, editors ...RequestEditorFn) iter.Seq2[Review, error] {
	return Pages(ctx, func(ctx context.Context, continuation *string) ([]Review, *string, error) {
		params.Continuation = continuation
		r, err := OK(c.ListReviewsWithResponse(ctx, productID, &params, editors...))
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200.Items, r.JSON200.Continuation, nil
	})
}

// Orders yields the signed-in user's orders, page after page (pass Bearer
// among editors, or give it to the client).
func Orders(ctx context.Context, c ClientWithResponsesInterface, params ListOrdersParams, editors ...RequestEditorFn) iter.Seq2[OrderListItem, error] {
	return Pages(ctx, func(ctx context.Context, continuation *string) ([]OrderListItem, *string, error) {
		params.Continuation = continuation
		r, err := OK(c.ListOrdersWithResponse(ctx, &params, editors...))
		if err != nil {
			return nil, nil, err
		}
		return r.JSON200.Items, r.JSON200.Continuation, nil
	})
}
