package feedworkers

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// fanoutCounters are the running totals of every fan-out of one Handlers.
type fanoutCounters struct {
	mu sync.Mutex
	s  repo.FanoutStats
}

// FanoutStats returns the totals of every fan-out these handlers ran.
func (h *Handlers) FanoutStats() repo.FanoutStats {
	h.stats.mu.Lock()
	defer h.stats.mu.Unlock()
	return h.stats.s
}

// ProductToCarts pushes the product's name, price and availability into
// every open cart holding it: page through the carts with ARRAY_CONTAINS
// on their flat productIds (the shop's one cross-partition query; its
// cost is counted), then refresh each cart (writes.RefreshCart, If-Match
// on the version the query returned), at most FanoutConcurrency at a
// time. The freshness rule (domain.CartLine.Refresh) is the guard: a line
// only ever takes a newer product version, so applying twice, or v3 then
// v2, leaves v3. p should be the product's current version (Products
// reads it): a line whose copies already match it is not rewritten.
func (h *Handlers) ProductToCarts(ctx context.Context, p domain.Product) (repo.FanoutStats, error) {
	res := repo.FanoutStats{Products: 1}
	var mu sync.Mutex
	// The cart writes count their lost races on the Meter.
	meter := store.MeterFrom(ctx)
	if meter == nil {
		ctx, meter = store.WithMeter(ctx)
	}
	retriesBefore := meter.Retries()
	defer func() {
		h.stats.mu.Lock()
		h.stats.s.Add(res)
		h.stats.mu.Unlock()
	}()
	// The query pages and the cart writes overlap: one goroutine reads
	// the next page while the writers work through the previous one.
	work := make(chan domain.Cart, store.MaxQueryPageSize)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(work)
		cont := ""
		for {
			carts, next, ru, err := h.cartsWith(gctx, p.ID, cont)
			mu.Lock()
			res.Queries++
			res.QueryRU += ru
			res.CartsRead += len(carts)
			mu.Unlock()
			if err != nil {
				return err
			}
			for _, c := range carts {
				select {
				case work <- c:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			if next == "" {
				return nil
			}
			cont = next
		}
	})
	for range h.fanout {
		g.Go(func() error {
			for c := range work {
				// The freshness rule runs once, inside RefreshCart, on the
				// copy the query returned (its first attempt reads
				// nothing): a current line costs no operation.
				_, updated, err := h.writes.RefreshCart(gctx, c, p)
				mu.Lock()
				if updated {
					res.CartsUpdated++
				}
				mu.Unlock()
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := g.Wait()
	mu.Lock()
	defer mu.Unlock()
	res.Retries = meter.Retries() - retriesBefore
	return res, err
}

// cartsWith runs one page of the fan-out query under its own Meter, so its
// Request Units can be reported apart from the cart writes, and then adds
// them to the caller's Meter.
func (h *Handlers) cartsWith(ctx context.Context, productID, cont string) ([]domain.Cart, string, float64, error) {
	qctx, qm := store.WithMeter(ctx)
	carts, next, err := h.repos.Carts.WithProduct(qctx, productID, store.MaxQueryPageSize, cont)
	_, ru, nanos := qm.Totals()
	store.MeterFrom(ctx).Add(ru, nanos)
	return carts, next, ru, err
}
