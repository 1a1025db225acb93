package loadbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// The burst of `shop bench --convergence`: few admin writes, each of which
// the feeds must carry to many copies.
//
//   - the most populous category renamed: every product of it gets the new
//     categoryName (the products feed rewrites them), then its summary and
//     search entries follow;
//   - burstMoves products of other categories moved into it: each leaves a
//     summary and search entries behind and needs new ones, and the
//     category counts change;
//   - burstPrices products, each in at least hotCarts open carts, given a
//     new price: each change is written to every one of those carts.
//
// The moves are sent around the rename (half before, half after), as an
// admin reorganizing the catalog would.
const (
	burstMoves   = 50
	burstPrices  = 10
	hotCarts     = 200
	burstSenders = 4
)

// hotProduct is a product the seeding put into many carts, and its price.
type hotProduct struct {
	ID         string `json:"id"`
	PriceCents int64  `json:"priceCents"`
}

// seedHotCarts puts each of the first k products into the first n open
// carts (one unit), directly in the store file while no shop runs, and
// returns those products. The carts feed no processor, and each line is
// the product's copy as the shop makes it (domain.Cart.SetQuantity), so
// the data stays converged: the feeds have nothing to do until the burst.
func seedHotCarts(ctx context.Context, path string, k, n int) ([]hotProduct, error) {
	s, err := embedded.Open(path, embedded.Options{PhysicalPartitions: benchPartitions, NoSync: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	products, err := firstDocs[domain.Product](ctx, s.Container(store.ProductsContainer), domain.TypeProduct, k)
	if err != nil {
		return nil, fmt.Errorf("products: %w", err)
	}
	carts, err := firstDocs[domain.Cart](ctx, s.Container(store.CartsContainer), domain.TypeCart, n)
	if err != nil {
		return nil, fmt.Errorf("carts: %w", err)
	}
	repos := repo.New(s, 0)
	now := time.Now()
	for _, c := range carts {
		if _, err := repos.Carts.UpdateExisting(ctx, c, func(c *domain.Cart) error {
			for _, p := range products {
				if err := c.SetQuantity(p, "", 1, now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("cart of %s: %w", c.UserID, err)
		}
	}
	hot := make([]hotProduct, len(products))
	for i, p := range products {
		hot[i] = hotProduct{ID: p.ID, PriceCents: p.PriceCents}
	}
	return hot, nil
}

// firstDocs returns up to n documents of type typ of a container, in the
// order its query returns them.
func firstDocs[T any](ctx context.Context, c store.Container, typ string, n int) ([]T, error) {
	q := store.Query{Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: typ}}, Limit: min(n, store.MaxQueryPageSize)}
	var out []T
	for len(out) < n {
		page, err := c.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items[:min(len(page.Items), n-len(out))] {
			v, err := repo.Decode[T](it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	return out, nil
}

// burstPlan is what the burst writes, found through the API.
type burstPlan struct {
	Category         string `json:"category"`
	OldName          string `json:"oldName"`
	NewName          string `json:"newName"`
	CategoryProducts int    `json:"categoryProducts"`
	// Moves are the products moved into Category, Prices the products in
	// many carts whose price changes.
	Moves  []string     `json:"moves"`
	Prices []hotProduct `json:"prices"`
}

// planBurst picks the most populous category and up to burstMoves
// products of the others (none of the hot ones).
func planBurst(ctx context.Context, c benchClient, hot []hotProduct) (burstPlan, error) {
	cats, err := call(ctx, func() (*client.ListCategoriesResponse, error) {
		return c.api.ListCategoriesWithResponse(ctx)
	})
	if err != nil {
		return burstPlan{}, fmt.Errorf("categories: %w", err)
	}
	plan := burstPlan{Prices: hot, CategoryProducts: -1}
	for _, ct := range cats.JSON200.Items {
		if ct.ProductCount > plan.CategoryProducts {
			plan.Category, plan.OldName, plan.CategoryProducts = ct.ID, ct.Name, ct.ProductCount
		}
	}
	if plan.Category == "" {
		return plan, errors.New("the shop lists no category")
	}
	plan.NewName = plan.OldName + ", renamed"
	limit := 100
	for _, ct := range cats.JSON200.Items {
		if ct.ID == plan.Category || len(plan.Moves) >= burstMoves {
			continue
		}
		page, err := call(ctx, func() (*client.ListCategoryProductsResponse, error) {
			return c.api.ListCategoryProductsWithResponse(ctx, ct.ID, &client.ListCategoryProductsParams{Limit: &limit})
		})
		if err != nil {
			return plan, fmt.Errorf("category %s: %w", ct.ID, err)
		}
		for _, p := range page.JSON200.Items {
			isHot := slices.ContainsFunc(hot, func(h hotProduct) bool { return h.ID == p.ID })
			if !isHot && len(plan.Moves) < burstMoves {
				plan.Moves = append(plan.Moves, p.ID)
			}
		}
	}
	return plan, nil
}

// burstWrite is one admin write of the burst.
type burstWrite func(ctx context.Context, c benchClient, tok string, sent *atomic.Int64) error

// writes lists the burst's writes in the order they are sent: half the
// moves, the rename, the price changes, the other half of the moves.
func (p burstPlan) writes() []burstWrite {
	move := func(id string) burstWrite {
		return func(ctx context.Context, c benchClient, tok string, sent *atomic.Int64) error {
			_, err := call(ctx, func() (*client.PatchProductResponse, error) {
				sent.Add(1)
				return c.api.PatchProductWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, id, nil,
					client.ProductPatch{CategoryID: &p.Category}, client.Bearer(tok))
			})
			return err
		}
	}
	var out []burstWrite
	half := len(p.Moves) / 2
	for _, id := range p.Moves[:half] {
		out = append(out, move(id))
	}
	out = append(out, func(ctx context.Context, c benchClient, tok string, sent *atomic.Int64) error {
		_, err := call(ctx, func() (*client.PutCategoryResponse, error) {
			sent.Add(1)
			return c.api.PutCategoryWithResponse(ctx, p.Category, client.CategoryRequest{Name: p.NewName}, client.Bearer(tok))
		})
		return err
	})
	for _, h := range p.Prices {
		price := int(h.PriceCents) + 100
		out = append(out, func(ctx context.Context, c benchClient, tok string, sent *atomic.Int64) error {
			_, err := call(ctx, func() (*client.PatchProductResponse, error) {
				sent.Add(1)
				return c.api.PatchProductWithApplicationMergePatchPlusJSONBodyWithResponse(ctx, h.ID, nil,
					client.ProductPatch{PriceCents: &price}, client.Bearer(tok))
			})
			return err
		})
	}
	for _, id := range p.Moves[half:] {
		out = append(out, move(id))
	}
	return out
}

// burstResult is what sending the burst took.
type burstResult struct {
	// Answered counts the writes answered 2xx, Sent the requests sent
	// (a 503 with Retry-After is sent again after its wait).
	Answered int
	Sent     int
	// Start is when the first write was sent, Last when the last one
	// answered 2xx was answered.
	Start, Last time.Time
}

// sendBurst sends the writes, burstSenders at a time, in order. After
// each write answered it calls answered with their count. Once cut
// reports true (the shop was killed) the writes that fail are not errors,
// and once ctx ends it sends no more; it returns what was answered. A
// write refused otherwise is an error.
func sendBurst(ctx context.Context, c benchClient, tok string, writes []burstWrite, answered func(n int), cut func() bool) (burstResult, error) {
	var (
		mu   sync.Mutex
		res  = burstResult{Start: time.Now()}
		errs []error
		sent atomic.Int64
		next = make(chan burstWrite)
		wg   sync.WaitGroup
	)
	for range burstSenders {
		wg.Go(func() {
			for w := range next {
				err := w(ctx, c, tok, &sent)
				mu.Lock()
				switch {
				case err == nil:
					res.Answered++
					res.Last = time.Now()
					n := res.Answered
					mu.Unlock()
					answered(n)
					continue
				case ctx.Err() == nil && !cut():
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	for _, w := range writes {
		if ctx.Err() != nil {
			break
		}
		next <- w
	}
	close(next)
	wg.Wait()
	res.Sent = int(sent.Load())
	return res, errors.Join(errs...)
}
