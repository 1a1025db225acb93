package feedworkers

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"shop/domain"
	"shop/store"
)

// FanoutStats is what the price fan-out cost: its cross-partition queries
// are the one fan-out of the shop, so they are counted and reported.
type FanoutStats struct {
	// Products is how many product changes were fanned out.
	Products int `json:"products"`
	// Queries and QueryRU: the cross-partition queries for the carts
	// holding the product, and their Request Units.
	Queries int     `json:"queries"`
	QueryRU float64 `json:"queryRu"`
	// CartsRead came back from the queries; CartsUpdated were written.
	CartsRead    int `json:"cartsRead"`
	CartsUpdated int `json:"cartsUpdated"`
	// Retries counts carts re-read after losing an If-Match race.
	Retries int `json:"retries"`
	// Skipped counts the product changes whose fan-out was skipped: no
	// cart copy could be stale (see syncCarts).
	Skipped int `json:"skipped"`
}

func (s *FanoutStats) add(o FanoutStats) {
	s.Products += o.Products
	s.Queries += o.Queries
	s.QueryRU += o.QueryRU
	s.CartsRead += o.CartsRead
	s.CartsUpdated += o.CartsUpdated
	s.Retries += o.Retries
	s.Skipped += o.Skipped
}

type fanoutCounters struct {
	mu sync.Mutex
	s  FanoutStats
}

// FanoutStats returns the totals of every fan-out these handlers ran.
func (h *Handlers) FanoutStats() FanoutStats {
	h.stats.mu.Lock()
	defer h.stats.mu.Unlock()
	return h.stats.s
}

// maxCartAttempts bounds the re-reads of one cart that keeps changing
// under the fan-out (its owner is editing it); the batch is then retried
// by the processor.
const maxCartAttempts = 20

// ProductToCarts pushes the product's name, price and availability into
// every open cart holding it: page through the carts with ARRAY_CONTAINS
// on their flat productIds (the shop's one cross-partition query; its
// cost is counted), then update each cart with If-Match, at most
// FanoutConcurrency at a time. Cart.ApplyProduct is the version guard: a
// line only ever takes a newer product version, so applying twice, or v3
// then v2, leaves v3. p should be the product's current version (Products
// reads it): a line whose copies already match it is not rewritten.
func (h *Handlers) ProductToCarts(ctx context.Context, p domain.Product) (FanoutStats, error) {
	res := FanoutStats{Products: 1}
	var mu sync.Mutex
	defer func() {
		h.stats.mu.Lock()
		h.stats.s.add(res)
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
				updated, retries, err := h.applyToCart(gctx, c, p)
				mu.Lock()
				res.Retries += retries
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

// applyToCart updates one cart's line of p with If-Match on the _etag the
// query returned; on 412 (the owner changed the cart meanwhile) it
// re-reads the cart (point read) and applies again.
func (h *Handlers) applyToCart(ctx context.Context, c domain.Cart, p domain.Product) (updated bool, retries int, err error) {
	for attempt := 1; ; attempt++ {
		line, ok := c.Line(p.ID)
		if !ok || !needsUpdate(line, p) {
			return false, retries, nil
		}
		etag := c.ETag
		c.ApplyProduct(p, h.now())
		_, err := h.repos.Carts.ReplaceIfMatch(ctx, c, etag)
		switch {
		case err == nil:
			return true, retries, nil
		case domain.IsCode(err, domain.ENOTFOUND):
			// Expired by TTL since the query: nothing to update.
			return false, retries, nil
		case !domain.IsCode(err, domain.EPRECONDITION) || attempt >= maxCartAttempts:
			return false, retries, err
		}
		retries++
		store.MeterFrom(ctx).AddRetry()
		if c, err = h.repos.Carts.Get(ctx, c.UserID); err != nil {
			return false, retries, err
		}
	}
}

// needsUpdate reports whether the line's copies would change: p is newer
// than the version the line was copied from (the guard) AND its name,
// price or availability differs. A product write that touched none of
// them (new review stats) writes no cart; syncCarts usually spares it the
// query too. Safe because p is the product's current version, never a
// stale one.
func needsUpdate(l domain.CartLine, p domain.Product) bool {
	if p.Version <= l.ProductVersion {
		return false
	}
	return l.Name != p.Name || l.Available == p.Deleted || p.PriceVersion > l.PriceVersion
}
