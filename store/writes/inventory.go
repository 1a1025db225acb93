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

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// reserveConcurrency bounds the stock reads and the takes of one
// checkout in flight: each line's product is its own partition, so they
// can go at once.
const reserveConcurrency = 8

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
// A read that fails fails the checkout, with nothing written.
//
// A product with no stock document sells without a limit only if it is a
// legacy one, created before the shop tracked stock: its line in c
// carries no availability status, and it has nothing to take. A product
// created since carries one from its create (CreateProduct), so a missing
// stock document means its create stopped between the product and the
// stock: the line is short with 0 available, never sold without a limit.
func (w *Writes) checkStock(ctx context.Context, o *domain.Order, c domain.Cart) error {
	available := make([]int64, len(o.Items))
	untracked := make([]bool, len(o.Items))
	var g errgroup.Group
	g.SetLimit(reserveConcurrency)
	for i := range o.Items {
		item := &o.Items[i]
		g.Go(func() error {
			label := domain.LineLabel(item.ProductID, item.SKU)
			if n, ok := w.cachedShards(label); ok {
				// Split: read only the shard the take starts on.
				item.StockShards = n
				var err error
				available[i], err = w.splitStock(ctx, o.ID, *item, nil)
				return err
			}
			s, err := w.repos.Inventory.Stock(ctx, item.ProductID, item.SKU)
			switch {
			case errors.Is(err, repo.ErrUntracked):
				untracked[i] = true
				return nil
			case err != nil:
				return err
			}
			w.noteShards(label, s)
			available[i] = s.Available
			if s.Active() > 1 {
				item.StockShards = s.Active()
			}
			if s.Active() > 1 || s.Made() > 1 && s.Available < int64(item.Quantity) {
				// Split, or merged with units yet to drain home.
				available[i], err = w.splitStock(ctx, o.ID, *item, &s)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var short []domain.Shortage
	for i, l := range o.Items {
		q := int64(l.Quantity)
		switch {
		case untracked[i] && !tracked(c, l.ProductID, l.SKU):
			// A legacy product: no limit.
		case untracked[i]:
			short = append(short, domain.Shortage{ProductID: l.ProductID, SKU: l.SKU, Requested: q, Available: 0})
		case available[i] < q:
			short = append(short, domain.Shortage{ProductID: l.ProductID, SKU: l.SKU, Requested: q, Available: max(available[i], 0)})
		}
	}
	if len(short) > 0 {
		return outOfStock(short)
	}
	return nil
}

// splitStock is what checkStock counts for line l of order orderID whose
// stock is split (or merged with units yet to drain): the units of the
// shard its take starts on (home, when it starts on shard 0 and the home
// document was read; otherwise one point read, in that shard's
// partition) when they serve the line, and otherwise what the shards can
// serve (servable, one read of each).
func (w *Writes) splitStock(ctx context.Context, orderID string, l domain.OrderLine, home *domain.Stock) (int64, error) {
	k := domain.StartShard(orderID, l.ProductID, l.SKU, l.StockShards)
	s, err := home, error(nil)
	if k > 0 || home == nil {
		var got domain.Stock
		got, err = w.repos.Inventory.Shard(ctx, l.ProductID, l.SKU, k)
		s = &got
	}
	if err != nil || s.Available >= int64(l.Quantity) {
		return s.Available, err
	}
	return w.servable(ctx, l)
}

// shardCountTTL is how long a claim trusts a split stock's shard count
// without reading the home document again (cachedShards).
const shardCountTTL = time.Second

// shardCount is a split stock's count of shards, as its home document
// said at a time.
type shardCount struct {
	n  int
	at time.Time
}

// cachedShards is the shard count of the split stock label read at most
// shardCountTTL ago. With it a claim reads only the shard its take starts
// on, not the home document too: otherwise every checkout of the product
// reads the home partition, which caps the product at 10,000 claims a
// second on Cosmos, well below what its shards serve (docs/scale.md). A
// count stale by that much is harmless: a take started on a shard since
// merged away finds it drained and moves on (repo.Inventory.Reserve),
// and one started among fewer shards than now exist leaves the newer
// ones to the other buyers until the count is read again.
func (w *Writes) cachedShards(label string) (int, bool) {
	v, ok := w.shardCounts.Load(label)
	if !ok {
		return 0, false
	}
	c := v.(shardCount)
	return c.n, w.now().Sub(c.at) < shardCountTTL
}

// noteShards keeps the shard count of s, the home document of a stock
// just read: a split stock's for cachedShards, none for one not split.
func (w *Writes) noteShards(label string, s domain.Stock) {
	if s.Active() > 1 {
		w.shardCounts.Store(label, shardCount{n: s.Active(), at: w.now()})
		return
	}
	w.shardCounts.Delete(label)
}

// servable is the units the stock of l's product can serve a line from:
// every shard's, and those in flight between shards, which a transfer is
// about to put in one of them. A line is never split across shards, but
// a take that finds its units scattered gathers them into one shard
// (repo.Inventory.Reserve), so the sum is what counts. For a stock never
// split that is its count.
func (w *Writes) servable(ctx context.Context, l domain.OrderLine) (int64, error) {
	s, err := w.repos.Inventory.Total(ctx, l.ProductID, l.SKU)
	if err != nil {
		return 0, err
	}
	return s.Available + s.Sending, nil
}

// tracked reports whether the cart's line of the variant carries an
// availability status: its stock is tracked (checkStock). A variant's
// always is.
func tracked(c domain.Cart, productID, sku string) bool {
	l, _ := c.Line(productID, sku)
	return sku != "" || l.StockStatus != ""
}

// take takes the units of every line of o from its product's stock: the
// order is in the buyer's partition and each stock in its product's, so
// no transaction spans them, and each line's take is one conditional
// write with its reservation (Inventory.Reserve), keyed by the order: a
// second take of the same line, by a retry or a second worker, takes
// nothing again. The claim's reads showed every line served a moment
// ago, so a take fails only when the stock moved since: then no further
// take starts (those in flight, at most reserveConcurrency, finish) and
// it returns the short lines, with the count read just after, for the
// rejection; the units taken go back once the order is rejected
// (CarryOut). A short line whose count is enough again (another checkout
// gave its units back meanwhile) is taken once more instead: a refusal
// naming a line with enough is no answer.
func (w *Writes) take(ctx context.Context, o domain.Order) ([]domain.Shortage, error) {
	var short []domain.Shortage
	err := repo.Retry(ctx, func() error {
		var err error
		short, err = w.takeOnce(ctx, o)
		if err == nil && slices.ContainsFunc(short, func(s domain.Shortage) bool { return s.Available >= s.Requested }) {
			return repo.Lost(outOfStock(short))
		}
		return err
	})
	if domain.IsCode(err, domain.ECONFLICT) && len(short) > 0 {
		return short, nil // Retry gave up: the count kept moving
	}
	return short, err
}

// takeOnce is one round of take.
func (w *Writes) takeOnce(ctx context.Context, o domain.Order) ([]domain.Shortage, error) {
	var (
		mu    sync.Mutex
		short []domain.Shortage
		stop  atomic.Bool
	)
	var g errgroup.Group
	g.SetLimit(reserveConcurrency)
	for _, l := range o.Items {
		if l.Unlimited {
			continue // a legacy product: no units to take
		}
		g.Go(func() error {
			if stop.Load() {
				return nil
			}
			q := int64(l.Quantity)
			err := w.repos.Inventory.Reserve(ctx, domain.NewReservation(l.ProductID, l.SKU, o.ID, o.UserID, q, o.CreatedAt), l.StockShards)
			switch {
			case err == nil:
				return nil
			case errors.Is(err, repo.ErrUntracked), errors.Is(err, repo.ErrShort), errors.Is(err, repo.ErrReleased):
			default:
				stop.Store(true)
				return err
			}
			// Short (a tracked product without stock counts 0; units
			// given back count what is left): first stop the takes, then
			// read the count at the time for the rejection.
			stop.Store(true)
			var available int64
			if !errors.Is(err, repo.ErrUntracked) {
				if n, err := w.servable(ctx, l); err == nil {
					available = max(n, 0)
				}
			}
			if errors.Is(err, repo.ErrReleased) {
				available = 0 // never enough: this order's take is over
			}
			mu.Lock()
			short = append(short, domain.Shortage{ProductID: l.ProductID, SKU: l.SKU, Requested: q, Available: available})
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(short) > 0 {
		sortShortages(short)
	}
	return short, nil
}

// outOfStock is the refusal naming the short lines, by product id and SKU.
func outOfStock(short []domain.Shortage) error {
	sortShortages(short)
	return domain.OutOfStock(short)
}

func sortShortages(short []domain.Shortage) {
	slices.SortFunc(short, func(a, b domain.Shortage) int {
		return cmp.Or(strings.Compare(a.ProductID, b.ProductID), strings.Compare(a.SKU, b.SKU))
	})
}
