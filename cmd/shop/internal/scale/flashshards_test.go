package scale

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
)

func TestParseInts(t *testing.T) {
	got, err := parseInts("rates", " 50,100 ,50,500", 1, 1000)
	if err != nil || !slices.Equal(got, []int{50, 100, 500}) {
		t.Errorf("parseInts = %v, %v; want [50 100 500] (a repeat once)", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "1001", "-4", "1,,2"} {
		if _, err := parseInts("rates", bad, 1, 1000); err == nil {
			t.Errorf("parseInts(%q): no error", bad)
		}
	}
}

func TestFlashOptionsCheck(t *testing.T) {
	ok := FlashOptions{Shards: []int{1, 4, 16}, Rates: []int{50, 100, 200, 350, 500}, Duration: flashDuration, Partitions: 16,
		PartitionRU: 1000, SelloutUnits: 200, SelloutRate: 40, PreallocUnits: 1600}
	if err := ok.check(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for name, change := range map[string]func(*FlashOptions){
		"NoShards":        func(o *FlashOptions) { o.Shards = nil },
		"TooManyPoints":   func(o *FlashOptions) { o.Rates = []int{1, 2, 3, 4, 5, 6, 7} },
		"ShortDuration":   func(o *FlashOptions) { o.Duration = time.Millisecond },
		"LongDuration":    func(o *FlashOptions) { o.Duration = time.Minute },
		"NoPartition":     func(o *FlashOptions) { o.Partitions = 0 },
		"PastCosmos":      func(o *FlashOptions) { o.PartitionRU = 10001 },
		"TooLittle":       func(o *FlashOptions) { o.PartitionRU = 1 },
		"NegativeSellout": func(o *FlashOptions) { o.SelloutUnits = -1 },
		"HugeSellout":     func(o *FlashOptions) { o.SelloutUnits = 1_000_000 },
		"NoSelloutRate":   func(o *FlashOptions) { o.SelloutRate = 0 },
		"FewUnits":        func(o *FlashOptions) { o.PreallocUnits = 3 },
		"ManyUnits":       func(o *FlashOptions) { o.PreallocUnits = 20000 },
	} {
		t.Run(name, func(t *testing.T) {
			o := ok
			change(&o)
			if err := o.check(); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestRunRefusesBadFlashOptions: the options are checked before any shop
// starts.
func TestRunRefusesBadFlashOptions(t *testing.T) {
	for _, args := range [][]string{
		{"--flash-shards", "--shards", "0"},
		{"--flash-shards", "--shards", "65"},
		{"--flash-shards", "--rates", "0"},
		{"--flash-shards", "--rates", "1,2,3,4,5,6,7"},
		{"--flash-shards", "--partition-ru", "20000"},
		{"--flash-shards", "--duration", "1ms"},
		{"--flash-shards", "--partitions", "65"},
	} {
		if err := Run(t.Context(), args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("scale %v: no error", args)
		}
	}
}

func problem(typ, detail string) []byte {
	return []byte(`{"type":"https://shop.example/problems/` + typ + `","status":0,"detail":"` + detail + `"}`)
}

func TestTallyCountsEachAnswer(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	answers := []shopAnswer{
		{code: http.StatusCreated, charge: 100, latency: ms(10)},
		{code: http.StatusCreated, charge: 120, latency: ms(30)},
		{code: http.StatusServiceUnavailable, retryAfter: true, body: problem("unavailable", "the store is throttling requests (429): partition 00-FF of inventory has spent its 1000 RU/s"), latency: ms(2)},
		{code: http.StatusServiceUnavailable, retryAfter: true, body: problem("unavailable", "the request took too long"), latency: ms(10000)},
		{code: http.StatusConflict, body: problem("out-of-stock", "not enough in stock"), latency: ms(3)},
		{code: http.StatusConflict, body: problem("conflict", "a checkout with this Idempotency-Key is still in progress"), latency: ms(4)},
		{code: http.StatusAccepted, latency: ms(5)},
		{err: errors.New("connection reset"), latency: ms(6)},
	}
	p := FlashPoint{AvailableAfter: 5}
	p.tally(answers, 2)
	want := FlashPoint{AvailableAfter: 5, Sales: 2, SalesPerSecond: 1, Unavailable: 2, Throttled: 1, OutOfStock: 1, FalseRefusals: 1, Other: 3,
		CheckoutRU: 110, P50Ms: 6, P99Ms: 10000, P99SalesMs: 30}
	if p.Sales != want.Sales || p.SalesPerSecond != want.SalesPerSecond || p.Unavailable != want.Unavailable || p.Throttled != want.Throttled ||
		p.OutOfStock != want.OutOfStock || p.FalseRefusals != want.FalseRefusals || p.Other != want.Other || p.CheckoutRU != want.CheckoutRU ||
		p.P50Ms != want.P50Ms || p.P99Ms != want.P99Ms || p.P99SalesMs != want.P99SalesMs {
		t.Errorf("tally =\n%+v\nwant\n%+v", p, want)
	}
	if p.OtherCodes["409"] != 1 || p.OtherCodes["202"] != 1 || p.OtherCodes["no answer"] != 1 {
		t.Errorf("other codes = %v", p.OtherCodes)
	}

	// Sold out for real: no unit left, so no refusal was false.
	soldOut := FlashPoint{AvailableAfter: 0}
	soldOut.tally(answers, 2)
	if soldOut.FalseRefusals != 0 {
		t.Errorf("sold out: %d false refusals, want 0", soldOut.FalseRefusals)
	}
}

func snapshot(at time.Time, charges map[string][2]float64) inventorySnapshot {
	s := inventorySnapshot{at: at, partitions: map[string]partitionTotals{}}
	for name, c := range charges {
		s.partitions[name] = partitionTotals{Partition: name, Provisioned: 1000, RequestCharge: c[0], Throttled: int64(c[1])}
	}
	return s
}

// TestSpendLessIdle: the load's RU is each partition's spend less its idle
// rate over the load's seconds; the hottest is read before that, and the
// partitions holding shards are those past a quarter of one shard's share.
func TestSpendLessIdle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s0 := snapshot(t0, map[string][2]float64{"a": {100, 0}, "b": {100, 0}, "c": {100, 0}, "d": {100, 0}})
	s1 := snapshot(t0.Add(time.Second), map[string][2]float64{"a": {102, 0}, "b": {102, 0}, "c": {102, 0}, "d": {102, 0}})
	s2 := snapshot(t0.Add(3*time.Second), map[string][2]float64{"a": {2106, 7}, "b": {1106, 0}, "c": {106, 0}, "d": {120, 1}})
	p := FlashPoint{Shards: 4, Sales: 150}
	p.spend(s0, s1, s2, "b")
	// a: 2004 − 2·2 = 2000; b: 1000; c: 0; d: 18 − 4 = 14.
	if p.InventoryRU != 3014 || p.RUPerSale != report.Round2(3014.0/150) {
		t.Errorf("inventory %v RU, %v per sale; want 3014 and %v", p.InventoryRU, p.RUPerSale, report.Round2(3014.0/150))
	}
	if p.HomeRUPerSale != report.Round2(1000.0/150) {
		t.Errorf("home partition: %v RU per sale, want %v", p.HomeRUPerSale, report.Round2(1000.0/150))
	}
	if p.HottestRUs != 1002 || p.Budget != 1000 || p.ThrottledCalls != 8 {
		t.Errorf("hottest %v RU/s of %v, %d throttled; want 1002 of 1000, 8", p.HottestRUs, p.Budget, p.ThrottledCalls)
	}
	// One shard's share is 3014 ÷ 4 = 753.5; a quarter of it 188: a and b.
	if p.PartitionsLoaded != 2 || p.HottestShare != report.Round2(2000.0/3014) {
		t.Errorf("%d partitions loaded, hottest share %v; want 2 and %v", p.PartitionsLoaded, p.HottestShare, report.Round2(2000.0/3014))
	}
}

func TestLimit(t *testing.T) {
	for _, tt := range []struct {
		p    FlashPoint
		want string
	}{
		{FlashPoint{Offered: 100, SalesPerSecond: 95}, ""},
		{FlashPoint{Offered: 100, SalesPerSecond: 50, ThrottledCalls: 40, Throttled: 40, HottestRUs: 1000, Budget: 1000}, "throttle"},
		{FlashPoint{Offered: 100, SalesPerSecond: 50, ThrottledCalls: 2, HottestRUs: 900, Budget: 1000}, "throttle"},
		{FlashPoint{Offered: 500, SalesPerSecond: 250, HottestRUs: 300, Budget: 1000}, "machine"},
		{FlashPoint{Offered: 500, SalesPerSecond: 250, ThrottledCalls: 1, HottestRUs: 300, Budget: 1000}, "machine"},
		{FlashPoint{Sellout: true, Offered: 40, SalesPerSecond: 20}, "stock"},
	} {
		if got := tt.p.Limit(); got != tt.want {
			t.Errorf("%+v: limit %q, want %q", tt.p, got, tt.want)
		}
	}
}

// flashFixture is a report as a run could make it, figures chosen: at 4
// shards, the home's partition (holding 1) spends 6.50 of a sale's 20 RU,
// so h = 2 and t = 18.
func flashFixture() FlashReport {
	rep := flashFixtureRaw()
	rep.Points[0].HomeRUPerSale = 20
	rep.Points[4].HomeRUPerSale, rep.Points[4].HomeTakeShare = 6.5, 0.25
	return rep
}

func flashFixtureRaw() FlashReport {
	point := func(n, offered int, sales, ruPerSale, share float64, parts int, throttled int64) FlashPoint {
		return FlashPoint{Shards: n, Offered: offered, Sent: offered * 8, SalesPerSecond: sales, Sales: int(sales * 8), RUPerSale: ruPerSale,
			HottestShare: share, PartitionsLoaded: parts, Budget: 1000, HottestRUs: min(1000, sales*ruPerSale*share), ThrottledCalls: throttled,
			Throttled: int(throttled), Unavailable: int(throttled), CheckoutRU: 109.5, P99Ms: 20, P99SalesMs: 25, AvailableAfter: 1_000_000 - int64(sales*8)}
	}
	return FlashReport{
		Machine:  report.Machine{CPUs: 2, CPUModel: "test CPU", GoVersion: "go1.26", OS: "linux/amd64", LoadAverage: "0.10 0.20 0.30"},
		Command:  "go run ./cmd/shop scale --flash-shards",
		Duration: "8s", Elapsed: "4m10s",
		Options: FlashOptions{Shards: []int{1, 4}, Rates: []int{50, 100, 200}, Duration: 8 * time.Second, Partitions: 16, PartitionRU: 1000,
			SelloutUnits: 200, SelloutRate: 40},
		Placements: []Placement{{Shards: 1, Partition: []string{"A"}}, {Shards: 4, Partition: []string{"A", "B", "B", "B"}}},
		Points: []FlashPoint{
			point(1, 50, 49, 20, 1, 1, 0),
			point(1, 100, 51, 20, 1, 1, 300),
			point(1, 200, 50, 20, 1, 1, 1200),
			{Shards: 1, Sellout: true, Units: 200, Offered: 40, Sent: 300, Sales: 200, SalesPerSecond: 26.67, OutOfStock: 100, RUPerSale: 21, Budget: 1000, PartitionsLoaded: 1},
			point(4, 50, 50, 20, 0.5, 2, 0),
			point(4, 100, 98, 20, 0.5, 2, 0),
			point(4, 200, 101, 20, 0.5, 2, 900),
			{Shards: 4, Sellout: true, Units: 200, Offered: 40, Sent: 300, Sales: 190, SalesPerSecond: 25.33, OutOfStock: 110, FalseRefusals: 110, AvailableAfter: 10,
				UnitsAfter: []int64{10, 0, 0, 0}, RUPerSale: 21, Budget: 1000, PartitionsLoaded: 2},
		},
		Prealloc: Prealloc{Store: "embedded store", StockRead: 1, Take: 11.35, Commit: 5.9, CounterPerSale: 18.25, Create: 6.35, Claim: 5.9, FailedClaim: 1,
			UnitCommit: 5.9, QueryOne: 2.41, QueryCross: 36.91, Units: 1600, Groups: 16, Runs: []SellOutRun{
				{How: findByProbe, Claimers: 8, SellOutStats: SellOutStats{TriesPerSale: 8, LastTenthTries: 56, RUPerSale: 19}},
				{How: findByQuery, Claimers: 8, SellOutStats: SellOutStats{TriesPerSale: 1.2, LastTenthTries: 1.2, RUPerSale: 15.25}},
			}},
	}
}

func TestSummarize(t *testing.T) {
	sums := summarize(flashFixture())
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want 2", len(sums))
	}
	one, four := sums[0], sums[1]
	if one.FollowsUpTo != 50 || one.FirstShort != 100 || one.Ceiling != 51 || one.CeilingAt != 100 || one.CeilingLimit != "throttle" || one.Predicted != 50 {
		t.Errorf("1 shard: %+v", one)
	}
	if four.FollowsUpTo != 100 || four.FirstShort != 200 || four.Ceiling != 101 || four.Placement.Distinct() != 2 || four.HottestShare != 0.5 || four.Predicted != 100 {
		t.Errorf("4 shards: %+v", four)
	}
}

// TestPlaceShards: each shard's key is placed on one partition of a
// store of as many as asked; on one partition, all together.
func TestPlaceShards(t *testing.T) {
	pl, err := placeShards(t.Context(), 16, "flash-sale", 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Partition) != 16 || pl.Distinct() < 1 || pl.Distinct() > 16 {
		t.Errorf("placement %+v: want 16 shards on 1 to 16 partitions", pl)
	}
	held, home := pl.Crowding()
	sum := 0
	for _, n := range held {
		sum += n
	}
	if sum != 16 || home < 1 || len(held) != pl.Distinct() {
		t.Errorf("crowding %v, home's %d: want 16 shards in all, the home's at least 1", held, home)
	}
	one, err := placeShards(t.Context(), 1, "flash-sale", 4)
	if err != nil || one.Distinct() != 1 || one.String() != "4 (home's: 4)" {
		t.Errorf("on one partition: %v (%v), want 4 (home's: 4)", one, err)
	}
}

func TestRandomPlacement(t *testing.T) {
	if d, f := randomPlacement(1, 1); d != 1 || f != 1 {
		t.Errorf("1 over 1: %v, %v", d, f)
	}
	d, f := randomPlacement(16, 16)
	if math.Abs(d-10.30) > 0.01 || f < 2.5 || f > 3.5 {
		t.Errorf("16 over 16: %v partitions expected, the fullest %v; want 10.30 and about 3", d, f)
	}
}

func TestProbeExpectation(t *testing.T) {
	perSale, lastTenth := probeExpectation(1600)
	if perSale != 7.96 || lastTenth != 56.56 {
		t.Errorf("probeExpectation(1600) = %v, %v; want 7.96 and 56.56", perSale, lastTenth)
	}
}

func TestFlashShopEnv(t *testing.T) {
	env := flashShopEnv([]string{"PATH=/bin", "SHOP_THROUGHPUT=400", "HOME=/root"}, map[string]string{"SHOP_PARTITIONS": "16", "SHOP_ADDR": "127.0.0.1:0"})
	want := []string{"PATH=/bin", "HOME=/root", "SHOP_ADDR=127.0.0.1:0", "SHOP_PARTITIONS=16"}
	if !slices.Equal(env, want) {
		t.Errorf("env = %v, want %v", env, want)
	}
}

// TestFlashMarkdownInTheDocs writes the section into a document between
// its markers, keeping the prose around it, with the table's rows and the
// arithmetic written out.
func TestFlashMarkdownInTheDocs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scale.md")
	const prose = "# Scale\n\nProse before.\n\n<!-- begin: shop scale flash shards (generated) -->\nold\n<!-- end: shop scale flash shards -->\n\nProse after.\n"
	if err := os.WriteFile(path, []byte(prose), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := flashFixture()
	if err := report.Write(io.Discard, rep, report.Output{Docs: path}, "scale flash shards", func(w io.Writer) { writeFlashMarkdown(w, rep) }, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{
		"Prose before.", "Prose after.",
		"Written by `go run ./cmd/shop scale --flash-shards` on 2 CPUs (test CPU), go1.26, linux/amd64; load average 0.10 0.20 0.30 at the start; the run took 4m10s.",
		"| shards | on partitions | offered/s | sent | sales/s |",
		"\n| 1 | 1 | 100 | 800 | 51.0 | 300 (300) | 0 (0) | 0 | 20.0 / 25.0 | 20.00 | 109.50 | 1,000 (1,000) | 300 | throttle |\n",
		"\n| 4 | 2 | 40 (sell-out of 200 units, 10 left) | 300 | 25.3 | 0 (0) | 110 (110) | 0 |",
		"| 1 | 1: 1 (home's: 1) | 100% | 50 | 51.0 (100, throttle) | 1,000 ÷ (20.00 × 1.00) = 50.0 sales/s | 1 × 1,000 ÷ 20.00 = 50.0 sales/s |",
		"| 4 | 2: 3·1 (home's: 1) | 50% | 100 | 101 (200, throttle) | 1,000 ÷ (20.00 × 0.50) = 100 sales/s | 2 × 1,000 ÷ 20.00 = 100 sales/s |",
		"10,000 ÷ 20.00 = **500 sales/s of one product on one partition**",
		"| 1 | 20.00 | — | 1, 100% | 10,000 ÷ (20.00 × 1.00) = 500; 1 × 10,000 ÷ 20.00 = 500 sales/s | — | — | — |",
		"| 4 | 20.00, 6.50 (25%) | 2.00, 18.00 | 2, 50% | 10,000 ÷ (20.00 × 0.50) = 1,000; 2 × 10,000 ÷ 20.00 = 1,000 sales/s | 10,000 ÷ (2.00 + 18.00 ÷ 4) = 1,538; 4 × 10,000 ÷ 20.00 = 2,000 sales/s | 2.7, 2.12 |",
		"while a sale's RU stays about the same (20.00 RU at 1, 20.00 RU at 4 shards, at the lowest rate)",
		"Measured, h came out at 2.00 RU",
		"4 shards need 40,000 RU/s",
		"| **counter, per sale** | **18.25** |",
		"| a unit picked at random, again on a loss | 8 | 8.00 | 56.00 | 19.00 | 25.35 | 526 | 548 |",
		"H(1600) = 7.96 claims per sale, and 56.56 per sale over the last tenth",
		"With its preallocation counted (6.35 RU a unit, paid before the sale), none of these costs less than the counter.",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document lacks %q", want)
		}
	}
	if strings.Contains(doc, "\nold\n") {
		t.Error("the old section is still there")
	}
	if t.Failed() {
		t.Log(doc)
	}
}

// TestSplit: h and t from the home partition's spend; nothing to tell
// them apart when the home's partition holds every shard.
func TestSplit(t *testing.T) {
	s := shardSummary{Shards: 4, RUPerSale: 20, HomeRUPerSale: 6.5, HomeTakeShare: 0.25, Placement: Placement{Shards: 4, Partition: []string{"A", "B", "B", "B"}}}
	if h, tt, ok := s.split(); !ok || math.Abs(h-2) > 1e-9 || math.Abs(tt-18) > 1e-9 {
		t.Errorf("split = %v, %v, %v; want 2, 18, true", h, tt, ok)
	}
	together := shardSummary{Shards: 4, RUPerSale: 20, HomeRUPerSale: 20, HomeTakeShare: 1, Placement: Placement{Shards: 4, Partition: []string{"A", "A", "A", "A"}}}
	if _, _, ok := together.split(); ok {
		t.Error("every shard on the home's partition: split ok, want not")
	}
	if _, _, ok := (shardSummary{Shards: 1, RUPerSale: 20, HomeRUPerSale: 20, Placement: Placement{Shards: 1, Partition: []string{"A"}}}).split(); ok {
		t.Error("one shard: split ok, want not")
	}
	noisy := shardSummary{Shards: 4, RUPerSale: 20, HomeRUPerSale: 25, HomeTakeShare: 0.25, Placement: Placement{Shards: 4, Partition: []string{"A", "B", "B", "B"}}}
	if _, _, ok := noisy.split(); ok {
		t.Error("the home's partition spending more than the whole: split ok, want not")
	}
}

// TestHomeTakeShare counts the sold orders whose take started on a shard
// in the home document's partition, by each order's start shard.
func TestHomeTakeShare(t *testing.T) {
	pl := Placement{Shards: 4, Partition: []string{"A", "B", "A", "B"}}
	var answers []shopAnswer
	home := 0
	for i := range 40 {
		id := fmt.Sprintf("order-%02d", i)
		if k := domain.StartShard(id, flashProduct, "", 4); k == 0 || k == 2 {
			home++
		}
		answers = append(answers, shopAnswer{code: http.StatusCreated, body: []byte(`{"id":"` + id + `"}`)})
	}
	answers = append(answers, shopAnswer{code: http.StatusServiceUnavailable, body: []byte(`{}`)})
	if got, want := homeTakeShare(answers, pl), float64(home)/40; got != want || home == 0 || home == 40 {
		t.Errorf("homeTakeShare = %v, want %v (%d of 40 in the home's partition)", got, want, home)
	}
}
