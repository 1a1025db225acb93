package writes

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"shop/domain"
	"shop/store"
)

// reserveConcurrency bounds the stock reads and the takes of one
// checkout in flight: each line's product is its own partition, so they
// can go at once.
const reserveConcurrency = 8

// stockLine is one line of an order as checkStock read its stock: what
// reserve takes.
type stockLine struct {
	domain.OrderLine
	// tracked: the cart line carries an availability status (see
	// checkStock).
	tracked bool
	// available is the units the read found.
	available int64
}

// spare is the units the read found beyond the line's quantity.
func (l stockLine) spare() int64 { return l.available - int64(l.Quantity) }

// checkStock reads the stock of every line of o, made from cart c,
// before anything is written: one point read per line (1 RU,
// query-point-reads), reserveConcurrency at once. A cart some line of
// which is short by those reads is refused (domain.OutOfStock, naming
// every short line) before the checkout writes anything, not even its
// marker.
//
// This is what bounds a user's failing checkouts. A refusal the reads can
// tell holds no unit, so no other buyer is told "sold out" for units it
// took and was about to give back, and it costs the reads, however often
// the buyer tries the unchanged cart again: a 50-line cart with one
// sold-out line costs 53 operations, 54.62 RU a refusal, where taking and
// returning the 49 other lines cost 155 operations, 1,171.32 RU; a
// sold-out line alone 4 operations, 4.00 RU, where it cost 8 and
// 22.35 RU (`shop cost`). A placed checkout pays the reads too, 1 RU a
// line (one line: 49.30 RU, 48.30 before). Only a stock that moves
// between the read and the take, a race no buyer can repeat at will,
// gets a refusal as far as the takes, and they stop at the first short
// line (reserve). The refusal is not remembered, on the cart or
// elsewhere: the stock changes while the cart does not (a restock, a
// cancel), so a remembered refusal would refuse a cart that can now be
// served, or need these same reads to know that it cannot.
//
// Otherwise it returns the lines to take, tightest first (the fewest
// units to spare by the reads): a take that still fails, because the
// stock moved since the read, is then most likely among the first, and
// the takes stop there (reserve). A read that fails fails the checkout,
// with nothing written.
//
// A product with no stock document sells without a limit only if it is a
// legacy one, created before the shop tracked stock: its line in c
// carries no availability status, and it has nothing to take. A product
// created since carries one from its create (CreateProduct), so a missing
// stock document means its create stopped between the product and the
// stock: the line is short with 0 available, never sold without a limit.
func (w *Writes) checkStock(ctx context.Context, o domain.Order, c domain.Cart) ([]stockLine, error) {
	lines := make([]stockLine, len(o.Items))
	untracked := make([]bool, len(o.Items))
	var g errgroup.Group
	g.SetLimit(reserveConcurrency)
	for i, item := range o.Items {
		cl, _ := c.Line(item.ProductID)
		lines[i] = stockLine{OrderLine: item, tracked: cl.StockStatus != ""}
		g.Go(func() error {
			s, err := w.repos.Inventory.Stock(ctx, item.ProductID)
			switch {
			case errors.Is(err, store.ErrUntracked):
				untracked[i] = true
				return nil
			case err != nil:
				return err
			}
			lines[i].available = s.Available
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var (
		take  []stockLine
		short []domain.Shortage
	)
	for i, l := range lines {
		q := int64(l.Quantity)
		switch {
		case untracked[i] && !l.tracked:
			// A legacy product: no limit.
		case untracked[i]:
			short = append(short, domain.Shortage{ProductID: l.ProductID, Requested: q, Available: 0})
		case l.spare() < 0:
			short = append(short, domain.Shortage{ProductID: l.ProductID, Requested: q, Available: max(l.available, 0)})
		default:
			take = append(take, l)
		}
	}
	if len(short) > 0 {
		return nil, outOfStock(short)
	}
	slices.SortStableFunc(take, func(a, b stockLine) int { return cmp.Compare(a.spare(), b.spare()) })
	return take, nil
}

// reserve takes the units of every line of take (checkStock's lines, in
// its order) from its product's stock, or none: the order is in the
// buyer's partition and each stock in its product's, so no transaction
// spans them. Each line's take is one conditional write with its
// reservation (Inventory.Reserve). The reads showed every line served a
// moment ago, so a take fails only when the stock moved since: then no
// further take starts (those in flight, at most reserveConcurrency,
// finish), and what was taken, or may have been (a take that failed
// without saying whether it went in), is released again. The refusal
// names the lines whose takes found them short, with the count read
// just after (the lines not taken were enough by the reads); when that
// count is enough again, the checkout goes round instead.
func (w *Writes) reserve(ctx context.Context, o domain.Order, take []stockLine) error {
	var (
		mu    sync.Mutex
		short []domain.Shortage
		held  []domain.OrderLine
		stop  atomic.Bool
	)
	var g errgroup.Group
	g.SetLimit(reserveConcurrency)
	for _, l := range take {
		g.Go(func() error {
			if stop.Load() {
				return nil
			}
			q := int64(l.Quantity)
			err := w.repos.Inventory.Reserve(ctx, domain.NewReservation(l.ProductID, o.ID, o.UserID, q, o.CreatedAt))
			switch {
			case err == nil:
				mu.Lock()
				held = append(held, l.OrderLine)
				mu.Unlock()
				return nil
			case errors.Is(err, store.ErrUntracked) && !l.tracked:
				return nil // a legacy product: no limit
			case errors.Is(err, store.ErrUntracked), errors.Is(err, store.ErrShort):
			default:
				stop.Store(true)
				mu.Lock()
				held = append(held, l.OrderLine)
				mu.Unlock()
				return err
			}
			// Short (a tracked product without stock counts 0): first stop
			// the takes, then read the count at the time for the refusal
			// (one point read of a short line).
			stop.Store(true)
			var available int64
			if errors.Is(err, store.ErrShort) {
				if s, err := w.repos.Inventory.Stock(ctx, l.ProductID); err == nil {
					available = max(s.Available, 0)
				}
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
	w.releaseLines(ctx, o, held)
	if err != nil {
		return err
	}
	refusal := outOfStock(short)
	if slices.ContainsFunc(short, func(s domain.Shortage) bool { return s.Available >= s.Requested }) {
		// The units came back between the take and the count (another
		// checkout returned what it held): a refusal naming a line with
		// enough is no answer, so the checkout goes round again.
		return store.Lost(refusal)
	}
	return refusal
}

// outOfStock is the refusal naming the short lines, by product id.
func outOfStock(short []domain.Shortage) error {
	slices.SortFunc(short, func(a, b domain.Shortage) int { return strings.Compare(a.ProductID, b.ProductID) })
	return domain.OutOfStock(short)
}

// release gives back the units of every line of o, each exactly once
// (Inventory.Release), whether or not the caller still waits (cleanUp).
// Best effort: a release that fails now is made by the reaper
// (ReapReservation) or the orders feed.
func (w *Writes) release(ctx context.Context, o domain.Order) { w.releaseLines(ctx, o, o.Items) }

// releaseLines is release of the given lines of o only.
func (w *Writes) releaseLines(ctx context.Context, o domain.Order, lines []domain.OrderLine) {
	cleanUp(ctx, func(ctx context.Context) {
		for _, l := range lines {
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
