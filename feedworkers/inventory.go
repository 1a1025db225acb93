package feedworkers

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// Inventory is the handler of the inventory feed: a product whose stock
// changed, in any of its shards, gets its availability copy
// (InventoryToProducts); a transfer of units between shards whose sender
// wrote it is delivered (repo.Inventory.Complete), so a mover that died
// half way loses nothing. Reservations share the container and are
// skipped.
func (h *Handlers) Inventory(ctx context.Context, b changefeed.Batch) error {
	done := map[string]bool{}          // by product and SKU: the copy brought up to the stock
	homes := map[string]domain.Stock{} // the home documents read in this batch
	shown := map[string]string{}       // the copies' statuses read in this batch
	for _, it := range b.Items {
		hd, err := decodeItem[head](it)
		if err != nil {
			return err
		}
		switch hd.Type {
		case domain.TypeTransfer:
			t, err := decodeItem[domain.Transfer](it)
			if err != nil {
				return err
			}
			if err := h.repos.Inventory.Complete(ctx, t, h.now()); err != nil {
				return err
			}
			continue
		case domain.TypeStock, domain.TypeStockShard:
		default:
			continue
		}
		s, err := decodeItem[domain.Stock](it)
		if err != nil {
			return err
		}
		label := domain.LineLabel(s.Product(), s.SKU)
		if done[label] {
			continue
		}
		settled, err := h.inStockAlready(ctx, s, homes, shown)
		if err != nil {
			return err
		}
		if settled {
			continue
		}
		done[label] = true
		if err := h.InventoryToProducts(ctx, s.Product(), s.SKU); err != nil {
			return err
		}
	}
	return nil
}

// inStockAlready reports whether the change s of a stock's shard can
// leave the copy as it is without reading the other shards: s holds more
// than domain.LowStock units, so the stock as a whole is in stock, and
// the product already shows it in stock. It is the latest change of its
// shard this feed range has (a later one comes after it), so whatever
// the other shards hold, the sum is in stock. A split stock then costs
// the feed one read of the product (and of the home document, to know
// whether s's shard is retired and must be drained) instead of one read
// of every shard: the sum is read only near the end of the sale, where
// the status can change. homes and shown cache the batch's reads.
func (h *Handlers) inStockAlready(ctx context.Context, s domain.Stock, homes map[string]domain.Stock, shown map[string]string) (bool, error) {
	if s.Available <= domain.LowStock {
		return false, nil
	}
	label := domain.LineLabel(s.Product(), s.SKU)
	if s.Shard > 0 {
		home, ok := homes[label]
		if !ok {
			var err error
			if home, err = h.repos.Inventory.Stock(ctx, s.Product(), s.SKU); err != nil {
				return false, err
			}
			homes[label] = home
		}
		if s.Shard >= home.Active() {
			return false, nil // retired: drain it
		}
	}
	status, ok := shown[label]
	if !ok {
		p, err := h.repos.Products.Get(ctx, s.Product())
		if domain.IsCode(err, domain.ENOTFOUND) {
			return true, nil // no product to copy to
		}
		if err != nil {
			return false, err
		}
		v, _ := p.VariantOf(s.SKU)
		status = v.Availability.Status
		shown[label] = status
	}
	return status == domain.InStock, nil
}

// InventoryToProducts brings the availability status of the product's
// variant sku ("" for a product without variants) up to its stock. It
// reads the CURRENT stock, every shard of it (one point read for a stock
// never split, one per shard for a split one: domain.Total), rather than
// trusting the feed's version, so a duplicate or late version cannot move
// the copy back, and writes the product only when the status changes
// (domain.Product.ApplyStock): a sale that leaves the product in stock
// costs no product write, and so no fan-out. The copy of a split stock
// is as fresh as this feed: it lags the shards by the feed's delay, and a
// sum read while a transfer is in flight misses its units until the
// receipt's change comes by. Units that reached a retired shard are
// drained home (repo.Inventory.Drain).
func (h *Handlers) InventoryToProducts(ctx context.Context, productID, sku string) error {
	all, err := h.repos.Inventory.Shards(ctx, productID, sku)
	if err != nil {
		return err
	}
	for range maxSumReads {
		s := domain.Total(all[0], all[1:])
		_, err = h.repos.Products.UpdateAny(ctx, productID, func(p *domain.Product) error {
			if !p.ApplyStock(s, h.now()) {
				return repo.ErrUnchanged
			}
			return nil
		})
		if errors.Is(err, repo.ErrUnchanged) || domain.IsCode(err, domain.ENOTFOUND) || err == nil && len(all) == 1 {
			break
		}
		if err != nil {
			return err
		}
		// The copy of a split stock changed: read the shards again. A
		// change of a shard that came between the two reads may have been
		// passed over as in stock already (inStockAlready) while this
		// write, from the earlier sum, said otherwise; the next sum
		// (a newer version) puts it right.
		again, err := h.repos.Inventory.Shards(ctx, productID, sku)
		if err != nil {
			return err
		}
		if domain.Total(again[0], again[1:]).Version == s.Version {
			break
		}
		all = again
	}
	return h.repos.Inventory.Drain(ctx, all, h.now())
}

// maxSumReads bounds InventoryToProducts's sums of a split stock whose
// shards keep changing under it; the next change's batch goes on.
const maxSumReads = 8

// Sweeper carries on the checkouts nobody is carrying on any more (their
// request ended, or their instance died): every Every it pages through
// the orders still in progress (the orders' one cross-partition query,
// Orders.InProgress) and sweeps each one older than Stall
// (writes.Sweep): advanced, or expired once older than Expiry. Several
// instances may sweep at once: every move is conditional, so an order
// moves once.
type Sweeper struct {
	Every, Stall, Expiry time.Duration
}

// DefaultSweepEvery is how often the sweeper looks: an order whose
// checkout died is carried on within domain.CheckoutStall + 15 s.
const DefaultSweepEvery = 15 * time.Second

// withDefaults fills the zero fields.
func (s Sweeper) withDefaults() Sweeper {
	if s.Every <= 0 {
		s.Every = DefaultSweepEvery
	}
	if s.Stall <= 0 {
		s.Stall = domain.CheckoutStall
	}
	if s.Expiry <= 0 {
		s.Expiry = domain.CheckoutExpiry
	}
	return s
}

// run sweeps until ctx ends.
func (s Sweeper) run(ctx context.Context, h *Handlers) {
	t := time.NewTicker(s.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = h.SweepOnce(ctx, s.Stall, s.Expiry)
		}
	}
}

// sweepTimeout bounds the sweeper's work on one order, so one order whose
// provider keeps failing does not hold up the rest of the pass.
const sweepTimeout = 5 * time.Second

// SweepOnce is one pass of the sweeper.
func (h *Handlers) SweepOnce(ctx context.Context, stall, expiry time.Duration) error {
	var errs []error
	for _, status := range []string{domain.StatusPending, domain.StatusReserved, domain.StatusAuthorized} {
		cont := ""
		for {
			orders, next, err := h.repos.Orders.InProgress(ctx, status, store.MaxQueryPageSize, cont)
			if err != nil {
				return err
			}
			for _, o := range orders {
				octx, cancel := context.WithTimeout(ctx, sweepTimeout)
				if err := h.writes.Sweep(octx, o, stall, expiry); err != nil {
					errs = append(errs, err)
				}
				cancel()
			}
			if next == "" {
				break
			}
			cont = next
		}
	}
	return errors.Join(errs...)
}
