package scale

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/domain"
)

// writeMarkdown is the generated section of docs/scale.md.
func writeMarkdown(w io.Writer, rep Report) {
	fmt.Fprintf(w, "Written by `%s` on %s. Store: %s%s. Each charge is the mean of %d runs, the feed workers' work included.\n\n",
		rep.Command, rep.Machine, rep.Store, estimateNote(rep.Estimate), rep.Repetitions)
	fmt.Fprintln(w, "### Measured charges per operation, by container (RU)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| operation | "+strings.Join(modelContainers, " | ")+" | total |")
	fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(modelContainers)+1))
	for _, op := range rep.operations() {
		cells := []string{op.name}
		for _, c := range modelContainers {
			cells = append(cells, ruCell(op.cost[c]))
		}
		fmt.Fprintf(w, "| %s | %s |\n", strings.Join(cells, " | "), ru(op.cost.Total()))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Assumptions")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| assumption | value |")
	fmt.Fprintln(w, "|---|---:|")
	for _, a := range rep.assumptionRows() {
		fmt.Fprintf(w, "| %s | %s |\n", a[0], a[1])
	}
	for _, m := range rep.Scenarios {
		fmt.Fprintf(w, "\n### %s\n\n", m.Scenario.Name)
		fmt.Fprintf(w, "Containers at the peak (%s RU/s in all; provisioned RU/s split evenly over the physical partitions):\n\n", count(m.TotalRUs))
		fmt.Fprintln(w, "| container | RU/s | GB | partitions for RU/s | for storage | physical partitions | RU/s per partition |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		for _, l := range m.Containers {
			fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %s |\n", l.Container, count(l.RUs), gb(l.GB), l.ForRU, l.ForGB, l.Partitions, count(l.PerPartition))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Storage of one logical partition at the extremes (20 GB at most):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| logical partition | container | arithmetic | GB | over 20 GB |")
		fmt.Fprintln(w, "|---|---|---|---:|---|")
		for _, e := range m.Logical {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", e.What, e.Container, e.Arithmetic, gb(e.GB), yes(e.Over))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Hot spots (10,000 RU/s at most on one logical partition). Buckets today's placed orders need here, by throughput and by storage: %d; the shop has %d by default (`SHOP_STATUS_BUCKETS`, `domain.DefaultStatusBuckets`).\n\n", m.StatusBucketsNeeded, domain.DefaultStatusBuckets)
		fmt.Fprintln(w, "| hot spot | container, key | arithmetic | RU/s on the key | over | container RU/s its partition needs | 10,000 RU/s at | answer |")
		fmt.Fprintln(w, "|---|---|---|---:|---|---:|---|---|")
		for _, h := range m.HotSpots {
			need := "no provisioning can"
			if !h.Over {
				need = count(h.Provision)
			}
			fmt.Fprintf(w, "| %s | %s, %s | %s | %s | %s | %s | %s | %s |\n", h.Name, h.Container, h.Key, h.Arithmetic, count(h.RUs), yes(h.Over), need, h.Limit, h.Answer)
		}
	}
}

// writeText is the report on a terminal: the same tables.
func writeText(w io.Writer, rep Report) { writeMarkdown(w, rep) }

func estimateNote(estimate bool) string {
	if estimate {
		return " (Request Units are the embedded store's documented estimate, store/embedded/charge.go)"
	}
	return ""
}

type operation struct {
	name string
	cost Cost
}

// operations are the measured operations in table order.
func (r Report) operations() []operation {
	var ops []operation
	for _, c := range r.Charges.Mix {
		ops = append(ops, operation{fmt.Sprintf("%s (%s of the mix)", c.Class, pct(c.Share)), c.Cost})
	}
	return append(ops,
		operation{"home page (the categories document)", r.Charges.Home},
		operation{"a review (with the recount)", r.Charges.Review},
		operation{fmt.Sprintf("a price change (%d carts hold the product)", r.Charges.CartsHolding), r.Charges.PriceChange})
}

func (r Report) assumptionRows() [][2]string {
	a := r.Assumptions
	sizes := make([]string, 0, len(r.Charges.Sizes))
	for _, k := range slices.Sorted(mapKeys(r.Charges.Sizes)) {
		sizes = append(sizes, fmt.Sprintf("%s %d B", k, r.Charges.Sizes[k]))
	}
	return [][2]string{
		{"the mix (`shop bench`)", "70% product page, 15% category page, 10% cart update, 5% checkout"},
		{"home page visits per request of the mix (`--home-per-request`)", count(a.HomePerRequest)},
		{"users with an open cart (`--open-carts`)", pct(a.OpenCartShare)},
		{"orders per user, mean (`--orders-per-user`)", count(a.OrdersPerUser)},
		{"orders of the biggest buyer (`--largest-history`)", count(a.LargestHistory)},
		{"reviews per product, mean (`--reviews-per-product`)", count(a.ReviewsPerProduct)},
		{"products of the largest category (`--largest-category`)", count(a.LargestCategory)},
		{"category pages on the most popular category (`--hot-category`)", pct(a.HotCategoryShare)},
		{"product pages on the most popular product (`--hot-product`)", pct(a.HotProductShare)},
		{"reviews per second of the most popular product (`--hot-reviews`)", count(a.HotReviewsPerSec)},
		{"open carts holding the most popular product (`--hot-carts`)", pct(a.HotCartShare)},
		{"checkouts buying the flash-sale product (`--flash`)", pct(a.FlashShare)},
		{"hours of a day at the peak (`--peak-hours`)", count(a.PeakHoursPerDay)},
		{"document sizes (measured, stored bytes)", strings.Join(sizes, ", ")},
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func ruCell(c containerCost) string {
	if c.Ops == 0 && c.RU == 0 {
		return ""
	}
	return ru(c.RU)
}

func yes(b bool) string {
	if b {
		return "**yes**"
	}
	return "no"
}

// count prints a quantity: whole numbers with thousands separators from
// 100 up, fewer decimals as it grows.
func count(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return thousands(int64(math.Round(v)))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// ru prints Request Units with two decimals.
func ru(v float64) string {
	if math.Abs(v) >= 1000 {
		return thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func gb(v float64) string {
	if v >= 100 {
		return thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func pct(v float64) string { return strconv.FormatFloat(v*100, 'f', -1, 64) + "%" }

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
