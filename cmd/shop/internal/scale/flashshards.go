package scale

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// FlashOptions are the load of `shop scale --flash-shards`: for each
// number of Shards, one product's checkouts at each of Rates per second
// for Duration, against `shop serve` in a process of its own whose
// inventory container alone is provisioned PartitionRU RU/s per each of
// its Partitions physical partitions (SHOP_THROUGHPUT_INVENTORY; every
// other container unlimited); then, when SelloutUnits > 0, a sell-out of
// that many units at SelloutRate.
type FlashOptions struct {
	Shards       []int         `json:"shards"`
	Rates        []int         `json:"checkoutsPerSecond"`
	Duration     time.Duration `json:"-"`
	Partitions   int           `json:"partitions"`
	PartitionRU  int           `json:"partitionRUs"`
	SelloutUnits int           `json:"selloutUnits"`
	SelloutRate  int           `json:"selloutCheckoutsPerSecond"`
	// PreallocUnits are the unit documents of the comparison with
	// preallocated units (0: no comparison).
	PreallocUnits int `json:"preallocUnits"`
	// Binary is the shop binary started as the child (this program when
	// empty).
	Binary string `json:"-"`
}

// Bounds of the options, so that one run stays within minutes.
const (
	maxFlashPoints      = 20
	maxFlashRate        = 1000
	maxFlashDuration    = 30 * time.Second
	maxFlashShards      = 64
	maxFlashSelloutUnit = 5000
	maxPreallocUnits    = 10000
)

// The defaults of --duration and --partitions with --flash-shards: 16
// partitions, so that 16 shards can land on 16; 8 s a point, so that
// the whole run (15 points and 3 sell-outs) stays within minutes.
const (
	flashDuration   = 8 * time.Second
	flashPartitions = 16
)

// flashProduct is the product of every point: one id, so that the
// shards' keys, and where they land, are the same at every rate.
const flashProduct = "flash-sale"

// flashUnits is a rate point's stock: more than any point sells, so that
// a refusal there is never a sell-out.
const flashUnits = domain.MaxStock

// parseInts reads a comma-separated list of whole numbers from lo to hi.
func parseInts(name, list string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%s: want numbers from %d to %d, got %q", name, lo, hi, f)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// check refuses options out of bounds.
func (o FlashOptions) check() error {
	switch {
	case len(o.Shards) == 0 || len(o.Rates) == 0:
		return errors.New("shards, rates: want at least one of each")
	case len(o.Shards)*len(o.Rates) > maxFlashPoints:
		return fmt.Errorf("shards × rates: at most %d points, got %d", maxFlashPoints, len(o.Shards)*len(o.Rates))
	case o.Duration < time.Second || o.Duration > maxFlashDuration:
		return fmt.Errorf("duration: want 1s to %s", maxFlashDuration)
	case o.Partitions < 1 || o.Partitions > 64:
		return errors.New("partitions: want 1 to 64")
	case o.PartitionRU < 10 || o.PartitionRU > 10000:
		return errors.New("partition-ru: want 10 to 10000 RU/s (a physical partition of Cosmos serves 10,000 at most)")
	case o.SelloutUnits < 0 || o.SelloutUnits > maxFlashSelloutUnit:
		return fmt.Errorf("sellout-units: want 0 (none) to %d", maxFlashSelloutUnit)
	case o.SelloutRate < 1 || o.SelloutRate > maxFlashRate:
		return fmt.Errorf("sellout-rate: want 1 to %d checkouts per second", maxFlashRate)
	case o.PreallocUnits != 0 && (o.PreallocUnits < preallocGroups || o.PreallocUnits > maxPreallocUnits):
		return fmt.Errorf("prealloc-units: want 0 (no comparison) or %d to %d", preallocGroups, maxPreallocUnits)
	}
	return nil
}

// FlashPoint is one load: N shards, checkouts at a constant rate.
type FlashPoint struct {
	Shards int `json:"shards"`
	// Sellout is the sell-out point: Units units, half as many buyers
	// again as units.
	Sellout bool  `json:"sellout"`
	Units   int64 `json:"units"`
	// ShardsMade is what the split answered (the shards it created).
	ShardsMade int `json:"shardsMade"`
	Offered    int `json:"offeredPerSecond"`
	Sent       int `json:"sent"`
	// Seconds is the load's length, from the first checkout sent to the
	// last answer.
	Seconds float64 `json:"seconds"`
	Sales   int     `json:"sales"`
	// SalesPerSecond is the sales over the offered window (Sent ÷
	// Offered seconds), comparable with Offered.
	SalesPerSecond float64 `json:"salesPerSecond"`
	// Unavailable are the 503s, each with Retry-After; Throttled those
	// of them whose problem says the store throttled (429).
	Unavailable int `json:"unavailable"`
	Throttled   int `json:"throttled503"`
	// OutOfStock are the 409 out-of-stock answers; FalseRefusals those
	// of them given while units remained (the layout read after the load
	// still holds units: no unit comes back during a load, so a unit left
	// at its end was there at every refusal).
	OutOfStock    int            `json:"outOfStock"`
	FalseRefusals int            `json:"falseRefusals"`
	Other         int            `json:"other"`
	OtherCodes    map[string]int `json:"otherCodes,omitempty"`
	P50Ms         float64        `json:"p50Ms"`
	P99Ms         float64        `json:"p99Ms"`
	P99SalesMs    float64        `json:"p99SalesMs"`
	// InventoryRU is what the inventory container spent during the load,
	// less what it spends idle (the feed workers' polls); RUPerSale that
	// over the sales. CheckoutRU is a sale's whole request
	// (X-Request-Charge, every container).
	InventoryRU float64 `json:"inventoryRU"`
	RUPerSale   float64 `json:"ruPerSale"`
	// HomeRUPerSale is the part of RUPerSale spent on the home
	// document's partition: the read of the home document every
	// checkout makes, and the shards that partition holds.
	HomeRUPerSale float64 `json:"homeRUPerSale"`
	// HomeTakeShare is the part of the sales whose take started on a
	// shard in the home document's partition (domain.StartShard of each
	// sold order's id).
	HomeTakeShare float64 `json:"homeTakeShare"`
	CheckoutRU    float64 `json:"checkoutRU"`
	// HottestRUs is the RU/s of the inventory partition that spent the
	// most during the load, Budget its share of the provisioned RU/s,
	// HottestShare its part of the inventory's RU.
	HottestRUs   float64 `json:"hottestRuPerSecond"`
	Budget       float64 `json:"partitionBudget"`
	HottestShare float64 `json:"hottestShare"`
	// ThrottledCalls are the inventory calls the store refused (429).
	ThrottledCalls int64 `json:"throttledCalls"`
	// PartitionsLoaded is how many physical partitions of inventory took
	// the load: each spent at least a quarter of one shard's share (the
	// placement, measured; FlashReport.Placements has it exactly).
	PartitionsLoaded int `json:"partitionsLoaded"`
	// AvailableAfter and UnitsAfter are the layout read after the load.
	AvailableAfter int64   `json:"availableAfter"`
	UnitsAfter     []int64 `json:"unitsAfter"`
}

// Limit names what held the sales below the offered rate: "" when they
// followed it (90% or more), "throttle" when the store refused calls,
// "machine" when it did not and the hottest partition had budget left
// (the two cores, not the throttle), "stock" for a sell-out.
func (p FlashPoint) Limit() string {
	switch {
	case p.Sellout:
		return "stock"
	case p.SalesPerSecond >= 0.9*float64(p.Offered):
		return ""
	case p.ThrottledCalls > 0 && (p.Throttled > 0 || p.HottestRUs >= 0.8*p.Budget):
		return "throttle"
	}
	return "machine"
}

// FlashReport is what `shop scale --flash-shards` prints (--json).
type FlashReport struct {
	Machine  report.Machine `json:"machine"`
	Command  string         `json:"command"`
	Options  FlashOptions   `json:"options"`
	Duration string         `json:"duration"`
	// Placements are where each number of shards' keys land.
	Placements []Placement  `json:"placements"`
	Points     []FlashPoint `json:"points"`
	Prealloc   Prealloc     `json:"preallocation"`
	// Elapsed is how long the whole run took.
	Elapsed string `json:"elapsed"`
}

// runFlashShards runs every point, then the preallocation lab, and
// reports.
func runFlashShards(ctx context.Context, o FlashOptions, command string, out report.Output, stdout, progress io.Writer) error {
	start := time.Now()
	rep := FlashReport{Machine: report.ThisMachine(), Command: command, Options: o, Duration: o.Duration.String()}
	if o.Binary == "" {
		bin, err := os.Executable()
		if err != nil {
			return err
		}
		o.Binary = bin
	}
	for _, n := range o.Shards {
		pl, err := placeShards(ctx, o.Partitions, flashProduct, n)
		if err != nil {
			return fmt.Errorf("placing %d shards: %w", n, err)
		}
		rep.Placements = append(rep.Placements, pl)
		for _, rate := range o.Rates {
			p, err := flashRound(ctx, o, n, rate, int(float64(rate)*o.Duration.Seconds()), flashUnits, false, pl)
			if err != nil {
				return fmt.Errorf("%d shards at %d/s: %w", n, rate, err)
			}
			fmt.Fprintf(progress, "flash shards: %s\n", p.line())
			rep.Points = append(rep.Points, p)
		}
		if o.SelloutUnits > 0 {
			buyers := o.SelloutUnits * 3 / 2
			p, err := flashRound(ctx, o, n, o.SelloutRate, buyers, int64(o.SelloutUnits), true, pl)
			if err != nil {
				return fmt.Errorf("%d shards, sell-out: %w", n, err)
			}
			fmt.Fprintf(progress, "flash shards: %s\n", p.line())
			rep.Points = append(rep.Points, p)
		}
	}
	if o.PreallocUnits > 0 {
		var err error
		if rep.Prealloc, err = measurePrealloc(ctx, o.Partitions, o.PreallocUnits); err != nil {
			return fmt.Errorf("preallocation: %w", err)
		}
	}
	rep.Elapsed = time.Since(start).Round(time.Second).String()
	return report.Write(stdout, rep, out, "scale flash shards",
		func(w io.Writer) { writeFlashMarkdown(w, rep) }, func(w io.Writer) { writeFlashMarkdown(w, rep) })
}

// line is a point in one line, for the progress on standard error.
func (p FlashPoint) line() string {
	kind := fmt.Sprintf("%d/s offered", p.Offered)
	if p.Sellout {
		kind = fmt.Sprintf("sell-out of %d units at %d/s", p.Units, p.Offered)
	}
	return fmt.Sprintf("%d shards, %s: %d sent, %.1f sales/s, %d 503, %d out of stock (%d false), %d other, p99 %.0f ms, %.2f RU per sale, hottest partition %.0f of %.0f RU/s (%.0f%% of the inventory's RU), %d partitions loaded",
		p.Shards, kind, p.Sent, p.SalesPerSecond, p.Unavailable, p.OutOfStock, p.FalseRefusals, p.Other, p.P99Ms, p.RUPerSale, p.HottestRUs, p.Budget, p.HottestShare*100, p.PartitionsLoaded)
}

// shardLayout is the body of GET and PUT
// /v1/admin/products/{id}/stock/shards.
type shardLayout struct {
	ProductID  string  `json:"productId"`
	SKU        string  `json:"sku"`
	Shards     int     `json:"shards"`
	ShardsMade int     `json:"shardsMade"`
	Available  int64   `json:"available"`
	Units      []int64 `json:"units"`
}

// flashRound starts a shop of its own over a fresh data directory, makes
// one product of units units split into n shards, prepares one buyer per
// checkout (one unit in the cart), and sends the checkouts at rate per
// second: an open load, each checkout sent at its time whatever the
// answers before it.
//
// pl is where the product's shards land.
func flashRound(ctx context.Context, o FlashOptions, n, rate, buyers int, units int64, sellout bool, pl Placement) (FlashPoint, error) {
	p := FlashPoint{Shards: n, Sellout: sellout, Units: units, Offered: rate, Sent: buyers}
	dir, err := os.MkdirTemp("", "shop-flash-")
	if err != nil {
		return p, err
	}
	defer os.RemoveAll(dir)
	secret := make([]byte, 24)
	_, _ = rand.Read(secret)
	shop, err := startFlashShop(ctx, o.Binary, dir, []byte(hex.EncodeToString(secret)), map[string]string{
		"SHOP_PARTITIONS":           strconv.Itoa(o.Partitions),
		"SHOP_THROUGHPUT":           "0",
		"SHOP_THROUGHPUT_INVENTORY": strconv.Itoa(o.PartitionRU * o.Partitions),
		"SHOP_CACHE":                "false",
		"SHOP_RATE_USER":            "0",
		"SHOP_RATE_ANON":            "0",
		// One client address opens every connection: no bound, so that
		// a refused connection (a 503 too) is never counted as a throttle.
		"SHOP_MAX_CONNS_PER_ADDR": "0",
	})
	if err != nil {
		return p, err
	}
	defer shop.stop()

	admin := shop.token("flash-admin", true)
	product := flashProduct
	if err := shop.must(ctx, http.MethodPut, "/v1/categories/flash", admin, map[string]string{"name": "Flash sale"}, nil, http.StatusCreated, http.StatusOK); err != nil {
		return p, err
	}
	if err := shop.must(ctx, http.MethodPost, "/v1/products", admin, map[string]any{
		"productId": product, "name": "Flash sale " + product, "priceCents": 1999, "categoryId": "flash", "stock": units,
	}, nil, http.StatusCreated); err != nil {
		return p, err
	}
	shardsPath := "/v1/admin/products/" + product + "/stock/shards"
	var layout shardLayout
	if err := shop.must(ctx, http.MethodPut, shardsPath, admin, map[string]int{"shards": n}, &layout, http.StatusOK); err != nil {
		return p, fmt.Errorf("splitting the stock: %w", err)
	}
	if layout.Shards != n || layout.Available != units {
		return p, fmt.Errorf("the split answered %d shards and %d units, want %d and %d", layout.Shards, layout.Available, n, units)
	}
	p.ShardsMade = layout.ShardsMade

	tokens := make([]string, buyers)
	stamp := time.Now().UnixNano()
	if err := inParallel(ctx, buyers, 16, func(i int) error {
		tokens[i] = shop.token(fmt.Sprintf("flash-%d-%05d", stamp, i), false)
		return shop.must(ctx, http.MethodPut, "/v1/cart/items/"+product, tokens[i], map[string]int{"quantity": 1}, nil, http.StatusOK)
	}); err != nil {
		return p, fmt.Errorf("carts: %w", err)
	}

	// The budgets refill and the preparation's feed work drains; then
	// one idle second gives what inventory spends doing nothing.
	if err := sleepCtx(ctx, 1500*time.Millisecond); err != nil {
		return p, err
	}
	s0, err := shop.inventoryThroughput(ctx, admin)
	if err != nil {
		return p, err
	}
	if err := sleepCtx(ctx, time.Second); err != nil {
		return p, err
	}
	s1, err := shop.inventoryThroughput(ctx, admin)
	if err != nil {
		return p, err
	}

	answers := make([]shopAnswer, buyers)
	var wg sync.WaitGroup
	body := []byte(checkoutBody)
	start := time.Now()
	for i := range buyers {
		if err := sleepCtx(ctx, time.Until(start.Add(time.Duration(float64(i)/float64(rate)*float64(time.Second))))); err != nil {
			wg.Wait()
			return p, err
		}
		wg.Go(func() {
			answers[i] = shop.send(ctx, http.MethodPost, "/v1/checkout", tokens[i], body,
				map[string]string{"Idempotency-Key": fmt.Sprintf("flash-%d-%05d", stamp, i)})
		})
	}
	wg.Wait()
	s2, err := shop.inventoryThroughput(ctx, admin)
	if err != nil {
		return p, err
	}
	if err := shop.alive(); err != nil {
		return p, err
	}
	// A sale's last inventory write (the orders feed's pass) may follow
	// its answer: the layout is read a moment later.
	if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
		return p, err
	}
	var after shardLayout
	if err := shop.must(ctx, http.MethodGet, shardsPath, admin, nil, &after, http.StatusOK); err != nil {
		return p, err
	}
	p.AvailableAfter, p.UnitsAfter = after.Available, after.Units
	p.tally(answers, float64(buyers)/float64(rate))
	p.HomeTakeShare = homeTakeShare(answers, pl)
	p.Seconds = report.Round2(s2.at.Sub(s1.at).Seconds())
	p.spend(s0, s1, s2, pl.Partition[0])
	return p, nil
}

// tally counts the answers of a load whose offered window was window
// seconds.
func (p *FlashPoint) tally(answers []shopAnswer, window float64) {
	var all, sales []time.Duration
	var charge float64
	for _, a := range answers {
		all = append(all, a.latency)
		switch {
		case a.err != nil:
			p.Other++
			p.otherCode("no answer")
		case a.code == http.StatusCreated:
			p.Sales++
			sales = append(sales, a.latency)
			charge += a.charge
		case a.code == http.StatusServiceUnavailable:
			p.Unavailable++
			if isThrottled(a.body) {
				p.Throttled++
			}
		case a.code == http.StatusConflict && isOutOfStock(a.body):
			p.OutOfStock++
		default:
			p.Other++
			p.otherCode(strconv.Itoa(a.code))
		}
	}
	if p.AvailableAfter > 0 {
		p.FalseRefusals = p.OutOfStock
	}
	if window > 0 {
		p.SalesPerSecond = report.Round2(float64(p.Sales) / window)
	}
	if p.Sales > 0 {
		p.CheckoutRU = report.Round2(charge / float64(p.Sales))
	}
	p.P50Ms, p.P99Ms, p.P99SalesMs = quantileMs(all, 0.5), quantileMs(all, 0.99), quantileMs(sales, 0.99)
}

func (p *FlashPoint) otherCode(code string) {
	if p.OtherCodes == nil {
		p.OtherCodes = map[string]int{}
	}
	p.OtherCodes[code]++
}

// quantileMs is the q quantile of ds in milliseconds (0 for none).
func quantileMs(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return report.Round2(float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000)
}

// homeTakeShare is the part of the sales (the 201s) whose take started
// on a shard in the same partition as the home document.
func homeTakeShare(answers []shopAnswer, pl Placement) float64 {
	var sales, home int
	for _, a := range answers {
		var o struct {
			ID string `json:"id"`
		}
		if a.err != nil || a.code != http.StatusCreated || json.Unmarshal(a.body, &o) != nil || o.ID == "" {
			continue
		}
		sales++
		if k := domain.StartShard(o.ID, flashProduct, "", pl.Shards); k < len(pl.Partition) && pl.Partition[k] == pl.Partition[0] {
			home++
		}
	}
	if sales == 0 {
		return 0
	}
	return float64(home) / float64(sales)
}

// isOutOfStock reports whether a 409's problem is the out-of-stock one.
func isOutOfStock(body []byte) bool {
	var pr struct{ Type string }
	return json.Unmarshal(body, &pr) == nil && strings.HasSuffix(pr.Type, "/problems/"+strings.ReplaceAll(domain.EOUTOFSTOCK, "_", "-"))
}

// isThrottled reports whether a 503's problem says the store throttled
// the request (the embedded store's 429), not that it timed out.
func isThrottled(body []byte) bool {
	var pr struct{ Detail string }
	return json.Unmarshal(body, &pr) == nil && strings.Contains(pr.Detail, "throttl")
}

// inventorySnapshot is the inventory's partitions from GET
// /v1/admin/throughput at one moment: running totals.
type inventorySnapshot struct {
	at         time.Time
	partitions map[string]partitionTotals
}

type partitionTotals struct {
	Partition     string  `json:"partition"`
	Provisioned   float64 `json:"provisioned"`
	RequestCharge float64 `json:"requestCharge"`
	Throttled     int64   `json:"throttled"`
}

// containerTotals is one container of GET /v1/admin/throughput.
type containerTotals struct {
	Container  string            `json:"container"`
	Partitions []partitionTotals `json:"partitions"`
}

func (s *flashShop) inventoryThroughput(ctx context.Context, admin string) (inventorySnapshot, error) {
	var v struct {
		Containers []containerTotals `json:"containers"`
	}
	if err := s.must(ctx, http.MethodGet, "/v1/admin/throughput", admin, nil, &v, http.StatusOK); err != nil {
		return inventorySnapshot{}, err
	}
	return inventorySnapshotOf(time.Now(), v.Containers)
}

// inventorySnapshotOf keeps the partitions of inventory.
func inventorySnapshotOf(at time.Time, cs []containerTotals) (inventorySnapshot, error) {
	snap := inventorySnapshot{at: at, partitions: map[string]partitionTotals{}}
	for _, c := range cs {
		if c.Container != store.InventoryContainer {
			continue
		}
		for _, pt := range c.Partitions {
			snap.partitions[pt.Partition] = pt
		}
	}
	if len(snap.partitions) == 0 {
		return snap, errors.New("the shop reports no partition of inventory")
	}
	return snap, nil
}

// spend reads what inventory spent during the load (s1 to s2), less the
// idle spend of each partition measured from s0 to s1; home is the
// partition of the product's home document.
func (p *FlashPoint) spend(s0, s1, s2 inventorySnapshot, home string) {
	idleSeconds, loadSeconds := s1.at.Sub(s0.at).Seconds(), s2.at.Sub(s1.at).Seconds()
	load := map[string]float64{}
	var hottest float64
	for name, a := range s2.partitions {
		b := s1.partitions[name]
		spent := a.RequestCharge - b.RequestCharge
		if idleSeconds > 0 {
			spent -= (b.RequestCharge - s0.partitions[name].RequestCharge) / idleSeconds * loadSeconds
		}
		load[name] = max(spent, 0)
		p.InventoryRU += load[name]
		p.ThrottledCalls += a.Throttled - b.Throttled
		p.Budget = max(p.Budget, a.Provisioned)
		if loadSeconds > 0 {
			hottest = max(hottest, (a.RequestCharge-b.RequestCharge)/loadSeconds)
		}
	}
	p.HottestRUs = report.Round2(hottest)
	p.InventoryRU = report.Round2(p.InventoryRU)
	if p.Sales > 0 {
		p.RUPerSale = report.Round2(p.InventoryRU / float64(p.Sales))
		p.HomeRUPerSale = report.Round2(load[home] / float64(p.Sales))
	}
	if p.InventoryRU <= 0 {
		return
	}
	var most float64
	for _, ru := range load {
		most = max(most, ru)
		if ru >= 0.25*p.InventoryRU/float64(p.Shards) {
			p.PartitionsLoaded++
		}
	}
	p.HottestShare = report.Round2(most / p.InventoryRU)
}

// inParallel runs fn(0..n-1) on workers goroutines, stopping at the
// first error.
func inParallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// sleepCtx sleeps d, or less when ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
