package costlab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// This file is the split stock's part of the lab (domain/shards.go): what
// a sale, a refusal, a release, a transfer and the inventory feed cost a
// stock never split and one split into 4 and 16 shards, and where those
// Request Units land, partition by partition.

// shardCounts are the stocks the part measures: one never split, and one
// split into 4 and into 16 shards.
var shardCounts = []int{1, 4, 16}

// shardReps bounds the repetitions of each figure of the part (as
// variantReps): the embedded store's charges do not vary from one to the
// next.
const shardReps = 20

// shardSplitTo is the split the part measures, 1 → shardSplitTo, and the
// merge back, shardSplitTo → 1.
const shardSplitTo = 16

// shardEmpty is the shard the part empties, on its stocks split for the
// moved takes, so that a take starting there moves on.
const shardEmpty = 1

// opsRU is what some of a unit of work's store calls cost, means per unit.
type opsRU struct {
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
}

// shardsResult is the split stock's part of the report.
type shardsResult struct {
	Stocks []shardStock `json:"stocks"`
	// Move is one transfer of one unit between two shards (Inventory.Move:
	// the sender's batch, then Complete: the receipt's batch, the close).
	Move designResult `json:"move"`
	// Split is SetShards of a stock never split into shardSplitTo shards,
	// Merge the same stock merged back into 1, each with its rebalance;
	// MergedFeed the inventory feed's step on that merged stock, whose
	// retired shards it still reads.
	Split      designResult `json:"split"`
	Merge      designResult `json:"merge"`
	MergedFeed designResult `json:"mergedFeed"`
	SplitUnits int64        `json:"splitUnits"`
	// PartitionRUs is what one physical partition serves a second;
	// HomeReadCeiling is PartitionRUs ÷ the claim's read of the home
	// document: checkouts a second the home partition serves on that read
	// alone, whatever the shards.
	PartitionRUs    int     `json:"partitionRUs"`
	HomeReadCeiling float64 `json:"homeReadCeiling"`
	// AtMost is the last stock's per-partition figures worked out for a
	// stock of domain.MaxStockShards shards.
	AtMost shardCeiling `json:"atMostShards"`
}

// shardCeiling is the per-partition arithmetic of a stock of Shards
// shards, in checkouts of one line a second of the product: ShardCeiling
// what the shards' partitions serve, HomeCeiling the home partition,
// Ceiling the lower; WithFeed the same with the feed's step for every
// sale.
type shardCeiling struct {
	Shards       int     `json:"shards"`
	ShardCeiling float64 `json:"shardCeiling"`
	HomeCeiling  float64 `json:"homeCeiling"`
	Ceiling      float64 `json:"ceiling"`
	WithFeed     float64 `json:"ceilingWithFeed"`
}

// shardStock is what one stock costs, split into Shards (1: never split).
type shardStock struct {
	Shards int `json:"shards"`
	// Checkout is a checkout of one line of one unit through store/writes
	// whose take starts on a shard other than the home one (a stock never
	// split: every checkout); HomeStart one whose take starts on the home
	// shard, 1 checkout in Shards (nil for a stock never split).
	Checkout  designResult  `json:"checkout"`
	HomeStart *designResult `json:"checkoutStartingHome,omitempty"`
	// ClaimReads, Take and Commit are the calls of Checkout on the
	// inventory container: the claim's reads of the stock (checkStock),
	// the take's batch, the placed order's commit of its reservation.
	ClaimReads opsRU `json:"claimReads"`
	Take       opsRU `json:"take"`
	Commit     opsRU `json:"commit"`
	// StartRU is what Checkout spends in the partition of the shard its
	// take starts on, HomeRU in the home one, OtherRU in each other
	// shard's; HomeStartRU what HomeStart spends in the home partition
	// (where its take starts), HomeStartOtherRU in each other shard's. A
	// stock never split has one partition: StartRU is all.
	StartRU          float64 `json:"startShardRU"`
	HomeRU           float64 `json:"homeRU"`
	OtherRU          float64 `json:"otherShardRU"`
	HomeStartRU      float64 `json:"homeStartRU"`
	HomeStartOtherRU float64 `json:"homeStartOtherShardRU"`
	// MovedTake is a take short on its start shard that moves on (nil for
	// a stock never split); ShortTake one no shard has a unit for.
	MovedTake *designResult `json:"movedTake,omitempty"`
	ShortTake designResult  `json:"shortTake"`
	// Refusal is a checkout of one line of a sold-out stock, refused at
	// the claim, whose take would have started away from the home shard;
	// RefusalReads the stock reads in it.
	Refusal      designResult `json:"refusal"`
	RefusalReads opsRU        `json:"refusalReads"`
	// Release and Commit end a take that stayed on its start shard (a
	// chain of 1); Release2 and Commit2 one that moved on once (a chain of
	// 2: the marker, then the reservation). Nil for a stock never split.
	Release  designResult  `json:"release"`
	Release2 *designResult `json:"releaseChain2,omitempty"`
	Commit1  designResult  `json:"commitChain1"`
	Commit2  *designResult `json:"commitChain2,omitempty"`
	// Feed is the inventory feed's step on one change of the stock
	// (feedworkers.Handlers.InventoryToProducts); FeedShardRU what it
	// spends in each shard's partition.
	Feed        designResult `json:"feed"`
	FeedShardRU float64      `json:"feedShardRU"`
	// Ceiling is the per-partition arithmetic (ceilingAt).
	Ceiling shardCeiling `json:"ceiling"`
}

// shardLab measures the split stock: raw (unmetered) prepares, ms is the
// metered store under a recorder, so each call's partition is known.
type shardLab struct {
	raw, ms *repo.Set
	rw, w   *writes.Writes
	feed    *feedworkers.Handlers
	pay     *payembedded.Provider
	users   int
	orders  int
	reps    int
	now     time.Time
}

// measureShards writes its products into the lab's scratch store s (ids
// "shard-…") and measures through ms, reps times each figure after a
// warm-up (at most shardReps).
func measureShards(ctx context.Context, s, ms store.Store, reps int) (shardsResult, error) {
	out := shardsResult{PartitionRUs: partitionRUs}
	pay, err := payembedded.Open("")
	if err != nil {
		return out, err
	}
	defer pay.Close()
	rec := recording(ms)
	l := &shardLab{raw: repo.New(s, 0), ms: repo.New(rec, 0), pay: pay, reps: max(1, min(reps, shardReps)), now: time.Now().UTC()}
	l.rw = writes.New(l.raw, pay, time.Now)
	l.w = writes.New(l.ms, pay, time.Now)
	l.feed = feedworkers.NewHandlers(rec, writes.New(repo.New(rec, 0), nil, nil), feedworkers.HandlersConfig{})
	for _, n := range shardCounts {
		st, err := l.measureStock(ctx, n)
		if err != nil {
			return out, fmt.Errorf("%d shards: %w", n, err)
		}
		st.Ceiling = st.ceilingAt(n)
		out.Stocks = append(out.Stocks, st)
	}
	if err := l.measureTransfers(ctx, &out); err != nil {
		return out, err
	}
	last := out.Stocks[len(out.Stocks)-1]
	if last.HomeRU > 0 {
		out.HomeReadCeiling = report.Round2(partitionRUs / last.HomeRU)
	}
	out.AtMost = last.ceilingAt(domain.MaxStockShards)
	return out, nil
}

// product creates a product of units in stock split into n shards,
// unmetered.
func (l *shardLab) product(ctx context.Context, id string, units int64, n int) (domain.Product, error) {
	p := domain.Product{Meta: domain.Meta{ID: id}, Name: "Split stock " + id, CategoryID: "shards-lab",
		CategoryName: "Shards lab", PriceCents: 1500, Currency: "USD", PriceVersion: 1, Version: 1, LastUpdated: l.now}
	p, err := l.rw.CreateProduct(ctx, p, units, nil)
	if err != nil {
		return p, fmt.Errorf("product %s: %w", id, err)
	}
	if n > 1 {
		if _, err := l.raw.Inventory.SetShards(ctx, id, "", n, l.now); err != nil {
			return p, fmt.Errorf("product %s into %d shards: %w", id, n, err)
		}
	}
	return p, nil
}

// buyer is a new user whose cart holds one unit of p, written unmetered.
func (l *shardLab) buyer(ctx context.Context, p domain.Product) (string, error) {
	l.users++
	user := fmt.Sprintf("shard-buyer-%05d", l.users)
	_, err := l.raw.Carts.Update(ctx, user, "", func(c *domain.Cart) error { return c.SetQuantity(p, "", 1, l.now) })
	return user, err
}

// order is a new order id whose take of p, split into n shards, starts on
// a shard for which want holds.
func (l *shardLab) order(p string, n int, want func(k int) bool) string {
	for {
		l.orders++
		id := fmt.Sprintf("shard-order-%06d", l.orders)
		if want(domain.StartShard(id, p, "", n)) {
			return id
		}
	}
}

// others is what byPK charged the shards of p's stock of n shards other
// than the home one and shard k.
func others(byPK map[string]float64, p string, n, k int) float64 {
	sum := 0.0
	for j := 1; j < n; j++ {
		if j != k {
			sum += byPK[domain.ShardKey(p, j)]
		}
	}
	return sum
}

// recorded runs fn once under a fresh Meter and call log: what it cost,
// and its calls.
func recorded(ctx context.Context, fn func(ctx context.Context) error) (sample, []call, error) {
	cctx, log := withCallLog(ctx)
	s, err := once(cctx, func(ctx context.Context, _ int) error { return fn(ctx) }, 0)
	return s, log.list(), err
}

// inventoryCalls sums calls on the inventory container of op ("" for
// every op) into sum, and their charges by partition key into byPK.
func inventoryCalls(calls []call, op string, sum *opsRU, byPK map[string]float64) {
	for _, c := range calls {
		if c.Container != store.InventoryContainer || op != "" && c.Op != op {
			continue
		}
		if sum != nil {
			sum.StoreOps++
			sum.RequestUnits += c.RU
		}
		if byPK != nil {
			byPK[c.PK] += c.RU
		}
	}
}

func (s opsRU) mean(n int) opsRU {
	return opsRU{StoreOps: report.Round2(s.StoreOps / float64(max(n, 1))), RequestUnits: report.Round2(s.RequestUnits / float64(max(n, 1)))}
}

// measureStock measures one stock split into n shards (1: never split).
func (l *shardLab) measureStock(ctx context.Context, n int) (shardStock, error) {
	st := shardStock{Shards: n}
	if err := l.measureCheckouts(ctx, n, &st); err != nil {
		return st, fmt.Errorf("checkouts: %w", err)
	}
	if err := l.measureSoldOut(ctx, n, &st); err != nil {
		return st, fmt.Errorf("sold out: %w", err)
	}
	if err := l.measureChains(ctx, n, &st); err != nil {
		return st, fmt.Errorf("takes, releases and commits: %w", err)
	}
	return st, nil
}

// measureCheckouts checks out one unit of a product with plenty of units
// (domain.MaxStock, evened over the shards), by new users, until reps
// checkouts have taken away from the home shard and, of a split stock,
// reps/n (at least 1) on it. Each checkout's order starts its take where
// its id's hash says (domain.StartShard): the part sorts them by it.
func (l *shardLab) measureCheckouts(ctx context.Context, n int, st *shardStock) error {
	p, err := l.product(ctx, fmt.Sprintf("shard-co-%02d", n), domain.MaxStock, n)
	if err != nil {
		return err
	}
	var away, home []sample
	var claim, take, commit opsRU
	var startRU, homeRU, otherRU, homeStartRU, homeStartOtherRU float64
	wantHome := 0
	if n > 1 {
		wantHome = max(1, l.reps/n)
	}
	for i := 0; len(away) < l.reps || len(home) < wantHome; i++ {
		if i > 100*l.reps*n {
			return fmt.Errorf("%d checkouts, %d away from the home shard and %d on it: the start shards are not spread", i, len(away), len(home))
		}
		user, err := l.buyer(ctx, p)
		if err != nil {
			return err
		}
		var o domain.Order
		smp, calls, err := recorded(ctx, func(ctx context.Context) (err error) {
			o, err = l.w.Checkout(ctx, labCheckout(user, user+"-key"))
			return err
		})
		if err != nil {
			return err
		}
		if got := o.Items[0].StockShards; o.Status != domain.StatusPlaced || (n > 1) != (got == n) {
			return fmt.Errorf("order %s: %s, its line's stock in %d shards; want placed, %d", o.ID, o.Status, got, n)
		}
		if i == 0 {
			continue // a warm-up
		}
		k := domain.StartShard(o.ID, p.ID, "", n)
		byPK := map[string]float64{}
		inventoryCalls(calls, "", nil, byPK)
		switch {
		case k == 0 && n > 1:
			if len(home) < wantHome {
				home = append(home, smp)
				homeStartRU += byPK[p.ID]
				homeStartOtherRU += others(byPK, p.ID, n, 0) / float64(n-1)
			}
			continue
		case len(away) >= l.reps:
			continue
		}
		away = append(away, smp)
		inventoryCalls(calls, "read", &claim, nil)
		inventoryCalls(calls, "batch", &take, nil)
		inventoryCalls(calls, "patch", &commit, nil)
		startRU += byPK[domain.ShardKey(p.ID, k)]
		if n > 1 {
			homeRU += byPK[p.ID]
		}
		if n > 2 {
			otherRU += others(byPK, p.ID, n, k) / float64(n-2)
		}
	}
	// The feed's step on the stock, after its sales.
	var feed []sample
	var feedPK map[string]float64
	for i := range l.reps + 1 {
		smp, calls, err := recorded(ctx, func(ctx context.Context) error { return l.feed.InventoryToProducts(ctx, p.ID, "") })
		if err != nil {
			return fmt.Errorf("the inventory feed: %w", err)
		}
		if i > 0 {
			feed = append(feed, smp)
			feedPK = map[string]float64{}
			inventoryCalls(calls, "", nil, feedPK)
		}
	}
	st.Feed = summarize(design{name: "feed"}, feed)
	for _, ru := range feedPK {
		st.FeedShardRU = max(st.FeedShardRU, ru)
	}
	st.Checkout = summarize(design{name: "checkout"}, away)
	st.ClaimReads, st.Take, st.Commit = claim.mean(len(away)), take.mean(len(away)), commit.mean(len(away))
	mean := func(ru float64, n int) float64 { return report.Round2(ru / float64(max(n, 1))) }
	st.StartRU, st.HomeRU, st.OtherRU = mean(startRU, len(away)), mean(homeRU, len(away)), mean(otherRU, len(away))
	if n > 1 {
		h := summarize(design{name: "checkout, starting home"}, home)
		st.HomeStart, st.HomeStartRU, st.HomeStartOtherRU = &h, mean(homeStartRU, len(home)), mean(homeStartOtherRU, len(home))
	}
	return nil
}

// measureSoldOut measures, on a stock with no unit left, a take (short
// on every shard) and a checkout refused at the claim, by one buyer whose
// cart does not change, each try with its own key.
func (l *shardLab) measureSoldOut(ctx context.Context, n int, st *shardStock) error {
	p, err := l.product(ctx, fmt.Sprintf("shard-so-%02d", n), 0, n)
	if err != nil {
		return err
	}
	var short []sample
	for i := range l.reps + 1 {
		res := domain.NewReservation(p.ID, "", l.order(p.ID, n, func(int) bool { return true }), "shard-taker", 1, time.Now())
		smp, _, err := recorded(ctx, func(ctx context.Context) error {
			if err := l.ms.Inventory.Reserve(ctx, res, n); !errors.Is(err, repo.ErrShort) {
				return fmt.Errorf("a take of a sold-out stock: %v, want ErrShort", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if i > 0 {
			short = append(short, smp)
		}
	}
	st.ShortTake = summarize(design{name: "short take"}, short)

	user := fmt.Sprintf("shard-refused-%02d", n)
	if _, err := l.raw.Carts.Update(ctx, user, "", func(c *domain.Cart) error { return c.SetQuantity(p, "", 1, l.now) }); err != nil {
		return err
	}
	want := []domain.Shortage{{ProductID: p.ID, Requested: 1, Available: 0}}
	var refusals []sample
	var reads opsRU
	for i := 0; len(refusals) < l.reps; i++ {
		if i > 100*l.reps*n {
			return fmt.Errorf("%d refusals, %d starting away from the home shard", i, len(refusals))
		}
		smp, calls, err := recorded(ctx, func(ctx context.Context) error {
			_, err := l.w.Checkout(ctx, labCheckout(user, fmt.Sprintf("%s-key-%d", user, i)))
			if e, ok := errors.AsType[*domain.Error](err); ok && slices.Equal(e.Shortages, want) {
				return nil
			}
			return fmt.Errorf("checkout of a sold-out stock: %v, want refused", err)
		})
		if err != nil {
			return err
		}
		// A take that would start away from the home shard reads its
		// start shard, then every shard (servable): one shard twice.
		seen, twice := map[string]int{}, false
		for _, c := range calls {
			if c.Container == store.InventoryContainer && c.Op == "read" && c.PK != p.ID {
				seen[c.PK]++
				twice = twice || seen[c.PK] > 1
			}
		}
		if i == 0 || n > 1 && !twice {
			continue // a warm-up, or a take starting home
		}
		refusals = append(refusals, smp)
		inventoryCalls(calls, "read", &reads, nil)
	}
	st.Refusal, st.RefusalReads = summarize(design{name: "refusal"}, refusals), reads.mean(len(refusals))
	return nil
}

// measureChains measures, on a stock whose shard shardEmpty has no unit
// (its units moved on to the next shard), a take that moves on, and the
// release and the commit of a take that did not (a chain of 1) and of
// one that did (a chain of 2). The takes released and committed are
// made unmetered, except the moved take, released once measured.
func (l *shardLab) measureChains(ctx context.Context, n int, st *shardStock) error {
	p, err := l.product(ctx, fmt.Sprintf("shard-mv-%02d", n), 100_000, n)
	if err != nil {
		return err
	}
	if n > 1 {
		s, err := l.raw.Inventory.Shard(ctx, p.ID, "", shardEmpty)
		if err != nil {
			return err
		}
		if err := l.raw.Inventory.Move(ctx, p.ID, "", shardEmpty, shardEmpty+1, s.Available, l.now); err != nil {
			return fmt.Errorf("emptying shard %d: %w", shardEmpty, err)
		}
	}
	stays := func(k int) bool { return n == 1 || k != shardEmpty }
	moves := func(k int) bool { return k == shardEmpty }
	take := func(ctx context.Context, r *repo.Set, order string) error {
		return r.Inventory.Reserve(ctx, domain.NewReservation(p.ID, "", order, "shard-taker", 1, time.Now()), n)
	}
	release := func(ctx context.Context, order string) error {
		return l.ms.Inventory.Release(ctx, p.ID, "", order, n, time.Now())
	}
	commit := func(ctx context.Context, order string) error { return l.ms.Inventory.Commit(ctx, p.ID, "", order, n) }
	var rel1, com1, moved, rel2, com2 []sample
	for i := range l.reps + 1 {
		keep := func(into *[]sample, s sample) {
			if i > 0 { // the first is a warm-up
				*into = append(*into, s)
			}
		}
		steps := []chainStep{{&rel1, stays, release}, {&com1, stays, commit}}
		if n > 1 {
			steps = append(steps, chainStep{&com2, moves, commit})
			// The moved take, measured, then its release (a chain of 2).
			order := l.order(p.ID, n, moves)
			s, _, err := recorded(ctx, func(ctx context.Context) error { return take(ctx, l.ms, order) })
			if err != nil {
				return fmt.Errorf("a take moving on: %w", err)
			}
			keep(&moved, s)
			if s, _, err = recorded(ctx, func(ctx context.Context) error { return release(ctx, order) }); err != nil {
				return fmt.Errorf("release of a take that moved on: %w", err)
			}
			keep(&rel2, s)
		}
		for _, step := range steps {
			order := l.order(p.ID, n, step.start)
			if err := take(ctx, l.raw, order); err != nil {
				return err
			}
			s, _, err := recorded(ctx, func(ctx context.Context) error { return step.run(ctx, order) })
			if err != nil {
				return err
			}
			keep(step.into, s)
		}
	}
	st.Release = summarize(design{name: "release"}, rel1)
	st.Commit1 = summarize(design{name: "commit"}, com1)
	if n > 1 {
		m, r, c := summarize(design{name: "moved take"}, moved), summarize(design{name: "release, chain of 2"}, rel2), summarize(design{name: "commit, chain of 2"}, com2)
		st.MovedTake, st.Release2, st.Commit2 = &m, &r, &c
	}
	return nil
}

// chainStep is a take made unmetered on a shard for which start holds,
// then run, measured, on its order.
type chainStep struct {
	into  *[]sample
	start func(k int) bool
	run   func(ctx context.Context, order string) error
}

// measureTransfers measures one transfer between two shards of a stock
// split into 4, and the split of a stock never split into shardSplitTo
// shards and its merge back into 1, each on a product of its own.
func (l *shardLab) measureTransfers(ctx context.Context, out *shardsResult) error {
	p, err := l.product(ctx, "shard-xfer", 1_000, 4)
	if err != nil {
		return err
	}
	var moves []sample
	for i := range l.reps + 1 {
		from, to := 1+i%2, 2-i%2
		s, _, err := recorded(ctx, func(ctx context.Context) error { return l.ms.Inventory.Move(ctx, p.ID, "", from, to, 1, time.Now()) })
		if err != nil {
			return fmt.Errorf("a transfer: %w", err)
		}
		if i > 0 {
			moves = append(moves, s)
		}
	}
	out.Move = summarize(design{name: "transfer"}, moves)

	out.SplitUnits = 100 * shardSplitTo
	var splits, merges, feed []sample
	for i := range l.reps + 1 {
		p, err := l.product(ctx, fmt.Sprintf("shard-split-%02d", i), out.SplitUnits, 1)
		if err != nil {
			return err
		}
		for _, step := range []struct {
			into *[]sample
			n    int
		}{{&splits, shardSplitTo}, {&merges, 1}} {
			var layout domain.StockLayout
			s, _, err := recorded(ctx, func(ctx context.Context) (err error) {
				layout, err = l.ms.Inventory.SetShards(ctx, p.ID, "", step.n, time.Now())
				return err
			})
			if err != nil {
				return fmt.Errorf("into %d shards: %w", step.n, err)
			}
			if layout.Shards != step.n || layout.Available != out.SplitUnits || layout.Units[0] != out.SplitUnits/int64(step.n) {
				return fmt.Errorf("into %d shards: %+v, want %d units evened over them", step.n, layout, out.SplitUnits)
			}
			if i > 0 {
				*step.into = append(*step.into, s)
			}
		}
		if i == l.reps {
			for j := range l.reps + 1 {
				s, _, err := recorded(ctx, func(ctx context.Context) error { return l.feed.InventoryToProducts(ctx, p.ID, "") })
				if err != nil {
					return fmt.Errorf("the inventory feed of a merged stock: %w", err)
				}
				if j > 0 {
					feed = append(feed, s)
				}
			}
		}
	}
	out.Split = summarize(design{name: fmt.Sprintf("split 1 → %d", shardSplitTo)}, splits)
	out.Merge = summarize(design{name: fmt.Sprintf("merge %d → 1", shardSplitTo)}, merges)
	out.MergedFeed = summarize(design{name: "feed of a merged stock"}, feed)
	return nil
}

// ceilingAt is the per-partition arithmetic of st's figures for a stock
// of n shards. A sale whose take starts on shard k ≥ 1 spends StartRU in
// that shard's partition, HomeRU in the home one and OtherRU in each
// other; one starting on the home shard (1 in n) HomeStartRU in the home
// partition and HomeStartOtherRU in each other. With the sales spread
// evenly over the start shards, per sale of the product:
//
//	each shard k ≥ 1: StartRU/n + (n−2)/n × OtherRU + HomeStartOtherRU/n
//	home:             (n−1)/n × HomeRU + HomeStartRU/n
//
// each partition serving PartitionRUs; with the feed's step for every
// sale, each partition pays FeedShardRU more per sale.
func (st shardStock) ceilingAt(n int) shardCeiling {
	c := shardCeiling{Shards: n}
	k := float64(n)
	shard := st.StartRU/k + (k-2)/k*st.OtherRU + st.HomeStartOtherRU/k
	home := (k-1)/k*st.HomeRU + st.HomeStartRU/k
	if n == 1 {
		shard, home = st.StartRU, st.StartRU
	}
	if shard <= 0 || home <= 0 {
		return c
	}
	c.ShardCeiling = report.Round2(partitionRUs / shard)
	c.HomeCeiling = report.Round2(partitionRUs / home)
	c.Ceiling = min(c.ShardCeiling, c.HomeCeiling)
	c.WithFeed = report.Round2(partitionRUs / (max(shard, home) + st.FeedShardRU))
	return c
}

// shardsNote says what the part measures.
const shardsNote = "a stock never split and the same stock split into %d and %d shards (domain/shards.go; store/repo: Inventory.SetShards), each with plenty of units evened over its shards; means of %d of each, through the shop's own code on the metered store, whose recorder names each call's partition. A checkout is store/writes.Checkout of a one-line cart of one unit, by a new user: its order's id picks the shard its take starts on (domain.StartShard), so the checkouts are sorted by it, those starting away from the home shard (every one of a stock never split) and those starting on it (1 in N); the claim's reads, the take and the commit are that checkout's calls on the inventory container. The take that moves on starts on a shard emptied for it (its units moved to the next), so it leaves a marker there: the release and the commit of such a take follow a chain of 2; the refused checkout is one of a sold-out stock whose take would start away from the home shard; the feed's step is feedworkers.Handlers.InventoryToProducts on the stock as a change of any of its shards runs it"

// shardsTable is one table of the part: a header and rows of cells.
type shardsTable struct {
	header []string
	align  string // the markdown alignment row
	rows   [][]string
}

func opsRUText(ops, ru float64) string {
	if ops == 1 {
		return fmt.Sprintf("1 op, %.2f RU", ru)
	}
	return fmt.Sprintf("%.4g ops, %.2f RU", ops, ru)
}

func designText(d *designResult) string {
	if d == nil {
		return "—"
	}
	return opsRUText(d.StoreOps, d.RequestUnits)
}

// shardsTables are the part's three tables: each stock's operations,
// the transfers, the per-partition arithmetic.
func shardsTables(r shardsResult) []shardsTable {
	ops := shardsTable{header: []string{"operation", "what it is"}, align: "|---|---|"}
	for _, st := range r.Stocks {
		if st.Shards == 1 {
			ops.header = append(ops.header, "never split")
		} else {
			ops.header = append(ops.header, fmt.Sprintf("%d shards", st.Shards))
		}
		ops.align += "--:|"
	}
	row := func(name, what string, cell func(st shardStock) string) {
		cells := []string{name, what}
		for _, st := range r.Stocks {
			cells = append(cells, cell(st))
		}
		ops.rows = append(ops.rows, cells)
	}
	row("checkout of one line", "its take starting away from the home shard (never split: every checkout)", func(st shardStock) string { return designText(&st.Checkout) })
	row("checkout of one line, starting home", "its take starting on the home shard (1 in N)", func(st shardStock) string { return designText(st.HomeStart) })
	row("the claim's stock reads", "of the checkout (checkStock): the home document, and the start shard when it is not the home one", func(st shardStock) string {
		return opsRUText(st.ClaimReads.StoreOps, st.ClaimReads.RequestUnits)
	})
	row("take", "of the checkout: ONE batch on its start shard (the reservation created, the shard's units −1 under available >= 1)", func(st shardStock) string {
		return opsRUText(st.Take.StoreOps, st.Take.RequestUnits)
	})
	row("commit", "of the checkout: its reservation marked committed (one conditional patch)", func(st shardStock) string {
		return opsRUText(st.Commit.StoreOps, st.Commit.RequestUnits)
	})
	row("take moving on", "short on its start shard: the failed batch, every shard read, the marker, the batch on the shard with the most units", func(st shardStock) string { return designText(st.MovedTake) })
	row("take refused", "no shard has a unit: the failed batch, every shard read (a race lost after the claim; the checkout then reads every shard again for its answer)", func(st shardStock) string { return designText(&st.ShortTake) })
	row("refusal at the claim", "a checkout of a sold-out stock, refused before anything is written", func(st shardStock) string { return designText(&st.Refusal) })
	row("its stock reads", "the home document, the start shard, then every shard (what a line can be served: servable)", func(st shardStock) string {
		return opsRUText(st.RefusalReads.StoreOps, st.RefusalReads.RequestUnits)
	})
	row("release, chain of 1", "the reservation read on its start shard, one batch (released, units +1)", func(st shardStock) string { return designText(&st.Release) })
	row("release, chain of 2", "the marker read, the reservation read on the next shard, one batch", func(st shardStock) string { return designText(st.Release2) })
	row("commit, chain of 1", "one conditional patch (held → committed)", func(st shardStock) string { return designText(&st.Commit1) })
	row("commit, chain of 2", "the patch refused by the marker, the marker read, the patch on the next shard", func(st shardStock) string { return designText(st.Commit2) })
	row("inventory feed, per change", "every shard read, the product read (its availability copy unchanged: no write)", func(st shardStock) string { return designText(&st.Feed) })

	moves := shardsTable{header: []string{"operation", "what it is", "store ops", "RU"}, align: "|---|---|--:|--:|"}
	for _, d := range []struct {
		name, what string
		r          designResult
	}{
		{"transfer", "Inventory.Move of 1 unit between 2 shards: the sender's batch (the transfer written, the units −1 and in flight), the receipt's batch (units +1), the close (the transfer done, no longer in flight)", r.Move},
		{r.Split.Design, fmt.Sprintf("Inventory.SetShards of a stock of %d units never split: the home read, %d shard documents created, the count on the home document (read, replace), then the rebalance: every shard read, %d transfers, every shard read again", r.SplitUnits, shardSplitTo-1, shardSplitTo-1), r.Split},
		{r.Merge.Design, fmt.Sprintf("the same stock back into 1: the home read, the count (read, replace), every shard read, %d transfers home, every shard read again", shardSplitTo-1), r.Merge},
		{"inventory feed of the merged stock", fmt.Sprintf("per change: its %d shards still read (shards are never deleted, and the feed drains the retired ones), the product read", shardSplitTo), r.MergedFeed},
	} {
		moves.rows = append(moves.rows, []string{d.name, d.what, fmt.Sprintf("%.4g", d.r.StoreOps), fmt.Sprintf("%.2f", d.r.RequestUnits)})
	}

	parts := shardsTable{header: []string{"shards", "RU per sale in its start shard's partition", "in the home partition: take elsewhere / at home", "in each other shard's: take elsewhere / at home",
		"sales/s one shard's partition serves", "the shards' partitions serve", "the home partition serves", "the product's ceiling", "with the feed's step on every sale"},
		align: "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"}
	for _, st := range r.Stocks {
		home, other := fmt.Sprintf("%.2f / %.2f", st.HomeRU, st.HomeStartRU), fmt.Sprintf("%.2f / %.2f", st.OtherRU, st.HomeStartOtherRU)
		if st.Shards == 1 {
			home, other = "(the same partition)", "—"
		}
		c := st.Ceiling
		parts.rows = append(parts.rows, []string{fmt.Sprint(st.Shards), fmt.Sprintf("%.2f", st.StartRU), home, other, fmt.Sprintf("%.0f", float64(r.PartitionRUs)/st.StartRU),
			fmt.Sprintf("%.0f", c.ShardCeiling), fmt.Sprintf("%.0f", c.HomeCeiling), fmt.Sprintf("**%.0f**", c.Ceiling), fmt.Sprintf("%.0f", c.WithFeed)})
	}
	if last := r.Stocks[len(r.Stocks)-1]; r.AtMost.Shards > 0 {
		c := r.AtMost
		parts.rows = append(parts.rows, []string{fmt.Sprintf("%d (the %d-shard figures, worked out)", c.Shards, last.Shards), "", "", "", "",
			fmt.Sprintf("%.0f", c.ShardCeiling), fmt.Sprintf("%.0f", c.HomeCeiling), fmt.Sprintf("**%.0f**", c.Ceiling), fmt.Sprintf("%.0f", c.WithFeed)})
	}
	return []shardsTable{ops, moves, parts}
}

// shardsArithmetic says how the last table is worked out, and what its
// figures say.
func shardsArithmetic(r shardsResult, inv inventoryResult) string {
	last := r.Stocks[len(r.Stocks)-1]
	pr := r.PartitionRUs
	t := fmt.Sprintf("one physical partition serves at most %d RU/s; each shard is a logical partition of its own, and the arithmetic takes each on a physical partition of its own (shards sharing one share its %d RU/s). "+
		"A sale whose take starts on shard k ≥ 1 spends in that shard's partition the claim's read of it, the take and the commit, and in the home partition the claim's read of the home document; 1 sale in N starts on the home shard. "+
		"With the sales spread evenly, per sale of the product, each shard k ≥ 1 pays (its start-shard RU + (N−2) × the other-shard RU of a take elsewhere + the other-shard RU of a take at home) ÷ N, "+
		"the home partition ((N−1) × its RU of a take elsewhere + its RU of a take at home) ÷ N; each partition serves %d RU/s, and the product's ceiling is the lower of the two. "+
		"The home partition pays the claim's read of the home document, %.2f RU, for every checkout however many shards: %d ÷ %.2f = %.0f checkouts a second is where more shards stop helping unless that read moves; the home partition, shard 0 too, binds well before (%d shards: %.0f; %d: %.0f)",
		pr, pr, pr, last.HomeRU, pr, last.HomeRU, r.HomeReadCeiling, last.Shards, last.Ceiling.Ceiling, r.AtMost.Shards, r.AtMost.Ceiling)
	if h := last.HomeStart; h != nil && h.StoreOps > last.Checkout.StoreOps-1 {
		t += fmt.Sprintf(". A checkout whose take starts on the home shard reads more than one whose take starts elsewhere (%.4g ops against %.4g at %d shards): its claim, having read the home document, reads every shard (store/writes: splitStock goes on to servable when the start shard is the home one), so it pays %.2f RU in the home partition and %.2f RU in every other shard's",
			h.StoreOps, last.Checkout.StoreOps, last.Shards, last.HomeStartRU, last.HomeStartOtherRU)
	}
	if one := r.Stocks[0]; inv.CeilingPerSecond > 0 && one.Shards == 1 && one.Commit.RequestUnits > 0 {
		t += fmt.Sprintf(". The inventory section's ceiling of one product, %.0f sales/s, counts the claim's read and the take; the placed order's commit of its reservation (%.2f RU) lands in the same partition, so a sale of a stock never split spends %.2f RU there: %.0f sales/s",
			inv.CeilingPerSecond, one.Commit.RequestUnits, one.StartRU, one.Ceiling.Ceiling)
	}
	return t + fmt.Sprintf(". The last column adds the inventory feed's step for every sale, as when each change is a feed pass of its own: it reads every shard, %.2f RU in each shard's partition per sale of any shard (a pass that finds many changes of the stock reads the shards once for them all, so under load it costs less)", last.FeedShardRU)
}

// writeShardsMarkdown prints the part's tables.
func writeShardsMarkdown(out io.Writer, r costReport) {
	s := r.Shards
	fmt.Fprintf(out, "\n### Split stock: what the shards cost and save\n\n%s.\n", upperFirst(fmt.Sprintf(shardsNote, shardCounts[1], shardCounts[2], shardRepsOf(r))))
	titles := []string{"", "Transfers, the split and the merge:", "Per partition, checkouts of one line a second of one product:"}
	for i, t := range shardsTables(s) {
		if titles[i] != "" {
			fmt.Fprintf(out, "\n%s\n", titles[i])
		}
		fmt.Fprintf(out, "\n| %s |\n%s\n", strings.Join(t.header, " | "), t.align)
		for _, row := range t.rows {
			fmt.Fprintf(out, "| %s |\n", strings.Join(row, " | "))
		}
	}
	fmt.Fprintf(out, "\n%s.\n", upperFirst(shardsArithmetic(s, r.Inventory)))
}

// writeShardsText prints the part for a terminal.
func writeShardsText(out io.Writer, r costReport) {
	s := r.Shards
	fmt.Fprintf(out, "\nsplit stock (%s)\n", fmt.Sprintf(shardsNote, shardCounts[1], shardCounts[2], shardRepsOf(r)))
	for _, t := range shardsTables(s) {
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(t.header, "\t")+"\t")
		for _, row := range t.rows {
			fmt.Fprintln(tw, strings.ReplaceAll(strings.Join(row, "\t"), "**", "")+"\t")
		}
		tw.Flush()
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, shardsArithmetic(s, r.Inventory))
}

func shardRepsOf(r costReport) int { return max(1, min(r.Repetitions, shardReps)) }

// shardsPart is the docs section of writeShardsMarkdown alone, with the
// command that wrote it: the workshop's module 10 shows it.
const shardsPart = "cost shards"

func writeShardsPart(out io.Writer, r costReport) {
	s := r.Shards
	fmt.Fprintf(out, "Written by `%s` (in short, the split stock of its cost section in docs/performance.md, which has every figure and the arithmetic):\n\n", r.Command)
	fmt.Fprintln(out, "| shards | a checkout of one line: take elsewhere / at home | a refusal of a sold-out stock | the feed's step per change | the home partition serves | the product's ceiling, checkouts/s | with the feed's step on every sale |")
	fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|--:|")
	for _, st := range s.Stocks {
		checkout := designText(&st.Checkout)
		if st.HomeStart != nil {
			checkout += " / " + designText(st.HomeStart)
		}
		fmt.Fprintf(out, "| %d | %s | %s | %s | %.0f | **%.0f** | %.0f |\n", st.Shards, checkout, designText(&st.Refusal), designText(&st.Feed),
			st.Ceiling.HomeCeiling, st.Ceiling.Ceiling, st.Ceiling.WithFeed)
	}
	if c := s.AtMost; c.Shards > 0 {
		fmt.Fprintf(out, "| %d (worked out) | | | | %.0f | **%.0f** | %.0f |\n", c.Shards, c.HomeCeiling, c.Ceiling, c.WithFeed)
	}
	last := s.Stocks[len(s.Stocks)-1]
	fmt.Fprintf(out, "\nOne physical partition serves at most %d RU/s. A sale spends %.2f RU in its start shard's partition (the claim's read of it, the take, the commit): %.0f sales/s of one shard. The home partition pays the claim's read of the home document, %.2f RU, for every checkout however many shards: %d ÷ %.2f = %.0f checkouts/s is where more shards stop helping unless that read moves. Being shard 0 too, with 1 take in N, the home partition binds well before: at %d shards, %.0f checkouts/s.\n",
		s.PartitionRUs, last.StartRU, float64(s.PartitionRUs)/last.StartRU, last.HomeRU, s.PartitionRUs, last.HomeRU, s.HomeReadCeiling, last.Shards, last.Ceiling.HomeCeiling)
}
