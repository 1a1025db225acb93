package feedworkers

import (
	"context"
	"errors"
	"time"

	"shop/domain"
	"shop/feedworkers/changefeed"
	"shop/store"
)

// Inventory is the handler of the inventory feed: a product whose stock
// changed gets its availability copy (InventoryToProducts). Reservations
// share the container and are skipped.
func (h *Handlers) Inventory(ctx context.Context, b changefeed.Batch) error {
	seen := map[string]bool{}
	for _, it := range b.Items {
		hd, err := decodeItem[head](it)
		if err != nil {
			return err
		}
		if hd.Type != domain.TypeStock {
			continue
		}
		s, err := decodeItem[domain.Stock](it)
		if err != nil {
			return err
		}
		if seen[s.ProductID] {
			continue
		}
		seen[s.ProductID] = true
		if err := h.InventoryToProducts(ctx, s.ProductID); err != nil {
			return err
		}
	}
	return nil
}

// InventoryToProducts brings the product's availability status up to its
// stock. It reads the CURRENT stock (one point read per product and
// batch) rather than trusting the feed's version, so a duplicate or late
// version cannot move the copy back, and writes the product only when
// the status changes (domain.Product.ApplyStock): a sale that leaves the
// product in stock costs no product write, and so no fan-out.
func (h *Handlers) InventoryToProducts(ctx context.Context, productID string) error {
	s, err := h.repos.Inventory.Stock(ctx, productID)
	if err != nil {
		return err
	}
	_, err = h.repos.Products.UpdateAny(ctx, productID, func(p *domain.Product) error {
		if !p.ApplyStock(s, h.now()) {
			return store.ErrUnchanged
		}
		return nil
	})
	if errors.Is(err, store.ErrUnchanged) || domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	return err
}

// OrdersToInventory brings each delivered order's reservations up to the
// order (writes.SettleInventory): a cancelled order's units go back to
// stock exactly once, a placed one's reservations are committed.
func (h *Handlers) OrdersToInventory(ctx context.Context, orders []domain.Order) error {
	for _, o := range orders {
		if err := h.writes.SettleInventory(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// Reaper returns the units of checkouts that died between taking stock
// and placing their order: every Every it pages through the reservations
// still held (the inventory's one cross-partition query) and ends each
// one older than Hold (writes.ReapReservation). A unit held by a dead
// checkout is back in stock within Hold + Every. Several instances may
// reap at once: every step is conditional, so a unit comes back once.
type Reaper struct {
	Every, Hold time.Duration
}

// Default reaper timings: units held by a dead checkout come back within
// 45 s.
const (
	DefaultReapEvery = 15 * time.Second
	DefaultHold      = 30 * time.Second
)

// run reaps until ctx ends.
func (r Reaper) run(ctx context.Context, h *Handlers) {
	t := time.NewTicker(r.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = h.ReapOnce(ctx, r.Hold)
		}
	}
}

// ReapOnce is one pass of the reaper.
func (h *Handlers) ReapOnce(ctx context.Context, hold time.Duration) error {
	cont := ""
	for {
		held, next, err := h.repos.Inventory.Held(ctx, store.MaxQueryPageSize, cont)
		if err != nil {
			return err
		}
		for _, res := range held {
			if err := h.writes.ReapReservation(ctx, res, hold); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		cont = next
	}
}
