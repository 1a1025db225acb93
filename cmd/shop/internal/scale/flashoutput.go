package scale

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// cosmosPartitionRUs is what one physical partition of Cosmos serves at
// most.
const cosmosPartitionRUs = 10_000

// shardSummary is what the points of one number of shards show.
type shardSummary struct {
	Shards int
	// Placement is where the shards' keys land; HottestShare the busiest
	// partition's part of the inventory's RU, RUPerSale the inventory's
	// RU per sale: both from the lowest rate, where the throttle refuses
	// least.
	Placement    Placement
	HottestShare float64
	RUPerSale    float64
	// HomeRUPerSale is what the home document's partition spent per sale,
	// HomeTakeShare the part of the takes that started there.
	HomeRUPerSale float64
	HomeTakeShare float64
	// FollowsUpTo is the highest offered rate up to which every point
	// sold 90% of it or more (0: none); FirstShort the first that did
	// not (0: none did not).
	FollowsUpTo int
	FirstShort  int
	// Ceiling is the most sales per second of any point, at CeilingAt
	// offered, held there by CeilingLimit.
	Ceiling      float64
	CeilingAt    int
	CeilingLimit string
	// Predicted is the budget of one partition over what its hottest
	// partition spends per sale: Budget ÷ (RUPerSale × HottestShare).
	Predicted float64
}

// summarize sums up the rate points of each number of shards, in the
// order of the options.
func summarize(rep FlashReport) []shardSummary {
	var out []shardSummary
	for _, n := range rep.Options.Shards {
		s := shardSummary{Shards: n, Placement: rep.placement(n)}
		following := true
		for _, p := range rep.Points {
			if p.Shards != n || p.Sellout {
				continue
			}
			if s.RUPerSale == 0 && p.RUPerSale > 0 {
				s.HottestShare, s.RUPerSale, s.HomeRUPerSale, s.HomeTakeShare = p.HottestShare, p.RUPerSale, p.HomeRUPerSale, p.HomeTakeShare
				if p.HottestShare > 0 {
					s.Predicted = p.Budget / (p.RUPerSale * p.HottestShare)
				}
			}
			if following && p.Limit() == "" {
				s.FollowsUpTo = p.Offered
			} else if following {
				following, s.FirstShort = false, p.Offered
			}
			if p.SalesPerSecond > s.Ceiling {
				s.Ceiling, s.CeilingAt, s.CeilingLimit = p.SalesPerSecond, p.Offered, p.Limit()
			}
		}
		out = append(out, s)
	}
	return out
}

// placement is where n shards land (none when the report has none).
func (rep FlashReport) placement(n int) Placement {
	for _, p := range rep.Placements {
		if p.Shards == n {
			return p
		}
	}
	return Placement{Shards: n}
}

// randomPlacement is where n shard keys land among p partitions when the
// hash places each at random, as Cosmos's does: the partitions expected
// to hold one or more, p·(1 − (1 − 1/p)^n), and the mean of the most
// shards one partition holds (simulated, a fixed seed).
func randomPlacement(n, p int) (distinct, fullest float64) {
	distinct = float64(p) * (1 - math.Pow(1-1/float64(p), float64(n)))
	const trials = 20000
	rng := rand.New(rand.NewPCG(35, 16))
	held := make([]int, p)
	sum := 0
	for range trials {
		clear(held)
		most := 0
		for range n {
			i := rng.IntN(p)
			held[i]++
			most = max(most, held[i])
		}
		sum += most
	}
	return distinct, float64(sum) / trials
}

func writeFlashMarkdown(w io.Writer, rep FlashReport) {
	o := rep.Options
	fmt.Fprintf(w, "Written by `%s` on %s; the run took %s.\n\n", rep.Command, rep.Machine, rep.Elapsed)
	fmt.Fprintf(w, "- target: `shop serve` in a process of its own (this binary, started for each point on a fresh data directory, no sample data), the load from this process over loopback HTTP; the embedded store with %d simulated physical partitions\n", o.Partitions)
	fmt.Fprintf(w, "- throttle: `inventory` alone provisioned %s RU/s (`SHOP_THROUGHPUT_INVENTORY`): %s RU/s per physical partition; every other container unlimited (`SHOP_THROUGHPUT=0`), so that the figure is the stock's: the orders, carts and status view a checkout also writes scale with the buyers, spread over their own keys, not with one product\n",
		count(float64(o.PartitionRU*o.Partitions)), count(float64(o.PartitionRU)))
	fmt.Fprintf(w, "- each point: one product of %s units (never sold out), split with `PUT /v1/admin/products/{id}/stock/shards` before the load; one buyer per checkout, each a distinct user with one unit in the cart, prepared before the load; the checkouts sent open-loop at the offered rate for %s (each at its time whatever the answers before it), each once, never retried\n",
		thousands(flashUnits), rep.Duration)
	if o.SelloutUnits > 0 {
		fmt.Fprintf(w, "- sell-out: %d units, %d buyers (half as many again) at %d/s: every unit should sell, and every refusal should come once none is left\n",
			o.SelloutUnits, o.SelloutUnits*3/2, o.SelloutRate)
	}
	fmt.Fprintln(w, "- columns: sales/s over the offered window; 503 all carry `Retry-After`, (throttled) those whose problem says the store throttled; out of stock (false): the 409 out-of-stock answers, and of them those given while units remained (the layout read after the load still holds units); inventory RU per sale: what `inventory` spent during the load (`GET /v1/admin/throughput`, less its idle polling) over the sales (the inventory feed's reads after each change included: per feed batch, not per sale, so they weigh less as batches fill at higher rates); checkout RU: a sale's whole `X-Request-Charge`, every container; hottest partition: the inventory partition that spent the most RU/s during the load, against its budget (a partition may spend a little over it: a call admitted with budget left is charged in full); on partitions: how many of inventory's physical partitions the shards' keys hash to (the product is `flash-sale` at every point, so its shards land alike at every rate); limit: what held the sales under 90% of the offered rate (throttle: the store refused calls; machine: it did not, the two cores did)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shards | on partitions | offered/s | sent | sales/s | 503 (throttled) | out of stock (false) | other | p99 ms, all / sales | inventory RU per sale | checkout RU | hottest partition RU/s (budget) | inventory calls throttled | limit |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, p := range rep.Points {
		offered := strconv.Itoa(p.Offered)
		if p.Sellout {
			offered += fmt.Sprintf(" (sell-out of %d units, %d left)", p.Units, p.AvailableAfter)
		}
		fmt.Fprintf(w, "| %d | %d | %s | %d | %s | %d (%d) | %d (%d) | %s | %s / %s | %s | %s | %s (%s) | %d | %s |\n",
			p.Shards, rep.placement(p.Shards).Distinct(), offered, p.Sent, count(p.SalesPerSecond), p.Unavailable, p.Throttled, p.OutOfStock, p.FalseRefusals,
			otherCell(p), count(p.P99Ms), count(p.P99SalesMs), ru(p.RUPerSale), ru(p.CheckoutRU), count(p.HottestRUs), count(p.Budget),
			p.ThrottledCalls, orDash(p.Limit()))
	}
	sums := summarize(rep)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where each number of shards stops following the offered rate (90% of it or more sold), its most sales per second, and what the throttle predicts from the lowest rate's figures. The busiest partition is full at budget ÷ (RU per sale × its share of the inventory's RU): past that, the buyers whose take starts on its shards get 503s (a take the throttle refuses does not move to another shard; only a take short of units does) while the other partitions go on selling. With every partition that holds shards full, the product sells about partitions × budget ÷ RU per sale.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shards | on partitions: shards each holds | busiest partition's share | follows up to (offered/s) | most sales/s (at offered/s, limit) | the busiest partition full at | every partition full at |")
	fmt.Fprintln(w, "|--:|---|--:|--:|--:|---|---|")
	budget := count(float64(o.PartitionRU))
	for _, s := range sums {
		follows := "none"
		if s.FollowsUpTo > 0 {
			follows = strconv.Itoa(s.FollowsUpTo)
		}
		if s.FirstShort == 0 {
			follows += " (every rate)"
		}
		d := s.Placement.Distinct()
		all := 0.0
		if s.RUPerSale > 0 {
			all = float64(d*o.PartitionRU) / s.RUPerSale
		}
		fmt.Fprintf(w, "| %d | %d: %s | %s | %s | %s (%d, %s) | %s ÷ (%s × %s) = %s sales/s | %d × %s ÷ %s = %s sales/s |\n", s.Shards, d, s.Placement, pct2(s.HottestShare), follows,
			count(s.Ceiling), s.CeilingAt, orDash(s.CeilingLimit), budget, ru(s.RUPerSale), strconv.FormatFloat(s.HottestShare, 'f', 2, 64), count(s.Predicted),
			d, budget, ru(s.RUPerSale), count(all))
	}
	writeFlashCosmos(w, sums)
	writePreallocMarkdown(w, rep.Prealloc)
}

// split divides a sale's inventory RU at N shards into h, what the home
// document's partition spends per sale beyond the takes that start there
// (its own reads: the claim's, and the inventory feed's), and t, what
// the rest spends per sale, which lands on the shards' partitions as the
// takes do (the start shard's read, the take, the commit, the feed's
// reads of every shard): with a share s of the takes starting on
// shards in the home's partition, that partition spends H = h + t·s a
// sale and all of them RU = h + t, so t = (RU − H) ÷ (1 − s). ok is false
// when every take started in the home's partition (nothing tells h from
// t) or when t comes out outside 0..RU.
func (s shardSummary) split() (h, t float64, ok bool) {
	if s.Shards < 2 || s.HomeTakeShare >= 1 || s.RUPerSale == 0 {
		return 0, s.RUPerSale, false
	}
	t = (s.RUPerSale - s.HomeRUPerSale) / (1 - s.HomeTakeShare)
	if t <= 0 || t > s.RUPerSale {
		return 0, s.RUPerSale, false
	}
	return s.RUPerSale - t, t, true
}

// writeFlashCosmos is the arithmetic at Cosmos's sizes.

func writeFlashCosmos(w io.Writer, sums []shardSummary) {
	if len(sums) == 0 || sums[0].RUPerSale == 0 {
		return
	}
	base := sums[0]
	perPartition := cosmosPartitionRUs / base.RUPerSale
	fmt.Fprintln(w)
	fmt.Fprintln(w, "#### On Cosmos, on paper")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "At %d shard%s a sale costs inventory %s RU (at the lowest rate: the checkout's stock read, the take, the commit, the feed's pass; the embedded store's estimate of Cosmos's charges). One physical partition serves 10,000 RU/s: 10,000 ÷ %s = **%s sales/s of one product on one partition**.\n\n",
		base.Shards, plural(base.Shards), ru(base.RUPerSale), ru(base.RUPerSale), count(perPartition))
	fmt.Fprintln(w, "With N shards a sale costs RU = h + t: h on the home document's partition beyond the takes that start there (the home document's own reads: the claim's, and the inventory feed's), t where the takes land (the start shard's read, the take, the commit, and the inventory feed's reads after the change), spread over the shards as the takes are (a hash of the order id picks the start shard). The home's partition spends H a sale, measured, and a share s of the takes started on the shards it holds (each sold order's start shard, `domain.StartShard`), so H = h + t·s and t = (RU − H) ÷ (1 − s).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each placement gives two figures: the offered rate at which the busiest partition is full, past which its buyers get 429s (503 from the shop) while the others still sell, and about what the product sells once every partition holding shards is full, partitions × 10,000 ÷ RU. With the placement measured here the busiest is full at 10,000 ÷ (RU × its share); with every shard on a partition of its own at 10,000 ÷ (h + t ÷ N), the home's partition being the busiest; with the keys hashed at random over N partitions, as Cosmos's hash places them, the fullest holding f shards, between 10,000 ÷ (h + t·f ÷ N) (the fullest is the home's) and 10,000 ÷ max(t·f ÷ N, h + t ÷ N) (it is not).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shards | RU, H per sale (s) | h, t | placement here: partitions, busiest share | busiest full; all full | every shard on its own partition: busiest full; all full | at random over N partitions: partitions expected, f | busiest full; all full |")
	fmt.Fprintln(w, "|--:|---|---|---|---|---|---|---|")
	var hs []float64
	for _, s := range sums {
		if s.HottestShare == 0 {
			continue
		}
		d := s.Placement.Distinct()
		here := fmt.Sprintf("10,000 ÷ (%s × %.2f) = %s; %d × 10,000 ÷ %s = %s sales/s", ru(s.RUPerSale), s.HottestShare, count(cosmosPartitionRUs/(s.RUPerSale*s.HottestShare)),
			d, ru(s.RUPerSale), count(float64(d)*cosmosPartitionRUs/s.RUPerSale))
		h, t, ok := s.split()
		if s.Shards == 1 {
			fmt.Fprintf(w, "| 1 | %s | — | 1, 100%% | %s | — | — | — |\n", ru(s.RUPerSale), here)
			continue
		}
		if !ok {
			fmt.Fprintf(w, "| %d | %s, %s (%s) | not separable | %d, %s | %s | — | — | — |\n", s.Shards, ru(s.RUPerSale), ru(s.HomeRUPerSale), pct2(s.HomeTakeShare),
				d, pct2(s.HottestShare), here)
			continue
		}
		hs = append(hs, h)
		n := float64(s.Shards)
		own := cosmosPartitionRUs / (h + t/n)
		distinct, f := randomPlacement(s.Shards, s.Shards)
		worst := cosmosPartitionRUs / (h + t*f/n)
		best := cosmosPartitionRUs / max(t*f/n, h+t/n)
		fmt.Fprintf(w, "| %d | %s, %s (%s) | %s, %s | %d, %s | %s | 10,000 ÷ (%s + %s ÷ %d) = %s; %d × 10,000 ÷ %s = %s sales/s | %.1f, %.2f | %s to %s; %.1f × 10,000 ÷ %s = %s sales/s |\n",
			s.Shards, ru(s.RUPerSale), ru(s.HomeRUPerSale), pct2(s.HomeTakeShare), ru(h), ru(t), d, pct2(s.HottestShare), here,
			ru(h), ru(t), s.Shards, count(own), s.Shards, ru(s.RUPerSale), count(n*cosmosPartitionRUs/s.RUPerSale),
			distinct, f, count(worst), count(best), distinct, ru(s.RUPerSale), count(distinct*cosmosPartitionRUs/s.RUPerSale))
	}
	fmt.Fprintln(w)
	var perN []string
	for _, s := range sums {
		if s.RUPerSale > 0 {
			perN = append(perN, fmt.Sprintf("%s RU at %d", ru(s.RUPerSale), s.Shards))
		}
	}
	firstRU, lastRU := sums[0].RUPerSale, sums[len(sums)-1].RUPerSale
	if firstRU > 0 && lastRU > 1.05*firstRU {
		fmt.Fprintf(w, "Where shards stop scaling on Cosmos: t ÷ N shrinks as N grows, but a sale's RU grows with N (%s shard%s, at the lowest rate), so each added shard buys less; and the home's partition keeps h whatever N.",
			strings.Join(perN, ", "), plural(sums[len(sums)-1].Shards))
	} else {
		fmt.Fprintf(w, "Where shards stop scaling on Cosmos: t ÷ N shrinks as N grows while a sale's RU stays about the same (%s shard%s, at the lowest rate); the home's partition keeps h whatever N.",
			strings.Join(perN, ", "), plural(sums[len(sums)-1].Shards))
	}
	if len(hs) > 0 {
		parts := make([]string, len(hs))
		for i, h := range hs {
			parts[i] = ru(h)
		}
		fmt.Fprintf(w, " Measured, h came out at %s RU: a difference of two measured figures, the least certain one here.", strings.Join(parts, " and "))
	}
	last := sums[len(sums)-1].Shards
	if last < 2 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, " Only a container with at least as many physical partitions as shards can give each shard its own: %d shards need %s RU/s or more of `inventory` (10,000 per partition), or the storage of as many; below that, shards share partitions however their keys hash.\n",
		last, thousands(int64(last)*cosmosPartitionRUs))
}

// writePreallocMarkdown is the comparison with preallocated units.
func writePreallocMarkdown(w io.Writer, p Prealloc) {
	if p.Units == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "#### Preallocated units against the counter")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Measured on a scratch %s: the counter through the shop's inventory repository (means of 20), and %d unit documents of one product in %d partition keys (`<g>#<product>`, as shards are), each `{\"state\":\"free\"}`, sold out by concurrent buyers, each buyer's claims one after the other.\n\n",
		p.Store, p.Units, p.Groups)
	fmt.Fprintln(w, "| operation | RU |")
	fmt.Fprintln(w, "|---|--:|")
	for _, r := range [][2]string{
		{"counter: the checkout's stock read", ru(p.StockRead)},
		{"counter: the take (one batch: reservation created, stock patched under available >= 1)", ru(p.Take)},
		{"counter: the reservation's commit", ru(p.Commit)},
		{"**counter, per sale**", "**" + ru(p.CounterPerSale) + "**"},
		{"unit: its preallocation (the document created, before the sale)", ru(p.Create)},
		{"unit: the claim (patch free → held with the order, under state = free; the unit is its own reservation)", ru(p.Claim)},
		{"unit: a claim that lost (the unit was sold: the condition fails, still charged)", ru(p.FailedClaim)},
		{"unit: the commit (held → sold)", ru(p.UnitCommit)},
		{"unit: a query of one partition key for one free unit", ru(p.QueryOne)},
		{"unit: the same query across every partition", ru(p.QueryCross)},
	} {
		fmt.Fprintf(w, "| %s | %s |\n", r[0], r[1])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| finding a free unit | buyers at once | claims per sale | claims per sale, last tenth of the units | RU per sale (finding, claims, commit) | with the preallocation | sales/s per 10,000 RU/s partition | the counter's |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range p.Runs {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", findName(r.How), r.Claimers, ru(r.TriesPerSale), ru(r.LastTenthTries), ru(r.RUPerSale),
			ru(r.RUPerSale+p.Create), count(cosmosPartitionRUs/r.RUPerSale), count(cosmosPartitionRUs/p.CounterPerSale))
	}
	fmt.Fprintln(w)
	perSale, lastTenth := probeExpectation(p.Units)
	fmt.Fprintf(w, "Random probes are a draw: one run's claims per sale vary by a few. On average, selling %d units one claim at a time takes H(%d) = %s claims per sale, and %s per sale over the last tenth (with r units free a probe finds one with probability r ÷ %d, so a sale takes %d ÷ r claims).\n\n",
		p.Units, p.Units, ru(perSale), ru(lastTenth), p.Units, p.Units)
	var parts []string
	for _, r := range p.Runs {
		v := "dearer than"
		if r.RUPerSale < p.CounterPerSale {
			v = "cheaper than"
		}
		parts = append(parts, fmt.Sprintf("%s with %d buyers %s RU, %s the counter", findName(r.How), r.Claimers, ru(r.RUPerSale), v))
	}
	cheaperWhole := 0
	for _, r := range p.Runs {
		if r.RUPerSale+p.Create < p.CounterPerSale {
			cheaperWhole++
		}
	}
	whole := fmt.Sprintf("%d of the %d", cheaperWhole, len(p.Runs))
	switch cheaperWhole {
	case 0:
		whole = "none"
	case len(p.Runs):
		whole = "every one"
	}
	fmt.Fprintf(w, "Per sale on the hot path, against the counter's %s RU: %s. With its preallocation counted (%s RU a unit, paid before the sale), %s of these costs less than the counter. Both ways spread a sale's writes over the unit keys exactly as shards spread takes over shard keys, so neither lifts the ceiling of one partition further than as many shards would.\n",
		ru(p.CounterPerSale), strings.Join(parts, "; "), ru(p.Create), whole)
}

// findName names a way of finding a free unit.
func findName(how string) string {
	if how == findByProbe {
		return "a unit picked at random, again on a loss"
	}
	return "a query of a random key for its first free unit, then its claim"
}

func otherCell(p FlashPoint) string {
	if p.Other == 0 {
		return "0"
	}
	var parts []string
	for code, n := range p.OtherCodes {
		parts = append(parts, fmt.Sprintf("%d× %s", n, code))
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d (%s)", p.Other, strings.Join(parts, ", "))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// pct2 prints a share as a whole percentage.
func pct2(v float64) string { return strconv.FormatFloat(v*100, 'f', 0, 64) + "%" }

func ratio(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "×" }
