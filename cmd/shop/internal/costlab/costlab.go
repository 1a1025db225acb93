// Package costlab is `shop cost`: it builds a data set in a scratch store
// and measures, screen by screen, the shop's denormalized reads against the
// normalized alternative, then the read/write workload template of
// model-denormalize-reads.
package costlab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/progress"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/cmd/shop/internal/shopstore"
	"github.com/reference-shop/shop/store"
)

// costOptions are the settings of `shop cost`.
type costOptions struct {
	lab        labOptions
	reps       int
	readRPS    float64
	writeRPS   float64
	partitions int
}

// costReport is everything `shop cost` measured, in the shape --json prints.
type costReport struct {
	Store string `json:"store"`
	// Estimate is true on the embedded store: its Request Units are the
	// documented estimate of store/embedded/charge.go, not a bill.
	Estimate    bool           `json:"estimate"`
	Machine     report.Machine `json:"machine"`
	Command     string         `json:"command"`
	DataSet     string         `json:"dataSet"`
	Repetitions int            `json:"repetitions"`
	Screens     []screenResult `json:"screens"`
	Workload    workloadResult `json:"workload"`
	// Inventory is what stock costs a checkout, a take, a release, and
	// the ceiling one product's stock puts on its sales.
	Inventory inventoryResult `json:"inventory"`
	// SearchWrites is what a product create, a rename and a review cost
	// the search index (its write amplification), beside the search
	// screens.
	SearchWrites []searchWrite `json:"searchWrites"`
	// Reviews is what the reviews of the review rows did to the stars.
	Reviews reviewWrites `json:"reviews"`
	// Backfill is what `shop migrate --backfill` costs per 1,000
	// documents (backfill.go).
	Backfill backfillCost `json:"backfill"`
	// Variants is what the attribute array costs a product page and
	// saves a category page filtered by an attribute value.
	Variants variantsResult `json:"variants"`
	// Shards is what a stock split into shards costs a sale, a refusal,
	// a release, a transfer and the inventory feed, and the ceilings of
	// its partitions (shards.go).
	Shards    shardsResult  `json:"shards"`
	Goals     []report.Goal `json:"goals"`
	BuildTime string        `json:"buildTime"`
}

// searchWriteProducts is how many products the search write measure
// creates and renames.
const searchWriteProducts = 50

// reviewIndexGoal is the most a review may cost the search index on
// average, in Request Units (issue 32: it cost 51.61 before, every review
// rewriting the product's entries).
const reviewIndexGoal = 10

// costGoals: the denormalized design at least 2× cheaper on the product
// page and 5× on a 10-line cart.
var costGoals = []struct {
	screen string
	ratio  float64
}{
	{"product page", 2},
	{"cart (10 lines)", 5},
}

// Run is `shop cost` with its flags in args: it measures both designs and
// prints the report (text, --json or --markdown) or writes it into the cost
// section of a markdown file (--write-docs). getenv selects Cosmos
// (COSMOS_*) over the temporary embedded store.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cost", flag.ContinueOnError)
	fs.SetOutput(stdout)
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	markdown := fs.Bool("markdown", false, "print the report as a markdown section")
	writeDocs := fs.String("write-docs", "", "write the report into this markdown file's cost section (docs/performance.md); after a comma, more files, each getting the sections whose markers it holds (the workshop's module 05 holds the search index's, module 11 the outbox's, module 10 the split stock's)")
	var o costOptions
	fs.Float64Var(&o.readRPS, "read-rps", 1000, "reads per second of the workload template")
	fs.Float64Var(&o.writeRPS, "write-rps", 10, "price changes per second of the workload template")
	fs.IntVar(&o.lab.Products, "products", 500, "products in the data set")
	fs.IntVar(&o.lab.Users, "users", 100, "users, each with a 10-line cart and an order history")
	fs.IntVar(&o.lab.Categories, "categories", 8, "categories")
	fs.IntVar(&o.lab.ReviewsPerProduct, "reviews", 8, "reviews per product")
	fs.IntVar(&o.lab.OrdersPerUser, "orders", 12, "orders per user")
	fs.IntVar(&o.lab.CartsPerProduct, "carts-per-product", 10, "open carts holding each product whose price changes")
	fs.IntVar(&o.lab.PriceChanges, "price-changes", 20, "price changes measured")
	fs.IntVar(&o.reps, "reps", 200, "repetitions of each screen in each design")
	fs.IntVar(&o.partitions, "partitions", 4, "simulated physical partitions of the embedded store")
	writePath := fs.Bool("writepath", false, "instead of the cost lab, measure a cart PUT and checkouts of 1, 3 and 10 lines through the shop's write path on the embedded store with fsync, against a bare bbolt file making the same commits of the same bytes (the store's physical limit); --write-docs writes its own section of docs/performance.md")
	dir := fs.String("dir", os.TempDir(), "with --writepath: the directory whose file system is measured")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *writePath {
		return runWritePathCommand(ctx, args, getenv, stdout, fs, writePathOptions{reps: o.reps, partitions: o.partitions, dir: *dir},
			report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs})
	}
	var dirSet bool
	fs.Visit(func(f *flag.Flag) { dirSet = dirSet || f.Name == "dir" })
	if dirSet {
		return errors.New("dir: names the file system --writepath measures; give --writepath")
	}
	if o.reps < 1 || o.readRPS < 0 || o.writeRPS < 0 {
		return errors.New("reps must be at least 1, rates at least 0")
	}
	s, desc, estimate, closeStore, err := shopstore.OpenScratch(ctx, getenv, "costlab", o.partitions)
	if err != nil {
		return err
	}
	defer closeStore()
	o.lab.Progress = progress.OnStderr("building the data set")
	rep, err := runCostLab(ctx, s, o)
	if err != nil {
		return err
	}
	rep.Store, rep.Estimate = desc, estimate
	rep.Command = strings.TrimSpace("go run ./cmd/shop cost " + strings.Join(args, " "))
	return report.Write(stdout, rep, report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs,
		Parts: map[string]func(io.Writer){
			searchIndexPart: func(w io.Writer) { writeSearchIndexPart(w, rep) },
			outboxPart:      func(w io.Writer) { writeOutboxPart(w, rep) },
			backfillPart:    func(w io.Writer) { writeBackfillPart(w, rep) },
			variantsPart:    func(w io.Writer) { writeVariantsPart(w, rep) },
			shardsPart:      func(w io.Writer) { writeShardsPart(w, rep) },
		}},
		"cost", func(w io.Writer) { writeCostMarkdown(w, rep) }, func(w io.Writer) { writeCostText(w, rep) })
}

// runCostLab builds the data set in s and measures both designs.
func runCostLab(ctx context.Context, s store.Store, o costOptions) (costReport, error) {
	rep := costReport{Machine: report.ThisMachine(), Repetitions: o.reps}
	start := time.Now()
	d, err := buildLab(ctx, s, o.lab)
	if err != nil {
		return rep, fmt.Errorf("building the data set: %w", err)
	}
	rep.BuildTime = time.Since(start).Round(time.Millisecond).String()
	rep.DataSet = fmt.Sprintf("%d products in %d categories with %d reviews each; %d users with a %d-line cart and %d orders each; %d price-change products held by %d open carts each",
		o.lab.Products, o.lab.Categories, o.lab.ReviewsPerProduct, o.lab.Users, cartLines, o.lab.OrdersPerUser, o.lab.PriceChanges, o.lab.CartsPerProduct)

	if err := indexLab(ctx, s, d); err != nil {
		return rep, err
	}
	ms := store.Metered(s)
	for _, sc := range append(labScreens(ms, d), searchScreens(ms, d)...) {
		r, err := measureScreen(ctx, sc, o.reps)
		if err != nil {
			return rep, err
		}
		rep.Screens = append(rep.Screens, r)
	}
	if rep.Workload, err = measureWorkload(ctx, s, ms, d, rep.Screens, o.readRPS, o.writeRPS, o.lab.CartsPerProduct); err != nil {
		return rep, err
	}
	if o.comparable() {
		b := workloadBefore
		rep.Workload.Before = &b
	}
	if rep.Inventory, err = measureInventory(ctx, s, ms, o.reps); err != nil {
		return rep, fmt.Errorf("inventory: %w", err)
	}
	if rep.SearchWrites, err = measureSearchWrites(ctx, ms, min(o.reps, searchWriteProducts)); err != nil {
		return rep, fmt.Errorf("search writes: %w", err)
	}
	reviews, rw, err := measureReviewWrites(ctx, ms, min(o.reps, searchReviews))
	if err != nil {
		return rep, fmt.Errorf("review writes: %w", err)
	}
	rep.SearchWrites, rep.Reviews = append(rep.SearchWrites, reviews...), rw
	// Its products and summaries are no other measure's.
	if rep.Variants, err = measureVariants(ctx, s, ms, o.reps, variantCategorySize); err != nil {
		return rep, fmt.Errorf("variants: %w", err)
	}
	// Its products are no other measure's.
	if rep.Shards, err = measureShards(ctx, s, ms, o.reps); err != nil {
		return rep, fmt.Errorf("shards: %w", err)
	}
	// Last: it rewrites documents, which no measure above may see.
	if rep.Backfill, err = measureBackfill(ctx, s, backfillDocs); err != nil {
		return rep, fmt.Errorf("backfill: %w", err)
	}
	for _, g := range costGoals {
		got := 0.0
		for _, r := range rep.Screens {
			if r.Screen == g.screen {
				got = r.Ratio
			}
		}
		rep.Goals = append(rep.Goals, report.Goal{
			Name: g.screen + ": denormalized RU advantage",
			Want: fmt.Sprintf(">= %g×", g.ratio),
			Got:  got,
			Unit: "×",
			Met:  got >= g.ratio,
		})
	}
	review := reviews[len(reviews)-1].RequestUnits
	rep.Goals = append(rep.Goals, report.Goal{
		Name: "a review on the sample catalog: search index RU",
		Want: fmt.Sprintf("<= %d", reviewIndexGoal),
		Got:  review,
		Unit: " RU",
		Met:  review <= reviewIndexGoal,
	})
	return rep, nil
}
