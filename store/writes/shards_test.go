package writes_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/repo"
)

// split splits the stock of product into n shards and returns its
// layout.
func (s *shop) split(product string, n int) domain.StockLayout {
	s.t.Helper()
	l, err := s.writes(s.st).SetShards(s.t.Context(), product, "", n)
	if err != nil {
		s.t.Fatalf("split %s into %d: %v", product, n, err)
	}
	return l
}

// deliver is the inventory feed's share of the work once the shop is at
// rest: every transfer still sent is delivered, and every retired shard
// drained home.
func (s *shop) deliver(product string) {
	s.t.Helper()
	ctx := s.t.Context()
	page, err := s.st.Container(store.InventoryContainer).Query(ctx, store.Query{
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeTransfer}, {Path: "state", Op: store.OpEqual, Value: domain.TransferSent}},
		Limit:   store.MaxQueryPageSize})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, it := range page.Items {
		t, err := repo.Decode[domain.Transfer](it)
		if err != nil {
			s.t.Fatal(err)
		}
		if err := s.repos.Inventory.Complete(ctx, t, time.Now()); err != nil {
			s.t.Fatal(err)
		}
	}
	all, err := s.repos.Inventory.Shards(ctx, product, "")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.repos.Inventory.Drain(ctx, all, time.Now()); err != nil {
		s.t.Fatal(err)
	}
}

// TestTheFlashSaleHoldsAcrossShards: 70 buyers race for 30 units split
// over 4 shards. Exactly 30 are sold, none twice, and no buyer is refused
// while a unit remains in any shard; cancelled orders give their units
// back to the shard they came from, once; merged back into one shard,
// every unit is in the product's own stock document.
func TestTheFlashSaleHoldsAcrossShards(t *testing.T) {
	const buyers, units = 70, 30
	s := newShop(t, map[string]int64{"hot": units})
	l := s.split("hot", 4)
	if l.Shards != 4 || l.ShardsMade != 4 || l.Available != units || !slices.Equal(l.Units, []int64{8, 8, 7, 7}) {
		t.Fatalf("split into 4: %+v, want 30 units as 8, 8, 7, 7", l)
	}
	for i := range buyers {
		s.fill(fmt.Sprintf("u%02d", i), 1, "hot")
	}
	var placed, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() {
			o, err := s.writes(s.st).Checkout(t.Context(), checkout(fmt.Sprintf("u%02d", i), "k", "pm_card_visa"))
			switch {
			case err == nil && o.Status == domain.StatusPlaced:
				placed.Add(1)
			case domain.ErrorCode(err) == domain.EOUTOFSTOCK:
				refused.Add(1)
			default:
				t.Errorf("buyer %d: %v (%s)", i, err, o.Status)
			}
		})
	}
	wg.Wait()
	if placed.Load() != units || refused.Load() != buyers-units {
		t.Errorf("placed %d and refused %d, want %d and %d: every unit sold once, nobody refused while one was left", placed.Load(), refused.Load(), units, buyers-units)
	}
	s.settle(false)
	s.check()

	// Cancel 10 orders: their units go back to the shards they came from.
	orders, err := allOrders(t.Context(), s.st)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, 4)
	cancelled := 0
	for _, o := range orders {
		if o.Status != domain.StatusPlaced || cancelled == 10 {
			continue
		}
		if o.Items[0].StockShards != 4 {
			t.Errorf("order %s recorded %d shards, want 4", o.ID, o.Items[0].StockShards)
		}
		want[held(t, s, o)]++
		if _, err := s.writes(s.st).SetOrderStatus(t.Context(), o.UserID, o.ID, "", domain.StatusCancelled); err != nil {
			t.Fatal(err)
		}
		cancelled++
	}
	s.settle(false)
	s.settle(false) // a release run twice gives nothing back twice
	if l := s.layout("hot"); !slices.Equal(l.Units, want) {
		t.Errorf("after 10 cancels the shards hold %v, want %v: each unit back where it came from", l.Units, want)
	}
	s.check()

	// Merged back: every unit in shard 0, and a buyer is served from it.
	if l := s.split("hot", 1); l.Shards != 1 || l.ShardsMade != 4 || !slices.Equal(l.Units, []int64{10, 0, 0, 0}) {
		t.Errorf("merged: %+v, want the 10 units in shard 0", l)
	}
	if st, err := s.repos.Inventory.Stock(t.Context(), "hot", ""); err != nil || st.Available != 10 {
		t.Errorf("the product's own stock after the merge: %d, %v; want 10", st.Available, err)
	}
	s.fill("late", 2, "hot")
	if o, err := s.writes(s.st).Checkout(t.Context(), checkout("late", "k", "pm_card_visa")); err != nil || o.Status != domain.StatusPlaced {
		t.Errorf("a checkout after the merge: %v (%s)", err, o.Status)
	}
	s.settle(false)
	s.check()
}

// held is the shard that holds the units of o's one line: the end of its
// take's chain.
func held(t *testing.T, s *shop, o domain.Order) int {
	t.Helper()
	l := o.Items[0]
	k := domain.StartShard(o.ID, l.ProductID, l.SKU, l.StockShards)
	for range domain.MaxStockShards {
		r, err := repo.ReadDoc[domain.Reservation](t.Context(), s.st.Container(store.InventoryContainer), domain.ShardKey(l.ProductID, k), domain.ReservationID(o.ID, l.SKU))
		if err != nil {
			t.Fatalf("reservation of %s on shard %d: %v", o.ID, k, err)
		}
		if r.State != domain.ReservationMoved {
			return k
		}
		k = *r.MovedTo
	}
	t.Fatalf("the chain of %s does not end", o.ID)
	return 0
}

func (s *shop) layout(product string) domain.StockLayout {
	s.t.Helper()
	l, err := s.repos.Inventory.Layout(s.t.Context(), product, "")
	if err != nil {
		s.t.Fatal(err)
	}
	return l
}

// TestATakeFollowsItsMarker: a take short on its first shard leaves a
// marker there and takes from another. Units arriving on the first shard
// afterwards do not make a retry of the same take take again: it follows
// the marker to the units it holds. Its release gives them back to that
// shard, once, and ends the take for good.
func TestATakeFollowsItsMarker(t *testing.T) {
	ctx := t.Context()
	s := newShop(t, map[string]int64{"hot": 4})
	s.split("hot", 2)
	inv := s.repos.Inventory
	// An order whose take starts on shard 0, with shard 0 emptied into 1.
	id := ""
	for i := 0; id == ""; i++ {
		if c := fmt.Sprintf("o-%d", i); domain.StartShard(c, "hot", "", 2) == 0 {
			id = c
		}
	}
	if err := inv.Move(ctx, "hot", "", 0, 1, 2, time.Now()); err != nil {
		t.Fatal(err)
	}
	res := domain.NewReservation("hot", "", id, "u1", 1, time.Now())
	if err := inv.Reserve(ctx, res, 2); err != nil {
		t.Fatalf("a take short on its first shard: %v, want it served by the other", err)
	}
	if got := s.layout("hot").Units; !slices.Equal(got, []int64{0, 3}) {
		t.Fatalf("after the take: %v, want [0 3]", got)
	}
	if err := inv.Move(ctx, "hot", "", 1, 0, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := inv.Reserve(ctx, res, 2); err != nil {
			t.Fatalf("the take again: %v", err)
		}
	}
	if got := s.layout("hot").Units; !slices.Equal(got, []int64{3, 0}) {
		t.Fatalf("the take again took again: %v, want [3 0]", got)
	}
	for range 2 {
		if err := inv.Release(ctx, "hot", "", id, 2, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.layout("hot").Units; !slices.Equal(got, []int64{3, 1}) {
		t.Errorf("after two releases: %v, want [3 1]: the unit back on shard 1, once", got)
	}
	if err := inv.Reserve(ctx, res, 2); !errors.Is(err, repo.ErrReleased) {
		t.Errorf("a take after its release: %v, want ErrReleased", err)
	}
}

// TestAReleaseEndsATakeInFlight: an order's release that comes before
// its take (the sweeper expiring a checkout still taking) leaves released
// reservations on every shard the take could go to, so the take, short on
// its first shard or not, takes nothing.
func TestAReleaseEndsATakeInFlight(t *testing.T) {
	ctx := t.Context()
	s := newShop(t, map[string]int64{"hot": 8})
	s.split("hot", 4)
	inv := s.repos.Inventory
	res := domain.NewReservation("hot", "", "o-late", "u1", 1, time.Now())
	if err := inv.Release(ctx, "hot", "", res.OrderID, 4, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := inv.Reserve(ctx, res, 4); !errors.Is(err, repo.ErrReleased) {
		t.Errorf("a take after its order's release: %v, want ErrReleased", err)
	}
	if l := s.layout("hot"); l.Available != 8 {
		t.Errorf("%d units left, want all 8", l.Available)
	}
}

// TestResplittingUnderTakesLosesNoUnit: buyers check out while an admin
// splits and merges the stock again and again, the store failing one
// call in ten (throttled, unavailable) for both. Once the feed's work is
// done, every unit is accounted for: available in a shard, held or sold
// by one order, in one shard only.
func TestResplittingUnderTakesLosesNoUnit(t *testing.T) {
	const units = 300
	s := newShop(t, map[string]int64{"hot": units})
	faulty := faults.Wrap(s.st, faults.Config{Seed: 35, Rules: []faults.Rule{
		{Containers: []string{store.InventoryContainer}, Throttle: 0.05, Unavailable: 0.05},
	}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	var answered atomic.Int64
	for b := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(b), 35))
			for i := 0; ctx.Err() == nil; i++ {
				user := fmt.Sprintf("b%d-%03d", b, i)
				s.fill(user, 1+rng.IntN(3), "hot")
				_, err := s.writes(faulty).Checkout(ctx, checkout(user, "k", "pm_card_visa"))
				if err != nil && !domain.IsCode(err, domain.EOUTOFSTOCK) && !domain.IsCode(err, domain.EUNAVAILABLE) && ctx.Err() == nil {
					t.Errorf("checkout of %s: %v", user, err)
				}
				answered.Add(1)
			}
		})
	}
	var failed int
	for _, n := range []int{4, 16, 2, 1, 8, 3, 1, 16, 5, 1} {
		// Let a few checkouts through between two changes.
		for seen := answered.Load(); answered.Load() < seen+6; {
			time.Sleep(time.Millisecond)
		}
		for {
			_, err := s.writes(faulty).SetShards(t.Context(), "hot", "", n)
			if err == nil {
				break
			}
			if !domain.IsCode(err, domain.EUNAVAILABLE) {
				t.Fatalf("split into %d: %v", n, err)
			}
			failed++ // left half way: the next try, or the feed, goes on
		}
	}
	cancel()
	wg.Wait()
	s.deliver("hot")
	s.settle(true)
	s.check()
	t.Logf("10 splits and merges, %d tries failed half way, %d checkouts answered; %d calls faulted", failed, answered.Load(), faulty.Counts().Injected())
}

// TestASplitDyingAtEveryWriteLosesNoUnit: a split into 4 shards and a
// merge back, each killed after every number of its writes in turn. The
// next run of the same step, and the feed's deliveries, finish it: the
// units are all there, and all in shard 0 after the merge.
func TestASplitDyingAtEveryWriteLosesNoUnit(t *testing.T) {
	const units = 21
	for _, step := range []struct {
		name       string
		from, to   int
		wantShards int
	}{{"Split", 1, 4, 4}, {"Merge", 4, 1, 1}} {
		t.Run(step.name, func(t *testing.T) {
			for writes := 0; ; writes++ {
				s := newShop(t, map[string]int64{"hot": units})
				if step.from > 1 {
					s.split("hot", step.from)
				}
				d := &dying{Store: s.st}
				d.left.Store(int64(writes))
				_, err := s.writes(d).SetShards(t.Context(), "hot", "", step.to)
				if err != nil && !errors.Is(err, errDead) {
					t.Fatalf("dying after %d writes: %v", writes, err)
				}
				s.deliver("hot")
				l := s.split("hot", step.to)
				s.deliver("hot")
				if l = s.layout("hot"); l.Available != units || l.Shards != step.wantShards {
					t.Errorf("dying after %d writes, then again: %+v, want %d units on %d shards", writes, l, units, step.wantShards)
				}
				if step.to == 1 && l.Units[0] != units {
					t.Errorf("dying after %d writes, merged: %v, want every unit in shard 0", writes, l.Units)
				}
				s.check()
				if err == nil {
					return // it got through: every point before was a death
				}
			}
		})
	}
}

// TestAScatteredLineIsGathered: 4 units split over 4 shards, one each,
// and a buyer of 3: no shard has 3, together they do, so the take
// gathers them into its shard and the order is placed; a buyer of 2
// after it is refused, naming the 1 unit left.
func TestAScatteredLineIsGathered(t *testing.T) {
	s := newShop(t, map[string]int64{"hot": 4})
	if l := s.split("hot", 4); !slices.Equal(l.Units, []int64{1, 1, 1, 1}) {
		t.Fatalf("split: %v, want one unit a shard", l.Units)
	}
	s.fill("u1", 3, "hot")
	if o, err := s.writes(s.st).Checkout(t.Context(), checkout("u1", "k", "pm_card_visa")); err != nil || o.Status != domain.StatusPlaced {
		t.Fatalf("a line of 3 from 4 scattered units: %v (%s), want placed", err, o.Status)
	}
	s.fill("u2", 2, "hot")
	_, err := s.writes(s.st).Checkout(t.Context(), checkout("u2", "k", "pm_card_visa"))
	if got := shortages(err); !slices.Equal(got, []domain.Shortage{{ProductID: "hot", Requested: 2, Available: 1}}) {
		t.Errorf("a line of 2 with 1 unit left: %v, want refused naming 1 available", err)
	}
	s.settle(false)
	s.check()
}
