package repo

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// This file is the split stock's repository: the shards' reads, the
// transfer of units between shards, and the split, merge and rebalance
// made of transfers (domain/shards.go gives the design).

// shardReads bounds the point reads of one stock's shards in flight.
const shardReads = 8

// Shards reads every shard document of the stock of the variant sku of
// productID, the home one first: index k is shard k. One point read for
// a stock never split, one more per further shard (in parallel).
// ErrUntracked if the product has no stock.
func (r *Inventory) Shards(ctx context.Context, productID, sku string) ([]domain.Stock, error) {
	home, err := r.Stock(ctx, productID, sku)
	if err != nil {
		return nil, err
	}
	all := make([]domain.Stock, home.Made())
	all[0] = home
	var g errgroup.Group
	g.SetLimit(shardReads)
	for k := 1; k < len(all); k++ {
		g.Go(func() (err error) {
			all[k], err = ReadDoc[domain.Stock](ctx, r.c, domain.ShardKey(productID, k), domain.StockIDOf(sku))
			return err
		})
	}
	return all, g.Wait()
}

// Total is the stock as its shards add up (domain.Total): what the
// availability copy and a refusal's count read.
func (r *Inventory) Total(ctx context.Context, productID, sku string) (domain.Stock, error) {
	all, err := r.Shards(ctx, productID, sku)
	if err != nil {
		return domain.Stock{}, err
	}
	return domain.Total(all[0], all[1:]), nil
}

// Layout is the stock's shards as read: what the admin's stock/shards
// answers.
func (r *Inventory) Layout(ctx context.Context, productID, sku string) (domain.StockLayout, error) {
	all, err := r.Shards(ctx, productID, sku)
	if err != nil {
		return domain.StockLayout{}, err
	}
	return layoutOf(all), nil
}

func layoutOf(all []domain.Stock) domain.StockLayout {
	home := all[0]
	l := domain.StockLayout{ProductID: home.ProductID, SKU: home.SKU, Shards: home.Active(), ShardsMade: home.Made(), Units: make([]int64, len(all))}
	for k, s := range all {
		l.Units[k] = s.Available
		l.Available += s.Available
	}
	return l
}

// roomFor is the shard a take of q units, short on the shards in tried
// and now on shard cur, goes on to (with moveOn): the untried one with
// the most units, if it has q. It reads every shard (the home one for
// their count).
// None has q, but together they do (a line of several units at the end
// of a sale, its units scattered): with gather, it moves units from the
// others into cur (transfers, as Rebalance) and answers cur, where the
// take tries again; so a line is refused only when the shards together
// held fewer than q. ErrShort otherwise, with the shards as read.
func (r *Inventory) roomFor(ctx context.Context, productID, sku string, q int64, cur int, tried map[int]bool, moveOn, gather bool, now time.Time) (int, []domain.Stock, error) {
	all, err := r.Shards(ctx, productID, sku)
	if err != nil {
		return 0, nil, err
	}
	best := -1
	var total int64
	for k, s := range all {
		total += s.Available
		if moveOn && !tried[k] && s.Available >= q && (best < 0 || s.Available > all[best].Available) {
			best = k
		}
	}
	switch {
	case best >= 0:
		return best, all, nil
	case !gather || total < q || cur >= len(all):
		return 0, all, ErrShort
	}
	need := q - all[cur].Available
	for k, s := range all {
		if k == cur || need <= 0 || s.Available <= 0 {
			continue
		}
		u := min(need, s.Available)
		switch err := r.Move(ctx, productID, sku, k, cur, u, now); {
		case err == nil:
			need -= u
		case !errors.Is(err, ErrShort):
			return 0, all, err
		}
	}
	if need > 0 {
		return 0, all, ErrShort // taken meanwhile
	}
	return cur, all, nil
}

// deliverInFlight completes every transfer of the stock's units still in
// flight from the shards in all that count units sending (one query in
// each such shard's partition, then Complete), and returns how many it
// delivered. A transfer is in flight for milliseconds while its mover
// lives; one whose mover died waits for the inventory feed, which for a
// dead instance starts a lease expiry later (10 s by default), and a
// take short everywhere meanwhile would refuse a buyer those units
// serve. Complete is idempotent: the mover or the feed delivering the
// same transfer at the same time adds nothing twice.
func (r *Inventory) deliverInFlight(ctx context.Context, all []domain.Stock, now time.Time) (int, error) {
	n := 0
	for k, s := range all {
		if s.Sending <= 0 {
			continue
		}
		sent, _, err := queryPage[domain.Transfer](ctx, r.c, store.Query{
			PartitionKey: domain.ShardKey(all[0].ProductID, k),
			Filters: []store.Filter{
				{Path: "type", Op: store.OpEqual, Value: domain.TypeTransfer},
				{Path: "state", Op: store.OpEqual, Value: domain.TransferSent},
			},
			Limit: store.MaxQueryPageSize,
		})
		if err != nil {
			return n, err
		}
		for _, t := range sent {
			if t.SKU != s.SKU {
				continue
			}
			if err := r.Complete(ctx, t, now); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// Move transfers units from shard from to shard to of the stock of the
// variant sku of productID. The sender's batch takes them from its shard
// (under the condition available >= units) and writes the transfer; the
// receiver's batch (Complete) writes the receipt and adds them. Between
// the two the units are in flight, counted by the sender's transfer
// document in state sent; if the mover dies there, the inventory feed
// completes the transfer. ErrShort if the sending shard has fewer than
// units: nothing moved.
func (r *Inventory) Move(ctx context.Context, productID, sku string, from, to int, units int64, now time.Time) error {
	if units <= 0 || from == to {
		return nil
	}
	t := domain.NewTransfer(productID, sku, from, to, units, now)
	doc, err := encode(t)
	if err != nil {
		return err
	}
	out, err := r.c.ExecuteBatch(ctx, t.ProductID, []store.BatchOp{
		{Kind: store.BatchCreate, Item: doc},
		{Kind: store.BatchPatch, ID: domain.StockIDOf(sku), Patch: sending(units, now),
			Condition: store.Condition{{Path: "available", Op: store.OpGreaterOrEqual, Value: units}}},
	})
	if firstFailed(out) == 1 && domain.IsCode(err, domain.EPRECONDITION) {
		return ErrShort
	}
	if err != nil {
		return err
	}
	return r.Complete(ctx, t, now)
}

// Complete delivers a sent transfer: ONE batch in the receiving shard's
// partition, the create of the receipt (the transfer's id, so a second
// delivery conflicts and adds nothing) and the units added to the
// shard; then ONE batch in the sender's, the transfer marked done (under
// the condition that it was sent) and the units no longer in flight. Both documents
// expire after ReleasedTTL, far past any redelivery of the sender's
// change. A transfer not in state sent is nothing to do.
func (r *Inventory) Complete(ctx context.Context, t domain.Transfer, now time.Time) error {
	if t.State != domain.TransferSent {
		return nil
	}
	ttl := ReleasedTTL
	receipt := t
	receipt.ETag = ""
	receipt.ProductID, receipt.State, receipt.TTL = domain.ShardKey(t.Product(), t.To), domain.TransferReceived, &ttl
	doc, err := encode(receipt)
	if err != nil {
		return err
	}
	out, err := r.c.ExecuteBatch(ctx, receipt.ProductID, []store.BatchOp{
		{Kind: store.BatchCreate, Item: doc},
		{Kind: store.BatchPatch, ID: domain.StockIDOf(t.SKU), Patch: stockChange(t.Units, now)},
	})
	if err != nil && !(firstFailed(out) == 0 && domain.IsCode(err, domain.ECONFLICT)) {
		return err
	}
	_, err = r.c.ExecuteBatch(ctx, t.ProductID, []store.BatchOp{
		{Kind: store.BatchPatch, ID: t.ID, Patch: []store.PatchOp{
			{Op: store.PatchSet, Path: "/state", Value: domain.TransferDone},
			{Op: store.PatchSet, Path: "/ttl", Value: ReleasedTTL},
		}, Condition: store.Condition{{Path: "state", Op: store.OpEqual, Value: domain.TransferSent}}},
		{Kind: store.BatchPatch, ID: domain.StockIDOf(t.SKU), Patch: []store.PatchOp{
			{Op: store.PatchIncrement, Path: "/sending", Value: -t.Units},
			{Op: store.PatchIncrement, Path: "/version", Value: 1},
		}},
	})
	if domain.IsCode(err, domain.EPRECONDITION) || domain.IsCode(err, domain.ENOTFOUND) {
		return nil // closed by another deliverer
	}
	return err
}

// sending is the sender's patch of a transfer of units: taken from the
// shard's available units and counted in flight (Stock.Sending) until
// the transfer is closed.
func sending(units int64, now time.Time) []store.PatchOp {
	return append(stockChange(-units, now), store.PatchOp{Op: store.PatchIncrement, Path: "/sending", Value: units})
}

// SetShards splits the stock of the variant sku of productID into n
// shards, or merges it back into fewer, and then evens its units out
// (Rebalance). The shard documents a split needs are created (with no
// units) before the home document counts them, so whoever reads the count
// finds them; a merge only lowers the count of active shards, and the
// retired ones are drained by Rebalance now and by the inventory feed
// for whatever reaches them later (a release of a take made there).
// Every step moves units only by transfer, so none is created or lost
// whatever runs at the same time or dies half way; a second SetShards
// repeats what the first left undone. EINVALID unless 1 <= n <=
// domain.MaxStockShards; ErrUntracked if the product has no stock.
func (r *Inventory) SetShards(ctx context.Context, productID, sku string, n int, now time.Time) (domain.StockLayout, error) {
	if n < 1 || n > domain.MaxStockShards {
		return domain.StockLayout{}, domain.Errorf(domain.EINVALID, "shards: want 1 to %d, got %d", domain.MaxStockShards, n)
	}
	home, err := r.Stock(ctx, productID, sku)
	if err != nil {
		return domain.StockLayout{}, err
	}
	for k := home.Made(); k < n; k++ {
		if _, err := CreateDoc(ctx, r.c, domain.ShardKey(productID, k), domain.NewStockShard(productID, sku, k, now)); err != nil && !domain.IsCode(err, domain.ECONFLICT) {
			return domain.StockLayout{}, err
		}
	}
	_, _, err = update(ctx, r.c, productID, domain.StockIDOf(sku), rmw[domain.Stock]{
		what: "the stock of " + domain.LineLabel(productID, sku),
	}, func(s *domain.Stock) error {
		made := max(s.Made(), n)
		if s.Active() == n && s.Made() == made {
			return ErrUnchanged
		}
		s.Shards, s.ShardsMade = n, made
		s.Version++
		s.LastUpdated = now.UTC()
		return nil
	})
	if err != nil && !errors.Is(err, ErrUnchanged) {
		return domain.StockLayout{}, err
	}
	return r.Rebalance(ctx, productID, sku, now)
}

// rebalancePasses bounds Rebalance's rounds of reads and transfers.
const rebalancePasses = 4

// Rebalance evens the units of the stock out over its active shards and
// drains the retired ones, by transfers from the shards over their share
// to those under it, as one read of every shard saw them; then it reads
// them again, and goes round again while that read still asks for a
// transfer (rebalancePasses at most). A transfer whose sender was taken
// from meanwhile moves nothing (ErrShort) and is skipped, and so is the
// sender's share, for the pass: the inventory feed drains the retired
// shards into shard 0 as soon as a merge counts fewer active shards, so
// a merge's own transfers out of them race it, and one pass would leave
// shard 0 with their units. Evenness is best effort under takes,
// conservation is not. It returns the shards as read after.
func (r *Inventory) Rebalance(ctx context.Context, productID, sku string, now time.Time) (domain.StockLayout, error) {
	for pass := 1; ; pass++ {
		all, err := r.Shards(ctx, productID, sku)
		if err != nil {
			return domain.StockLayout{}, err
		}
		moves, err := r.even(ctx, all, now)
		switch {
		case err != nil:
			return domain.StockLayout{}, err
		case moves == 0:
			return layoutOf(all), nil
		case pass == rebalancePasses:
			return r.Layout(ctx, all[0].ProductID, all[0].SKU)
		}
	}
}

// even is one pass of Rebalance over the shards as read in all: it
// returns how many transfers it tried.
func (r *Inventory) even(ctx context.Context, all []domain.Stock, now time.Time) (int, error) {
	productID, sku := all[0].ProductID, all[0].SKU
	active := all[0].Active()
	total := layoutOf(all).Available
	want := make([]int64, len(all))
	for k := range active {
		want[k] = total / int64(active)
		if int64(k) < total%int64(active) {
			want[k]++
		}
	}
	give := make([]int64, len(all)) // > 0: over its share; < 0: under it
	for k, s := range all {
		give[k] = s.Available - want[k]
	}
	moves := 0
	for from := range give {
		for to := range give {
			if give[from] <= 0 {
				break
			}
			if give[to] >= 0 {
				continue
			}
			u := min(give[from], -give[to])
			moves++
			err := r.Move(ctx, productID, sku, from, to, u, now)
			if errors.Is(err, ErrShort) {
				give[from] = 0 // taken from meanwhile: leave it
				break
			}
			if err != nil {
				return moves, err
			}
			give[from] -= u
			give[to] += u
		}
	}
	return moves, nil
}

// Drain moves the units of every retired shard of the stock (shards made
// and no longer active) into the home shard. The inventory feed calls it
// for every change of a retired shard.
func (r *Inventory) Drain(ctx context.Context, all []domain.Stock, now time.Time) error {
	for k := all[0].Active(); k < len(all); k++ {
		if all[k].Available <= 0 {
			continue
		}
		err := r.Move(ctx, all[0].ProductID, all[0].SKU, k, 0, all[k].Available, now)
		if err != nil && !errors.Is(err, ErrShort) {
			return err
		}
	}
	return nil
}

// Shard reads shard k of the stock of the variant sku of productID (the
// home document for 0).
func (r *Inventory) Shard(ctx context.Context, productID, sku string, k int) (domain.Stock, error) {
	if k == 0 {
		return r.Stock(ctx, productID, sku)
	}
	return ReadDoc[domain.Stock](ctx, r.c, domain.ShardKey(productID, k), domain.StockIDOf(sku))
}
