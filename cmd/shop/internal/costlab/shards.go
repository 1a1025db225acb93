package costlab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
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

// shardStaleTo is the merge, shardSplitTo → shardStaleTo, after which the
// part checks out with the shard count a claim cached before it.
const shardStaleTo = 4

// shardEmpty is the shard the part empties, on its stocks split for the
// moved takes, so that a take starting there moves on.
const shardEmpty = 1

// shardGather is the units of the line whose take gathers them, one from
// each of shardGather shards.
const shardGather = 3

// countTTL is how long a claim trusts a split stock's shard count
// without reading the home document again: store/writes' shardCountTTL.
const countTTL = time.Second

// shardInstances is the shop instances the per-partition arithmetic
// counts, each reading a split stock's home document about once per
// countTTL while it sells the product (as docs/scale.md counts 100
// instances reading the categories document).
const shardInstances = 100

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
	// Merge the same stock merged back into 1, each with its rebalance.
	// MergedFeed is the inventory feed's step (Handlers.Inventory) on a
	// change of that merged stock's home document, in stock;
	// MergedFeedSum its step near sold out, or on a change of a retired
	// shard (InventoryToProducts), which still reads the retired shards.
	Split         designResult `json:"split"`
	Merge         designResult `json:"merge"`
	MergedFeed    designResult `json:"mergedFeed"`
	MergedFeedSum designResult `json:"mergedFeedSum"`
	SplitUnits    int64        `json:"splitUnits"`
	// Stale is a checkout within the count's second after a merge
	// shardSplitTo → shardStaleTo, its claim still counting shardSplitTo
	// shards (the count cached before the merge), its take starting on a
	// retired shard; StaleStock its calls on the inventory container.
	Stale      designResult `json:"staleCountCheckout"`
	StaleStock opsRU        `json:"staleCountStock"`
	StaleFrom  int          `json:"staleFrom"`
	StaleTo    int          `json:"staleTo"`
	// PartitionRUs is what one physical partition serves a second;
	// Instances the shop instances the arithmetic counts, each reading
	// the home document about once per CountTTLSeconds (the claim's
	// cached count).
	PartitionRUs    int     `json:"partitionRUs"`
	Instances       int     `json:"instances"`
	CountTTLSeconds float64 `json:"countTTLSeconds"`
	// AtMost is the last stock's per-partition figures worked out for a
	// stock of domain.MaxStockShards shards.
	AtMost shardCeiling `json:"atMostShards"`
}

// shardCeiling is the per-partition arithmetic of a stock of Shards
// shards, in checkouts of one line a second of the product: ShardCeiling
// what the partitions of shards k ≥ 1 serve, HomeCeiling the home
// partition (less the instances' count reads), Ceiling the lower;
// WithFeed the same with the inventory feed's step for every sale, the
// stock in stock (its fast path), WithFeedLow near sold out (every shard
// read).
type shardCeiling struct {
	Shards       int     `json:"shards"`
	ShardCeiling float64 `json:"shardCeiling"`
	HomeCeiling  float64 `json:"homeCeiling"`
	Ceiling      float64 `json:"ceiling"`
	WithFeed     float64 `json:"ceilingWithFeed"`
	WithFeedLow  float64 `json:"ceilingWithFeedNearSoldOut"`
}

// shardStock is what one stock costs, split into Shards (1: never split).
type shardStock struct {
	Shards int `json:"shards"`
	// Checkout is a checkout of one line of one unit through store/writes
	// whose claim finds the stock's shard count cached (one of an
	// instance's checkouts within countTTL of the one that read it) and
	// whose take starts on a shard other than the home one (a stock never
	// split: every checkout, whose claim reads its one document); HomeStart
	// the same whose take starts on the home shard, 1 checkout in Shards.
	// CountRead and CountReadHome are the same two whose claim reads the
	// count: the first checkout of an instance, or the first after the
	// count's second. The three are nil for a stock never split.
	Checkout      designResult  `json:"checkout"`
	HomeStart     *designResult `json:"checkoutStartingHome,omitempty"`
	CountRead     *designResult `json:"checkoutReadingCount,omitempty"`
	CountReadHome *designResult `json:"checkoutReadingCountStartingHome,omitempty"`
	// ClaimReads, Take and Commit are the calls of Checkout on the
	// inventory container: the claim's reads of the stock (checkStock),
	// the take's batch, the placed order's commit of its reservation.
	// CountClaimReads and CountClaimReadsHome are the claim's reads of
	// CountRead and CountReadHome.
	ClaimReads          opsRU `json:"claimReads"`
	CountClaimReads     opsRU `json:"countClaimReads"`
	CountClaimReadsHome opsRU `json:"countClaimReadsStartingHome"`
	Take                opsRU `json:"take"`
	Commit              opsRU `json:"commit"`
	// StartRU is what Checkout spends in the partition of the shard its
	// take starts on, HomeStartRU what HomeStart spends in the home
	// partition (where its take starts), ElsewhereRU what either spends in
	// any other partition of the stock; CountReadRU what CountRead
	// spends in the home partition: the count's read. A stock never split
	// has one partition: StartRU is all.
	StartRU     float64 `json:"startShardRU"`
	HomeStartRU float64 `json:"homeStartRU"`
	ElsewhereRU float64 `json:"elsewhereRU"`
	CountReadRU float64 `json:"countReadRU"`
	// MovedTake is a take short on its start shard that moves on, and
	// GatherTake a take of shardGather units none of whose shards holds
	// them, one unit on each (nil for a stock never split); ShortTake one
	// no shard has a unit for.
	MovedTake  *designResult `json:"movedTake,omitempty"`
	GatherTake *designResult `json:"gatherTake,omitempty"`
	ShortTake  designResult  `json:"shortTake"`
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
	// FeedInStock is the inventory feed's step
	// (feedworkers.Handlers.Inventory) on a batch of one change of shard
	// 1 (a stock never split: of its home document) holding more than
	// domain.LowStock units, the product showing in stock: its fast path;
	// FeedInStockHomeRU what it spends in the home partition (the home
	// document's read, to know the shard active). FeedInStockHome is the
	// same for a change of the home document (nil for a stock never
	// split). Feed is the step on a change of a shard holding
	// domain.LowStock units or fewer, near sold out: every shard read
	// (InventoryToProducts); FeedShardRU what it spends in each shard's
	// partition.
	FeedInStock       designResult  `json:"feedInStock"`
	FeedInStockHome   *designResult `json:"feedInStockHome,omitempty"`
	FeedInStockHomeRU float64       `json:"feedInStockHomeRU"`
	Feed              designResult  `json:"feed"`
	FeedShardRU       float64       `json:"feedShardRU"`
	// Ceiling is the per-partition arithmetic (ceilingAt).
	Ceiling shardCeiling `json:"ceiling"`
}

// shardClock is the clock of the metered checkouts' Writes: it runs
// shardClockSlowdown times slower than the wall clock, so a claim finds
// the shard count that an earlier claim of the same measure cached
// (store/writes: cachedShards) however slowly the machine runs it, until
// expire moves it on past the count's second. It does not stand still:
// each write's timestamps change as they would (a clock standing still
// would spare every move of an order the index terms of its changed
// timestamps, 0.45 RU each: store/embedded/charge.go).
type shardClock struct {
	mu   sync.Mutex
	wall time.Time // when the clock read at
	at   time.Time
}

// shardClockSlowdown is how many wall-clock seconds a second of
// shardClock lasts.
const shardClockSlowdown = 10

func newShardClock(at time.Time) *shardClock { return &shardClock{wall: time.Now(), at: at} }

func (c *shardClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Nine digits of fraction, the last never 0: a timestamp's JSON
	// (RFC 3339, trailing zeros dropped) is always as long, so a
	// document's size, and its charge, does not vary with the clock.
	return c.at.Add(time.Since(c.wall) / shardClockSlowdown).Truncate(10 * time.Nanosecond).Add(7 * time.Nanosecond)
}

// expire moves the clock on past every shard count cached: the next
// claim of each stock reads its home document again.
func (c *shardClock) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(2 * countTTL)
}

// shardLab measures the split stock: raw (unmetered) prepares, ms is the
// metered store under a recorder, so each call's partition is known; w
// checks out through ms on clock.
type shardLab struct {
	s       store.Store
	raw, ms *repo.Set
	rw, w   *writes.Writes
	clock   *shardClock
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
	out := shardsResult{PartitionRUs: partitionRUs, Instances: shardInstances, CountTTLSeconds: countTTL.Seconds()}
	pay, err := payembedded.Open("")
	if err != nil {
		return out, err
	}
	defer pay.Close()
	rec := recording(ms)
	l := &shardLab{s: s, raw: repo.New(s, 0), ms: repo.New(rec, 0), pay: pay, reps: max(1, min(reps, shardReps)), now: time.Now().UTC()}
	l.clock = newShardClock(l.now)
	l.rw = writes.New(l.raw, pay, time.Now)
	l.w = writes.New(l.ms, pay, l.clock.now)
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
	if err := l.measureStale(ctx, &out); err != nil {
		return out, fmt.Errorf("a stale shard count: %w", err)
	}
	out.AtMost = out.Stocks[len(out.Stocks)-1].ceilingAt(domain.MaxStockShards)
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

// meanRU is ru over n, rounded.
func meanRU(ru float64, n int) float64 { return report.Round2(ru / float64(max(n, 1))) }

// measureStock measures one stock split into n shards (1: never split).
func (l *shardLab) measureStock(ctx context.Context, n int) (shardStock, error) {
	st := shardStock{Shards: n}
	if err := l.measureCheckouts(ctx, n, &st); err != nil {
		return st, fmt.Errorf("checkouts: %w", err)
	}
	if err := l.measureFeed(ctx, n, &st); err != nil {
		return st, fmt.Errorf("the inventory feed: %w", err)
	}
	if err := l.measureSoldOut(ctx, n, &st); err != nil {
		return st, fmt.Errorf("sold out: %w", err)
	}
	if err := l.measureChains(ctx, n, &st); err != nil {
		return st, fmt.Errorf("takes, releases and commits: %w", err)
	}
	if err := l.measureGather(ctx, n, &st); err != nil {
		return st, fmt.Errorf("a take gathering its units: %w", err)
	}
	return st, nil
}

// checkoutTally is one kind of measureCheckouts's checkouts: its samples,
// the claim's reads, and Request Units by where they landed.
type checkoutTally struct {
	samples []sample
	want    int
	claim   opsRU
	ru      float64
}

func (t *checkoutTally) full() bool { return len(t.samples) >= t.want }

// measureCheckouts checks out one unit of a product with plenty of units
// (domain.MaxStock, evened over the shards), by new users. Of a split
// stock every other checkout comes after the count's second (the clock
// expired), so its claim reads the count; the others find it cached. Each
// checkout's order starts its take where its id's hash says
// (domain.StartShard): the part sorts them by it, until reps checkouts
// have taken away from the home shard with the count cached and with it
// read, and, of a split stock, reps/n (at least 1) of each on it.
func (l *shardLab) measureCheckouts(ctx context.Context, n int, st *shardStock) error {
	p, err := l.product(ctx, fmt.Sprintf("shard-co-%02d", n), domain.MaxStock, n)
	if err != nil {
		return err
	}
	away, home, count, countHome := &checkoutTally{want: l.reps}, &checkoutTally{}, &checkoutTally{}, &checkoutTally{}
	var take, commit opsRU
	var elsewhere float64
	if n > 1 {
		home.want = max(1, l.reps/n)
		count.want, countHome.want = l.reps, home.want
	}
	for i := 0; !away.full() || !home.full() || !count.full() || !countHome.full(); i++ {
		if i > 100*l.reps*n {
			return fmt.Errorf("%d checkouts, %d/%d away from the home shard and %d/%d on it (count cached/read): the start shards are not spread",
				i, len(away.samples), len(count.samples), len(home.samples), len(countHome.samples))
		}
		miss := n > 1 && i%2 == 1
		if miss {
			l.clock.expire()
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
		var all opsRU
		byPK := map[string]float64{}
		inventoryCalls(calls, "", &all, byPK)
		t := away
		switch {
		case miss && k == 0:
			t = countHome
		case miss:
			t = count
		case k == 0 && n > 1:
			t = home
		}
		if t.full() {
			continue
		}
		t.samples = append(t.samples, smp)
		inventoryCalls(calls, "read", &t.claim, nil)
		switch t {
		case away:
			inventoryCalls(calls, "batch", &take, nil)
			inventoryCalls(calls, "patch", &commit, nil)
			t.ru += byPK[domain.ShardKey(p.ID, k)]
			elsewhere += all.RequestUnits - byPK[domain.ShardKey(p.ID, k)]
		case home:
			t.ru += byPK[p.ID]
			elsewhere += all.RequestUnits - byPK[p.ID]
		case count:
			t.ru += byPK[p.ID]
		}
	}
	st.Checkout = summarize(design{name: "checkout"}, away.samples)
	st.ClaimReads, st.Take, st.Commit = away.claim.mean(len(away.samples)), take.mean(len(away.samples)), commit.mean(len(away.samples))
	st.StartRU = meanRU(away.ru, len(away.samples))
	if n > 1 {
		h := summarize(design{name: "checkout, starting home"}, home.samples)
		c := summarize(design{name: "checkout reading the count"}, count.samples)
		ch := summarize(design{name: "checkout reading the count, starting home"}, countHome.samples)
		st.HomeStart, st.CountRead, st.CountReadHome = &h, &c, &ch
		st.HomeStartRU = meanRU(home.ru, len(home.samples))
		st.ElsewhereRU = meanRU(elsewhere, len(away.samples)+len(home.samples))
		st.CountReadRU = meanRU(count.ru, len(count.samples))
		st.CountClaimReads, st.CountClaimReadsHome = count.claim.mean(len(count.samples)), countHome.claim.mean(len(countHome.samples))
	}
	return nil
}

// measureFeed measures the inventory feed's step, Handlers.Inventory on a
// batch of one change of a shard: of the product of measureCheckouts,
// in stock (a change of shard 1, and of the home document; never split:
// of its one document), and of one with 1 unit on each shard, near sold
// out (a change of shard 1; never split: of its one document).
func (l *shardLab) measureFeed(ctx context.Context, n int, st *shardStock) error {
	id := fmt.Sprintf("shard-co-%02d", n)
	k := min(1, n-1)
	d, pk, err := l.feedStep(ctx, id, k)
	if err != nil {
		return fmt.Errorf("in stock: %w", err)
	}
	st.FeedInStock, st.FeedInStockHomeRU = d, 0
	if n > 1 {
		st.FeedInStockHomeRU = pk[id]
		h, _, err := l.feedStep(ctx, id, 0)
		if err != nil {
			return fmt.Errorf("in stock, the home document: %w", err)
		}
		st.FeedInStockHome = &h
	}
	low, err := l.product(ctx, fmt.Sprintf("shard-low-%02d", n), int64(n), n)
	if err != nil {
		return err
	}
	if st.Feed, pk, err = l.feedStep(ctx, low.ID, k); err != nil {
		return fmt.Errorf("near sold out: %w", err)
	}
	for _, ru := range pk {
		st.FeedShardRU = max(st.FeedShardRU, ru)
	}
	return nil
}

// feedStep runs the inventory feed's handler on a batch of the change of
// shard k of productID's stock (its document as stored, read unmetered),
// reps times after a warm-up: what it cost, and what its last run spent
// by partition of the inventory container.
func (l *shardLab) feedStep(ctx context.Context, productID string, k int) (designResult, map[string]float64, error) {
	var steps []sample
	var byPK map[string]float64
	for i := range l.reps + 1 {
		doc, err := l.s.Container(store.InventoryContainer).Read(ctx, domain.ShardKey(productID, k), domain.StockIDOf(""))
		if err != nil {
			return designResult{}, nil, err
		}
		smp, calls, err := recorded(ctx, func(ctx context.Context) error {
			return l.feed.Inventory(ctx, changefeed.Batch{Items: [][]byte{doc.Item}})
		})
		if err != nil {
			return designResult{}, nil, err
		}
		if i > 0 {
			steps = append(steps, smp)
			byPK = map[string]float64{}
			inventoryCalls(calls, "", nil, byPK)
		}
	}
	return summarize(design{name: "feed"}, steps), byPK, nil
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
			continue // a warm-up (its claim reads the count), or a take starting home
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
			// The feed on the merged stock: a change of its home document
			// in stock, and the sum of every shard it made.
			if out.MergedFeed, _, err = l.feedStep(ctx, p.ID, 0); err != nil {
				return fmt.Errorf("the inventory feed of a merged stock: %w", err)
			}
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
	out.MergedFeedSum = summarize(design{name: "sum of a merged stock"}, feed)
	return nil
}

// measureGather measures, on stocks split into n shards each holding 1
// unit, a take of shardGather units: short on its start shard, and on
// every other, it gathers units from shardGather−1 others into its start
// shard (repo: roomFor) and takes again. A product each, unmetered
// but for the take; none for a stock never split.
func (l *shardLab) measureGather(ctx context.Context, n int, st *shardStock) error {
	if n < shardGather {
		return nil
	}
	var takes []sample
	for i := range l.reps + 1 {
		p, err := l.product(ctx, fmt.Sprintf("shard-ga-%02d-%02d", n, i), int64(n), n)
		if err != nil {
			return err
		}
		res := domain.NewReservation(p.ID, "", l.order(p.ID, n, func(int) bool { return true }), "shard-taker", shardGather, time.Now())
		s, _, err := recorded(ctx, func(ctx context.Context) error { return l.ms.Inventory.Reserve(ctx, res, n) })
		if err != nil {
			return err
		}
		layout, err := l.raw.Inventory.Layout(ctx, p.ID, "")
		if err != nil {
			return err
		}
		if k := domain.StartShard(res.OrderID, p.ID, "", n); layout.Available != int64(n-shardGather) || layout.Units[k] != 0 {
			return fmt.Errorf("%d units on shards %v after a take of %d gathered on shard %d: want %d, none left there", layout.Available, layout.Units, shardGather, k, n-shardGather)
		}
		if i > 0 {
			takes = append(takes, s)
		}
	}
	g := summarize(design{name: "take gathering its units"}, takes)
	st.GatherTake = &g
	return nil
}

// measureStale measures a checkout whose claim counts the shards of a
// stock as they were before a merge (shardSplitTo → shardStaleTo), its
// count cached by a claim just before it, and whose take starts on a
// shard merged away (drained by the merge's rebalance). The lab's clock
// keeps the count cached however long the checkouts take.
func (l *shardLab) measureStale(ctx context.Context, out *shardsResult) error {
	out.StaleFrom, out.StaleTo = shardSplitTo, shardStaleTo
	p, err := l.product(ctx, "shard-stale", 100_000, shardSplitTo)
	if err != nil {
		return err
	}
	l.clock.expire()
	user, err := l.buyer(ctx, p)
	if err != nil {
		return err
	}
	if _, err := l.w.Checkout(ctx, labCheckout(user, user+"-key")); err != nil {
		return err
	}
	if _, err := l.raw.Inventory.SetShards(ctx, p.ID, "", shardStaleTo, l.now); err != nil {
		return err
	}
	var stale []sample
	var stock opsRU
	for i := 0; len(stale) < l.reps; i++ {
		if i > 100*l.reps {
			return fmt.Errorf("%d checkouts, %d starting on a retired shard", i, len(stale))
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
		if got := o.Items[0].StockShards; o.Status != domain.StatusPlaced || got != shardSplitTo {
			return fmt.Errorf("order %s: %s, its line's stock in %d shards; want placed, %d (the count cached before the merge)", o.ID, o.Status, got, shardSplitTo)
		}
		if domain.StartShard(o.ID, p.ID, "", shardSplitTo) < shardStaleTo {
			continue // its take starts on an active shard: an ordinary checkout
		}
		stale = append(stale, smp)
		inventoryCalls(calls, "", &stock, nil)
	}
	out.Stale, out.StaleStock = summarize(design{name: "checkout, count stale"}, stale), stock.mean(len(stale))
	return nil
}

// ceilingAt is the per-partition arithmetic of st's figures for a stock
// of n shards. A claim finds the shard count cached (countTTL per
// instance), so a sale whose take starts on shard k spends StartRU in
// that shard's partition and nothing in any other; one starting on the
// home shard (1 in n) HomeStartRU in the home partition. With the sales
// spread evenly, per sale of the product:
//
//	each shard k ≥ 1: StartRU/n
//	home:             HomeStartRU/n, and shardInstances × CountReadRU a second
//
// each partition serving PartitionRUs. With the feed's step for every
// sale, in stock the home partition pays (n−1)/n × FeedInStockHomeRU
// more per sale (the home read of a change of shard k ≥ 1), the shards'
// nothing; near sold out each partition pays FeedShardRU more per sale.
// A stock never split has one partition, read by every claim.
func (st shardStock) ceilingAt(n int) shardCeiling {
	c := shardCeiling{Shards: n}
	k := float64(n)
	shard, home, fixed := st.StartRU/k, st.HomeStartRU/k, float64(shardInstances)*st.CountReadRU
	feedHome := (k - 1) / k * st.FeedInStockHomeRU
	if n == 1 {
		shard, home, fixed, feedHome = st.StartRU, st.StartRU, 0, 0
	}
	pr := float64(partitionRUs)
	if shard <= 0 || home <= 0 || fixed >= pr {
		return c
	}
	c.ShardCeiling = report.Round2(pr / shard)
	c.HomeCeiling = report.Round2((pr - fixed) / home)
	c.Ceiling = min(c.ShardCeiling, c.HomeCeiling)
	c.WithFeed = report.Round2(min(pr/shard, (pr-fixed)/(home+feedHome)))
	c.WithFeedLow = report.Round2(min(pr/(shard+st.FeedShardRU), (pr-fixed)/(home+st.FeedShardRU)))
	return c
}

// shardsNote says what the part measures.
const shardsNote = "a stock never split and the same stock split into %d and %d shards (domain/shards.go; store/repo: Inventory.SetShards), each with plenty of units evened over its shards; means of %d of each, through the shop's own code on the metered store, whose recorder names each call's partition. A checkout is store/writes.Checkout of a one-line cart of one unit, by a new user: its order's id picks the shard its take starts on (domain.StartShard), so the checkouts are sorted by it, those starting away from the home shard (every one of a stock never split) and those starting on it (1 in N); of a split stock, every other checkout comes after the shard count's second is up, so its claim reads the count from the home document (store/writes: cachedShards), and the others find it cached (the lab's clock runs a hundred times slower than the wall clock between). The claim's reads, the take and the commit are that checkout's calls on the inventory container. The take that moves on starts on a shard emptied for it (its units moved to the next), so it leaves a marker there: the release and the commit of such a take follow a chain of 2; the refused checkout is one of a sold-out stock whose take would start away from the home shard; the feed's step is feedworkers.Handlers.Inventory on a batch of one change of a shard, as the change feed delivers it"

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

// pairText is two figures of a split stock, a / b, or a alone for a
// stock never split (b nil).
func pairText(a string, b *string) string {
	if b == nil {
		return a
	}
	return a + " / " + *b
}

// shardsTables are the part's three tables: each stock's operations,
// the transfers, the split, the merge and a stale count, the
// per-partition arithmetic.
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
	ttl := fmt.Sprintf("%g s", r.CountTTLSeconds)
	row("checkout of one line", fmt.Sprintf("the shard count cached (a claim within %s of its instance's last read of the count), its take starting away from the home shard (never split: every checkout)", ttl), func(st shardStock) string { return designText(&st.Checkout) })
	row("checkout of one line, starting home", "the count cached, its take starting on the home shard (1 in N)", func(st shardStock) string { return designText(st.HomeStart) })
	row("checkout reading the count", "its instance's first, or its first after the count's second: take starting away from the home shard / on it", func(st shardStock) string {
		if st.CountRead == nil {
			return "—"
		}
		home := designText(st.CountReadHome)
		return pairText(designText(st.CountRead), &home)
	})
	row("the claim's stock reads, count cached", "of the checkout (checkStock): the start shard's document alone (never split: its one document, by every claim)", func(st shardStock) string {
		return opsRUText(st.ClaimReads.StoreOps, st.ClaimReads.RequestUnits)
	})
	row("the claim's stock reads, count read", "the home document, then the start shard when it is not the home one (the home read serves a take starting there): take away / at home", func(st shardStock) string {
		if st.CountRead == nil {
			return "—"
		}
		home := opsRUText(st.CountClaimReadsHome.StoreOps, st.CountClaimReadsHome.RequestUnits)
		return pairText(opsRUText(st.CountClaimReads.StoreOps, st.CountClaimReads.RequestUnits), &home)
	})
	row("take", "of the checkout: ONE batch on its start shard (the reservation created, the shard's units −1 under available >= 1)", func(st shardStock) string {
		return opsRUText(st.Take.StoreOps, st.Take.RequestUnits)
	})
	row("commit", "of the checkout: its reservation marked committed (one conditional patch)", func(st shardStock) string {
		return opsRUText(st.Commit.StoreOps, st.Commit.RequestUnits)
	})
	row("take moving on", "short on its start shard: the failed batch, every shard read, the marker, the batch on the shard with the most units", func(st shardStock) string { return designText(st.MovedTake) })
	row("take gathering its units", fmt.Sprintf("a line of %d units, 1 unit on each shard: the failed batch, every shard read, %d transfers into its start shard (3 batches each), the batch again", shardGather, shardGather-1), func(st shardStock) string { return designText(st.GatherTake) })
	row("take refused", "no shard has a unit: the failed batch, every shard read (a race lost after the claim; the checkout then reads every shard again for its answer)", func(st shardStock) string { return designText(&st.ShortTake) })
	row("refusal at the claim", "a checkout of a sold-out stock, refused before anything is written", func(st shardStock) string { return designText(&st.Refusal) })
	row("its stock reads", "the start shard (the count cached), then every shard (what a line can be served: servable)", func(st shardStock) string {
		return opsRUText(st.RefusalReads.StoreOps, st.RefusalReads.RequestUnits)
	})
	row("release, chain of 1", "the reservation read on its start shard, one batch (released, units +1)", func(st shardStock) string { return designText(&st.Release) })
	row("release, chain of 2", "the marker read, the reservation read on the next shard, one batch", func(st shardStock) string { return designText(st.Release2) })
	row("commit, chain of 1", "one conditional patch (held → committed)", func(st shardStock) string { return designText(&st.Commit1) })
	row("commit, chain of 2", "the patch refused by the marker, the marker read, the patch on the next shard", func(st shardStock) string { return designText(st.Commit2) })
	row("inventory feed, per change, in stock", fmt.Sprintf("a change of shard 1 (never split: of its one document) holding more than %d units, the product showing in stock (feedworkers: inStockAlready): the home document read, to know the shard active, and the product read; no other shard read, no write (never split: the product read alone)", domain.LowStock), func(st shardStock) string { return designText(&st.FeedInStock) })
	row("inventory feed, per change of the home shard, in stock", "the product read alone", func(st shardStock) string { return designText(st.FeedInStockHome) })
	row("inventory feed, per change, near sold out", fmt.Sprintf("a change of a shard holding %d units or fewer: every shard read, the product read (InventoryToProducts; its availability copy unchanged: no write)", domain.LowStock), func(st shardStock) string { return designText(&st.Feed) })

	moves := shardsTable{header: []string{"operation", "what it is", "store ops", "RU"}, align: "|---|---|--:|--:|"}
	for _, d := range []struct {
		name, what string
		ops, ru    float64
	}{
		{"transfer", "Inventory.Move of 1 unit between 2 shards: the sender's batch (the transfer written, the units −1 and in flight), the receipt's batch (units +1), the close (the transfer done, no longer in flight)", r.Move.StoreOps, r.Move.RequestUnits},
		{r.Split.Design, fmt.Sprintf("Inventory.SetShards of a stock of %d units never split: the home read, %d shard documents created, the count on the home document (read, replace), then the rebalance: every shard read, %d transfers, every shard read again", r.SplitUnits, shardSplitTo-1, shardSplitTo-1), r.Split.StoreOps, r.Split.RequestUnits},
		{r.Merge.Design, fmt.Sprintf("the same stock back into 1: the home read, the count (read, replace), every shard read, %d transfers home, every shard read again", shardSplitTo-1), r.Merge.StoreOps, r.Merge.RequestUnits},
		{"inventory feed of the merged stock, in stock", fmt.Sprintf("per change of its home document holding more than %d units: the product read (its retired shards unread)", domain.LowStock), r.MergedFeed.StoreOps, r.MergedFeed.RequestUnits},
		{"inventory feed of the merged stock, near sold out", fmt.Sprintf("per change of its home document holding %d units or fewer, or of a retired shard: its %d shards still read (shards are never deleted, and the feed drains the retired ones), the product read", domain.LowStock, shardSplitTo), r.MergedFeedSum.StoreOps, r.MergedFeedSum.RequestUnits},
		{"checkout, the count stale", fmt.Sprintf("within the count's second after a merge %d → %d, its claim still counting %d shards, its take starting on one merged away (drained): the claim reads it, then every shard (servable); the take's failed batch there, every shard read, the marker, the batch on an active shard; the commit refused by the marker, the marker read, the patch there", r.StaleFrom, r.StaleTo, r.StaleFrom), r.Stale.StoreOps, r.Stale.RequestUnits},
		{"its stock calls", "the claim's, the take's and the commit's, on the inventory container", r.StaleStock.StoreOps, r.StaleStock.RequestUnits},
	} {
		moves.rows = append(moves.rows, []string{d.name, d.what, fmt.Sprintf("%.4g", d.ops), fmt.Sprintf("%.2f", d.ru)})
	}

	parts := shardsTable{header: []string{"shards", "RU per sale in its start shard's partition, count cached: take elsewhere / at home", "the count's read, in the home partition",
		"sales/s one shard's partition serves", "the shards' partitions serve", fmt.Sprintf("the home partition serves, %d instances reading the count", r.Instances), "the product's ceiling",
		"with the feed's step on every sale: in stock / near sold out"},
		align: "|--:|--:|--:|--:|--:|--:|--:|--:|"}
	for _, st := range r.Stocks {
		start, count := fmt.Sprintf("%.2f / %.2f", st.StartRU, st.HomeStartRU), fmt.Sprintf("%.2f", st.CountReadRU)
		if st.Shards == 1 {
			start, count = fmt.Sprintf("%.2f", st.StartRU), "— (every claim reads its one document)"
		}
		c := st.Ceiling
		parts.rows = append(parts.rows, []string{fmt.Sprint(st.Shards), start, count, fmt.Sprintf("%.0f", float64(r.PartitionRUs)/st.StartRU),
			fmt.Sprintf("%.0f", c.ShardCeiling), fmt.Sprintf("%.0f", c.HomeCeiling), fmt.Sprintf("**%.0f**", c.Ceiling), fmt.Sprintf("%.0f / %.0f", c.WithFeed, c.WithFeedLow)})
	}
	if last := r.Stocks[len(r.Stocks)-1]; r.AtMost.Shards > 0 {
		c := r.AtMost
		parts.rows = append(parts.rows, []string{fmt.Sprintf("%d (the %d-shard figures, worked out)", c.Shards, last.Shards), "", "", "",
			fmt.Sprintf("%.0f", c.ShardCeiling), fmt.Sprintf("%.0f", c.HomeCeiling), fmt.Sprintf("**%.0f**", c.Ceiling), fmt.Sprintf("%.0f / %.0f", c.WithFeed, c.WithFeedLow)})
	}
	return []shardsTable{ops, moves, parts}
}

// shardsArithmetic says how the last table is worked out, and what its
// figures say.
func shardsArithmetic(r shardsResult, inv inventoryResult) string {
	last := r.Stocks[len(r.Stocks)-1]
	pr := r.PartitionRUs
	ttl := fmt.Sprintf("%g s", r.CountTTLSeconds)
	var countRead, countHome string
	if last.CountRead != nil {
		countRead, countHome = opsRUText(last.CountClaimReads.StoreOps, last.CountClaimReads.RequestUnits), opsRUText(last.CountClaimReadsHome.StoreOps, last.CountClaimReadsHome.RequestUnits)
	}
	fixed := float64(r.Instances) * last.CountReadRU
	t := fmt.Sprintf("one physical partition serves at most %d RU/s; each shard is a logical partition of its own, and the arithmetic takes each on a physical partition of its own (shards sharing one share its %d RU/s). "+
		"A claim takes a split stock's count of shards from its home document and keeps it %s per instance (store/writes: cachedShards): the instance's first checkout of the product, and its first once that second is up, read the home document and the start shard (their stock reads: %s at %d shards; the home document alone, %s, when the take starts there), the following ones the start shard alone (%s). "+
		"So a sale whose claim finds the count cached spends in the partition of the shard its take starts on the claim's read of it, the take and the commit, %.2f RU at %d shards (%.2f when that is the home shard, 1 sale in N), and %.2f RU in any other. "+
		"With the sales spread evenly, per sale of the product each shard's partition pays its start-shard RU ÷ N, and the home partition its own ÷ N and, with the instances rather than the sales, the count's reads: about one a second per instance, %.2f RU each (%d instances: %.0f of its %d RU/s). "+
		"So the home partition binds only by the count's reads, and the ceiling grows with N: %d shards %.0f checkouts a second (the shards' partitions %.0f), %d %.0f",
		pr, pr, ttl, countRead, last.Shards, countHome, opsRUText(last.ClaimReads.StoreOps, last.ClaimReads.RequestUnits),
		last.StartRU, last.Shards, last.HomeStartRU, last.ElsewhereRU,
		last.CountReadRU, r.Instances, fixed, pr,
		last.Shards, last.Ceiling.Ceiling, last.Ceiling.ShardCeiling, r.AtMost.Shards, r.AtMost.Ceiling)
	if r.StaleFrom > r.StaleTo && r.Stale.StoreOps > 0 {
		t += fmt.Sprintf(". A count is trusted for up to %s, so a claim within it after a merge still counts the old shards, and a take started on a shard merged away finds it drained and moves on: within the second after a merge %d → %d, such a checkout (%d in %d while the count is stale) costs %s, its stock calls %s (the claim reads the drained shard, then every shard; the take fails there, reads every shard, leaves a marker and takes on an active shard; the commit follows the marker), against %s with the count fresh. A count stale after a split leaves the new shards to other buyers until it is read again, at no cost",
			ttl, r.StaleFrom, r.StaleTo, r.StaleFrom-r.StaleTo, r.StaleFrom, designText(&r.Stale), opsRUText(r.StaleStock.StoreOps, r.StaleStock.RequestUnits), designText(&last.Checkout))
	}
	if one := r.Stocks[0]; inv.CeilingPerSecond > 0 && one.Shards == 1 && one.Commit.RequestUnits > 0 {
		t += fmt.Sprintf(". The inventory section's ceiling of one product, %.0f sales/s, counts the claim's read and the take; the placed order's commit of its reservation (%.2f RU) lands in the same partition, so a sale of a stock never split spends %.2f RU there: %.0f sales/s",
			inv.CeilingPerSecond, one.Commit.RequestUnits, one.StartRU, one.Ceiling.Ceiling)
	}
	return t + fmt.Sprintf(". The last column adds the inventory feed's step for every sale, as when each change is a feed pass of its own. In stock (the changed shard holds more than %d units and the product shows in stock: feedworkers' inStockAlready), a change costs the product's read (in the products container) and, of a shard k ≥ 1, the home document's read, to know the shard active: %.2f RU in the home partition and nothing in the shards', so the home partition pays (N−1) ÷ N of that per sale on top of its share, and binds (%d shards: %.0f; %d: %.0f; a stock never split reads no stock at all). "+
		"Near sold out (a shard with %d units or fewer, or a retired one), the step reads every shard, %.2f RU in each partition per sale (%d shards: %.0f). A pass that finds many changes of the stock reads the home document, or the shards, once for them all, so under load the feed costs less",
		domain.LowStock, last.FeedInStockHomeRU, last.Shards, last.Ceiling.WithFeed, r.AtMost.Shards, r.AtMost.WithFeed,
		domain.LowStock, last.FeedShardRU, last.Shards, last.Ceiling.WithFeedLow)
}

// writeShardsMarkdown prints the part's tables.
func writeShardsMarkdown(out io.Writer, r costReport) {
	s := r.Shards
	fmt.Fprintf(out, "\n### Split stock: what the shards cost and save\n\n%s.\n", upperFirst(fmt.Sprintf(shardsNote, shardCounts[1], shardCounts[2], shardRepsOf(r))))
	titles := []string{"", "Transfers, the split, the merge and a stale count:", "Per partition, checkouts of one line a second of one product:"}
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
	fmt.Fprintln(out, "| shards | a checkout of one line: count cached / count read | a refusal of a sold-out stock | the feed's step per change: in stock / near sold out | the home partition serves | the product's ceiling, checkouts/s | with the feed's step on every sale: in stock / near sold out |")
	fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|--:|")
	for _, st := range s.Stocks {
		checkout := designText(&st.Checkout)
		if st.CountRead != nil {
			checkout += " / " + designText(st.CountRead)
		}
		fmt.Fprintf(out, "| %d | %s | %s | %s / %s | %.0f | **%.0f** | %.0f / %.0f |\n", st.Shards, checkout, designText(&st.Refusal), designText(&st.FeedInStock), designText(&st.Feed),
			st.Ceiling.HomeCeiling, st.Ceiling.Ceiling, st.Ceiling.WithFeed, st.Ceiling.WithFeedLow)
	}
	if c := s.AtMost; c.Shards > 0 {
		fmt.Fprintf(out, "| %d (worked out) | | | | %.0f | **%.0f** | %.0f / %.0f |\n", c.Shards, c.HomeCeiling, c.Ceiling, c.WithFeed, c.WithFeedLow)
	}
	last := s.Stocks[len(s.Stocks)-1]
	fmt.Fprintf(out, "\nOne physical partition serves at most %d RU/s. A sale spends %.2f RU in its start shard's partition (the claim's read of it, the take, the commit): %.0f sales/s of one shard, and nothing in any other. The claim keeps the count of shards %g s per instance (store/writes), so the home partition pays for its 1 sale in N and the count's read, %.2f RU, about once a second per instance (%d instances: %.0f RU/s), and the ceiling grows with the shards: at %d, %.0f checkouts/s; worked out at %d, %.0f.",
		s.PartitionRUs, last.StartRU, float64(s.PartitionRUs)/last.StartRU, s.CountTTLSeconds, last.CountReadRU, s.Instances, float64(s.Instances)*last.CountReadRU,
		last.Shards, last.Ceiling.Ceiling, s.AtMost.Shards, s.AtMost.Ceiling)
	if s.Stale.StoreOps > 0 {
		fmt.Fprintf(out, " Within that second after a merge %d → %d, a checkout whose take starts on a shard merged away finds it drained and moves on: %s, against %s.", s.StaleFrom, s.StaleTo, designText(&s.Stale), designText(&last.Checkout))
	}
	fmt.Fprintf(out, " In stock, the feed's step on a change of a shard k ≥ 1 reads the home document (and the product), no shard: with each change a pass of its own, the home partition then serves %.0f checkouts/s at %d shards; near sold out it reads every shard (%.0f).\n",
		last.Ceiling.WithFeed, last.Shards, last.Ceiling.WithFeedLow)
}
