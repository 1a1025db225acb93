package writes_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
)

// TestSplitStockAgainstACounter checks a split stock against the
// simplest model of a stock: one counter of units and, per order, the
// units it holds. Random sequences of takes (new orders, and retries of
// old ones whose recorded shard count may be stale), releases (twice
// too), splits, merges and rebalances, with one store call in ten of the
// inventory failing (a mover or a taker dying half way, its next call or
// the feed's delivery carrying on), must keep, after every step:
//
//   - every unit somewhere: the shards' units, those in flight and those
//     held by orders add up to the counter;
//   - an order holds its units once, in one shard, and a release gives
//     them back once;
//   - a take of q refused only when the shards held fewer than q
//     together (it gathers units scattered over them).
func TestSplitStockAgainstACounter(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const units = 20
		s := newShop(t, map[string]int64{"hot": units})
		inv := s.repos.Inventory
		faulty := repo.New(faults.Wrap(s.st, faults.Config{Seed: rapid.Uint64().Draw(rt, "seed"), Rules: []faults.Rule{
			{Containers: []string{store.InventoryContainer}, Ops: faults.Writes, Unavailable: rapid.SampledFrom([]float64{0, 0.1}).Draw(rt, "write failures")},
		}}), 0).Inventory
		ctx := t.Context()
		holds := map[string]int64{} // order → units it holds
		shardsOf := map[string]int{}
		released := map[string]bool{}
		var orders []string
		check := func(step string) {
			l, err := inv.Shards(ctx, "hot", "")
			if err != nil {
				rt.Fatal(err)
			}
			var in int64
			for _, sh := range l {
				if sh.Available < 0 || sh.Sending < 0 {
					rt.Fatalf("%s: shard %d at %d, sending %d", step, sh.Shard, sh.Available, sh.Sending)
				}
				in += sh.Available
			}
			in += inFlight(rt, s)
			var held int64
			for _, q := range holds {
				held += q
			}
			if in+held != units {
				rt.Fatalf("%s: %d units in the shards and in flight + %d held = %d, want %d", step, in, held, in+held, units)
			}
			if bad, err := heldOnce(s); err != nil || bad != "" {
				rt.Fatalf("%s: %s %v", step, bad, err)
			}
		}
		for step := range rapid.IntRange(5, 30).Draw(rt, "steps") {
			switch rapid.SampledFrom([]string{"take", "take", "take", "retry", "release", "split", "deliver"}).Draw(rt, "action") {
			case "take", "retry":
				home, err := inv.Stock(ctx, "hot", "")
				if err != nil {
					rt.Fatal(err)
				}
				// The count its claim read: the one now, or an older one
				// (never more than were made: that count never goes down).
				id, q := fmt.Sprintf("o-%d", step), int64(rapid.IntRange(1, 3).Draw(rt, "q"))
				n := rapid.IntRange(0, home.Made()).Draw(rt, "shards the order recorded")
				if len(orders) > 0 && rapid.Bool().Draw(rt, "again") {
					id = rapid.SampledFrom(orders).Draw(rt, "order")
					n = shardsOf[id]
				}
				if _, ok := shardsOf[id]; !ok {
					orders, shardsOf[id] = append(orders, id), n
				}
				res := domain.NewReservation("hot", "", id, "u", q, time.Now())
				before, err := inv.Shards(ctx, "hot", "")
				if err != nil {
					rt.Fatal(err)
				}
				err = faulty.Reserve(ctx, res, n)
				switch {
				case err == nil && holds[id] == 0 && !released[id]:
					holds[id] = q
				case err == nil && holds[id] == 0:
					rt.Fatalf("order %s took again after its release", id)
				case err == nil: // a retry of a take that stands
				case errors.Is(err, repo.ErrShort):
					if holds[id] > 0 {
						rt.Fatalf("order %s holds %d, and its retry was refused", id, holds[id])
					}
					if t := domain.Total(before[0], before[1:]); t.Available >= q {
						rt.Fatalf("a take of %d refused while the shards held %d", q, t.Available)
					}
				case errors.Is(err, repo.ErrReleased):
					if !released[id] {
						rt.Fatalf("order %s refused as released before any release", id)
					}
				case domain.IsCode(err, domain.EUNAVAILABLE):
					// Died half way: did it take? The chain says.
					if holds[id] == 0 && !released[id] {
						holds[id] = heldBy(rt, s, id, n)
					}
				default:
					rt.Fatal(err)
				}
			case "release":
				if len(orders) == 0 {
					continue
				}
				id := rapid.SampledFrom(orders).Draw(rt, "order")
				if err := inv.Release(ctx, "hot", "", id, shardsOf[id], time.Now()); err != nil {
					rt.Fatal(err)
				}
				holds[id], released[id] = 0, true
			case "split":
				n := rapid.IntRange(1, 16).Draw(rt, "shards")
				if _, err := faulty.SetShards(ctx, "hot", "", n, time.Now()); err != nil && !domain.IsCode(err, domain.EUNAVAILABLE) {
					rt.Fatal(err)
				}
			case "deliver":
				s.deliver("hot")
			}
			check(fmt.Sprintf("step %d", step))
		}
		s.deliver("hot")
		check("at rest")
	})
}

// inFlight is the units of the transfers sent and not yet received: a
// sender's Sending also counts those received and not yet closed.
func inFlight(rt *rapid.T, s *shop) int64 {
	c := s.st.Container(store.InventoryContainer)
	page, err := c.Query(s.t.Context(), store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeTransfer}, {Path: "state", Op: store.OpEqual, Value: domain.TransferSent}},
		Limit:   store.MaxQueryPageSize})
	if err != nil {
		rt.Fatal(err)
	}
	var n int64
	for _, it := range page.Items {
		t, err := repo.Decode[domain.Transfer](it)
		if err != nil {
			rt.Fatal(err)
		}
		if _, err := c.Read(s.t.Context(), domain.ShardKey(t.Product(), t.To), t.ID); domain.IsCode(err, domain.ENOTFOUND) {
			n += t.Units
		}
	}
	return n
}

// heldBy is what order id's take holds, found by following its chain.
func heldBy(rt *rapid.T, s *shop, id string, shards int) int64 {
	c := s.st.Container(store.InventoryContainer)
	k := domain.StartShard(id, "hot", "", shards)
	for range domain.MaxStockShards {
		r, err := repo.ReadDoc[domain.Reservation](s.t.Context(), c, domain.ShardKey("hot", k), domain.ReservationID(id, ""))
		switch {
		case domain.IsCode(err, domain.ENOTFOUND):
			return 0
		case err != nil:
			rt.Fatal(err)
		case r.State == domain.ReservationMoved:
			k = *r.MovedTo
			continue
		case r.State == domain.ReservationHeld:
			return r.Quantity
		}
		return 0
	}
	return 0
}

// heldOnce reports an order with units held in more than one shard.
func heldOnce(s *shop) (string, error) {
	page, err := s.st.Container(store.InventoryContainer).Query(s.t.Context(), store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeReservation}, {Path: "state", Op: store.OpEqual, Value: domain.ReservationHeld}},
		Limit:   store.MaxQueryPageSize})
	if err != nil {
		return "", err
	}
	seen := map[string]int{}
	for _, it := range page.Items {
		r, err := repo.Decode[domain.Reservation](it)
		if err != nil {
			return "", err
		}
		if k, ok := seen[r.OrderID]; ok {
			return fmt.Sprintf("order %s holds units in shards %d and %d", r.OrderID, k, r.Shard), nil
		}
		seen[r.OrderID] = r.Shard
	}
	return "", nil
}
