package writes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"shop/domain"
	"shop/store"
)

// reserveConcurrency bounds the reservations of one checkout in flight:
// each line's product is its own partition, so they can go at once.
const reserveConcurrency = 8

// reserve takes the units of every line of o from its product's stock, or
// none: the order is in the buyer's partition and each stock in its
// product's, so no transaction spans them. Each line's take is one
// conditional write with its reservation (Inventory.Reserve); when a line
// cannot be served, or a take failed without saying whether it went in,
// every line's reservation is released again and nothing stays taken.
// The refusal names each short line (domain.OutOfStock).
//
// A product with no stock document sells without a limit only if it is a
// legacy one, created before the shop tracked stock: its line in marked,
// the cart the order was made from, carries no availability status. A
// product created since carries one from its create (CreateProduct), so
// a missing stock document means its create stopped between the product
// and the stock: the line is refused as short with 0 available, never
// sold without a limit.
func (w *Writes) reserve(ctx context.Context, o domain.Order, marked domain.Cart) error {
	var (
		mu    sync.Mutex
		short []domain.Shortage
	)
	var g errgroup.Group
	g.SetLimit(reserveConcurrency)
	for _, l := range o.Items {
		line, _ := marked.Line(l.ProductID)
		tracked := line.StockStatus != ""
		g.Go(func() error {
			q := int64(l.Quantity)
			err := w.repos.Inventory.Reserve(ctx, domain.NewReservation(l.ProductID, o.ID, o.UserID, q, o.CreatedAt))
			var available int64
			switch {
			case err == nil:
				return nil
			case errors.Is(err, store.ErrUntracked):
				if !tracked {
					return nil // a legacy product: no limit
				}
				// A tracked product whose stock was never written: 0.
			case errors.Is(err, store.ErrShort):
				// The count at the time, for the refusal (one point read
				// of a short line).
				if s, err := w.repos.Inventory.Stock(ctx, l.ProductID); err == nil {
					available = max(s.Available, 0)
				}
			default:
				return err
			}
			mu.Lock()
			short = append(short, domain.Shortage{ProductID: l.ProductID, Requested: q, Available: available})
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	if err == nil && len(short) == 0 {
		return nil
	}
	w.release(ctx, o)
	if err != nil {
		return err
	}
	slices.SortFunc(short, func(a, b domain.Shortage) int { return strings.Compare(a.ProductID, b.ProductID) })
	return domain.OutOfStock(short)
}

// release gives back the units of every line of o, each exactly once
// (Inventory.Release), whether or not the caller still waits (cleanUp).
// Best effort: a release that fails now is made by the reaper
// (ReapReservation) or the orders feed.
func (w *Writes) release(ctx context.Context, o domain.Order) {
	cleanUp(ctx, func(ctx context.Context) {
		for _, l := range o.Items {
			_ = w.repos.Inventory.Release(ctx, l.ProductID, o.ID, w.now())
		}
	})
}

// SettleInventory brings the reservations of an order the orders feed
// delivers up to the order: a cancelled order's units go back to stock,
// exactly once; a placed order's reservations are committed, so the
// reaper leaves them alone. Idempotent, and safe in any order of
// delivery: both are conditional on the reservation's state.
func (w *Writes) SettleInventory(ctx context.Context, o domain.Order) error {
	for _, l := range o.Items {
		var err error
		if o.Status == domain.StatusCancelled {
			err = w.repos.Inventory.Release(ctx, l.ProductID, o.ID, w.now())
		} else {
			err = w.repos.Inventory.Commit(ctx, l.ProductID, o.ID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ReapReservation ends a reservation that is still held hold after it was
// made, so that no unit stays held by a checkout that died: its order
// committed → committed (or released, if the order was cancelled since);
// its order id voided → released; no order → the order id is voided first
// (so a checkout still running can never commit it), then released.
func (w *Writes) ReapReservation(ctx context.Context, res domain.Reservation, hold time.Duration) error {
	if w.now().Before(res.CreatedAt.Add(hold)) {
		return nil
	}
	o, voided, err := w.repos.Orders.Lookup(ctx, res.UserID, res.OrderID)
	switch {
	case err == nil && !voided:
		return w.SettleInventory(ctx, o)
	case err == nil && voided:
	case !domain.IsCode(err, domain.ENOTFOUND):
		return err
	default:
		err := w.repos.Orders.Void(ctx, res.UserID, res.OrderID, w.now())
		if errors.Is(err, store.ErrOrderExists) {
			// It committed, or was voided, meanwhile: the next pass sees
			// which.
			return nil
		}
		if err != nil {
			return err
		}
	}
	return w.repos.Inventory.Release(ctx, res.ProductID, res.OrderID, w.now())
}
