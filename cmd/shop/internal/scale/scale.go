// Package scale is `shop scale`: the shop at internet scale, modeled from
// charges measured at run time. It runs the shop's requests on a scratch
// store, splits each request's Request Units by container, and holds the
// design against Cosmos DB's limits at the sizes of docs/scale.md:
// physical partitions per container, storage per logical partition, and
// every partition key that would pass 10,000 RU/s.
package scale

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/cmd/shop/internal/shopstore"
)

// Report is what `shop scale` prints (--json).
type Report struct {
	Store       string          `json:"store"`
	Estimate    bool            `json:"estimate"`
	Machine     report.Machine  `json:"machine"`
	Command     string          `json:"command"`
	Repetitions int             `json:"repetitions"`
	Charges     Charges         `json:"charges"`
	Assumptions Assumptions     `json:"assumptions"`
	Scenarios   []ScenarioModel `json:"scenarios"`
}

// Run is `shop scale` with its flags in args.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stdout)
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	markdown := fs.Bool("markdown", false, "print the report as a markdown section")
	writeDocs := fs.String("write-docs", "", "write the report into this markdown file's scale section (docs/scale.md)")
	statusView := fs.Bool("status-view", false, "instead of the model: checkouts against a throttled embedded store, with each number of --buckets of the status view (the before and after of its hot partition); --write-docs writes its own section")
	t := ThrottleOptions{Duration: 10 * time.Second}
	fs.IntVar(&t.Throughput, "throughput", 800, "with --status-view: provisioned RU/s of ordersByStatus")
	fs.IntVar(&t.Others, "others", 4000, "with --status-view: provisioned RU/s of every other container")
	fs.IntVar(&t.Rate, "rate", 40, "with --status-view: checkouts per second")
	fs.DurationVar(&t.Duration, "duration", t.Duration, "with --status-view: length of the load")
	buckets := fs.String("buckets", "1,16", "with --status-view: comma-separated numbers of status buckets to run")
	flashShards := fs.Bool("flash-shards", false, "instead of the model: one product's checkouts at constant rates against shop serve in a process of its own whose inventory alone is throttled, with its stock split into each number of --shards, then a sell-out, and preallocated units against the counter; --write-docs writes its own section")
	shards := fs.String("shards", "1,4,16", "with --flash-shards: comma-separated numbers of stock shards to run")
	rates := fs.String("rates", "50,100,200,350,500", "with --flash-shards: comma-separated checkouts per second to offer, each for --duration")
	f := FlashOptions{PartitionRU: 1000, SelloutUnits: 200, SelloutRate: 40, PreallocUnits: 1600}
	fs.IntVar(&f.PartitionRU, "partition-ru", f.PartitionRU, "with --flash-shards: provisioned RU/s of each physical partition of inventory (SHOP_THROUGHPUT_INVENTORY is this × --partitions)")
	fs.IntVar(&f.SelloutUnits, "sellout-units", f.SelloutUnits, "with --flash-shards: units of the sell-out of each number of shards, bought by half as many buyers again (0: no sell-out)")
	fs.IntVar(&f.SelloutRate, "sellout-rate", f.SelloutRate, "with --flash-shards: checkouts per second of the sell-out")
	fs.IntVar(&f.PreallocUnits, "prealloc-units", f.PreallocUnits, "with --flash-shards: unit documents of the comparison of preallocated units with the counter, on a scratch store in this process (0: no comparison)")
	fs.StringVar(&f.Binary, "shop", "", "with --flash-shards: the shop binary to start (default: this program)")
	reps := fs.Int("reps", 20, "runs of each measured operation")
	partitions := fs.Int("partitions", 4, "simulated physical partitions of the embedded store")
	a := DefaultAssumptions
	fs.Float64Var(&a.HomePerRequest, "home-per-request", a.HomePerRequest, "home page visits per request of the mix")
	fs.Float64Var(&a.OpenCartShare, "open-carts", a.OpenCartShare, "share of users with an open cart")
	fs.Float64Var(&a.OrdersPerUser, "orders-per-user", a.OrdersPerUser, "mean orders per user")
	fs.Float64Var(&a.LargestHistory, "largest-history", a.LargestHistory, "orders of the biggest buyer")
	fs.Float64Var(&a.ReviewsPerProduct, "reviews-per-product", a.ReviewsPerProduct, "mean reviews per product")
	fs.Float64Var(&a.LargestCategory, "largest-category", a.LargestCategory, "products of the largest category")
	fs.Float64Var(&a.HotCategoryShare, "hot-category", a.HotCategoryShare, "share of category pages on the most popular category")
	fs.Float64Var(&a.HotProductShare, "hot-product", a.HotProductShare, "share of product pages on the most popular product")
	fs.Float64Var(&a.HotReviewsPerSec, "hot-reviews", a.HotReviewsPerSec, "reviews per second of the most popular product")
	fs.Float64Var(&a.HotCartShare, "hot-carts", a.HotCartShare, "share of open carts holding the most popular product")
	fs.Float64Var(&a.FlashShare, "flash", a.FlashShare, "share of checkouts buying the flash-sale product")
	fs.Float64Var(&a.PeakHoursPerDay, "peak-hours", a.PeakHoursPerDay, "hours of a day at the peak (today's placed orders)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *reps < 1 || *reps > 1000 {
		return errors.New("reps must be from 1 to 1000")
	}
	if err := a.check(); err != nil {
		return err
	}
	command := strings.TrimSpace("go run ./cmd/shop scale " + strings.Join(args, " "))
	out := report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs}
	if *flashShards {
		given := map[string]bool{}
		fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
		f.Duration, f.Partitions = flashDuration, flashPartitions
		if given["duration"] {
			f.Duration = t.Duration
		}
		if given["partitions"] {
			f.Partitions = *partitions
		}
		var err error
		if f.Shards, err = parseInts("shards", *shards, 1, maxFlashShards); err != nil {
			return err
		}
		if f.Rates, err = parseInts("rates", *rates, 1, maxFlashRate); err != nil {
			return err
		}
		if err := f.check(); err != nil {
			return err
		}
		return runFlashShards(ctx, f, command, out, stdout, os.Stderr)
	}
	if *statusView {
		t.Partitions = *partitions
		if err := t.parseBuckets(*buckets); err != nil {
			return err
		}
		return runStatusView(ctx, t, command, out, stdout)
	}
	s, desc, estimate, closeStore, err := shopstore.OpenScratch(ctx, getenv, "scale", *partitions)
	if err != nil {
		return err
	}
	defer closeStore()
	rep := Report{Store: desc, Estimate: estimate, Machine: report.ThisMachine(), Repetitions: *reps, Assumptions: a,
		Command: command}
	if rep.Charges, err = measureCharges(ctx, s, *reps); err != nil {
		return err
	}
	for _, sc := range Scenarios {
		rep.Scenarios = append(rep.Scenarios, Model(rep.Charges, a, sc))
	}
	return report.Write(stdout, rep, out, "scale", func(w io.Writer) { writeMarkdown(w, rep) }, func(w io.Writer) { writeText(w, rep) })
}

// check refuses shares outside 0..1 and negative counts.
func (a Assumptions) check() error {
	for _, s := range []float64{a.OpenCartShare, a.HotCategoryShare, a.HotProductShare, a.HotCartShare, a.FlashShare} {
		if s < 0 || s > 1 {
			return errors.New("shares (--open-carts, --hot-category, --hot-product, --hot-carts, --flash) must be from 0 to 1")
		}
	}
	for _, n := range []float64{a.HomePerRequest, a.OrdersPerUser, a.LargestHistory, a.ReviewsPerProduct, a.LargestCategory, a.HotReviewsPerSec} {
		if n < 0 {
			return errors.New("counts must not be negative")
		}
	}
	if a.PeakHoursPerDay < 0 || a.PeakHoursPerDay > 24 {
		return errors.New("peak-hours must be from 0 to 24")
	}
	return nil
}
