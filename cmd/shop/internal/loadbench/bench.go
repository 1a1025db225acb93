// Package loadbench is `shop bench`: a bounded load test on loopback of
// the shop (started as `shop serve` in a process of its own, or already
// running at --url) under a mixed workload at a constant rate, against a
// bare net/http handler serving the same bytes, measured by a load
// generator in another process (wrk); a ramp of the product page; a flash
// sale; and, with --revisions, the same product page of other builds.
// --screens makes that comparison, the revisions' included, for every
// screen that renders from one read (screens.go); --hotspots and
// --convergence are the modes of docs/scale.md and docs/reliability.md.
package loadbench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// benchOptions are the settings of `shop bench`.
type benchOptions struct {
	url        string
	rate       int
	mixRate    int
	cpuProfile string
	duration   time.Duration
	products   int
	users      int
	reviews    int
	rampFrom   int
	rampMax    int
	rampStep   time.Duration
	closedTime time.Duration
	workers    int
	// flashBuyers race for flashUnits units of one product (0 buyers: no
	// flash sale).
	flashBuyers, flashUnits int
	// shopBin is the shop binary to start (default: this program), and
	// revisions the git revisions built and measured beside it.
	shopBin   string
	revisions []string
	// throughput provisions the started shops' containers (SHOP_THROUGHPUT,
	// RU/s each; 0: unlimited).
	throughput int
	// screenProfiles is the directory of --screens' CPU profiles ("":
	// none taken).
	screenProfiles string
	// screenOnly picks the screens of --screens whose name contains it
	// ("": all of them).
	screenOnly string
}

// Bounds that keep a run short and local, whatever the flags say.
const (
	maxBenchDuration = 2 * time.Minute
	maxBenchRate     = 100_000
	// generatorGCPercent is the bench's garbage collection target when
	// GOGC is not set.
	generatorGCPercent = 400
	// rampP99Limit ends the ramp: a rate is sustained while every request
	// succeeds and the 99th percentile stays under it.
	rampP99Limit = 10 * time.Millisecond
)

// benchReport is everything `shop bench` measured, in the shape --json
// prints.
type benchReport struct {
	Target  string         `json:"target"`
	Machine report.Machine `json:"machine"`
	Command string         `json:"command"`
	DataSet string         `json:"dataSet"`
	// Revisions are the other builds measured beside this one.
	Revisions []revision `json:"revisions,omitempty"`
	// SetupTime is how long building, loading the data, starting the
	// shops and preparing the users took.
	SetupTime string `json:"setupTime"`
	// Page is the product page the comparisons load, PageBytes its size.
	Page      string `json:"page"`
	PageBytes int    `json:"pageBytes"`
	// Mix is the shop under the mixed traffic, MixByKind the same run per
	// kind of request.
	Mix       runResult   `json:"mix"`
	MixByKind []runResult `json:"mixByKind"`
	// Throughput is the RU/s provisioned per container (0: unlimited), and
	// MixPartitions what each physical partition spent and refused during
	// the mix (with a throughput only).
	Throughput    int              `json:"throughput,omitempty"`
	MixPartitions []partitionUsage `json:"mixPartitions,omitempty"`
	// ProductPage and Baseline: the product page alone and the bare
	// handler serving the same bytes, at the same constant rate.
	ProductPage runResult `json:"productPage"`
	Baseline    runResult `json:"baseline"`
	// Generator is the load generator of the throughput comparison that
	// the goal reads: wrk in another process when it is on PATH
	// (External), else a closed loop of clients from this process
	// (ProductClosed, BaselineClosed, ThroughputRatio).
	Generator       string          `json:"generator"`
	External        *externalResult `json:"external,omitempty"`
	ProductClosed   *runResult      `json:"productClosedLoop,omitempty"`
	BaselineClosed  *runResult      `json:"baselineClosedLoop,omitempty"`
	ThroughputRatio float64         `json:"throughputRatio,omitempty"`
	// Ramp raises the product page's rate until p99 > 10 ms or an error.
	Ramp               []runResult `json:"ramp"`
	MaxSustainableRate int         `json:"maxSustainableRate"`
	RampStopped        string      `json:"rampStopped"`
	// FlashSale is the burst of buyers racing for one product's units.
	FlashSale *flashResult  `json:"flashSale,omitempty"`
	Memory    memoryReport  `json:"memory"`
	Goals     []report.Goal `json:"goals"`
}

// Run is `shop bench` with its flags in args: it runs the load and prints
// the report (text, --json or --markdown) or writes it into the bench
// section of a markdown file (--write-docs). The load never leaves this
// machine (see checkLoopback); getenv is unused, for the commands' common
// signature.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stdout)
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	markdown := fs.Bool("markdown", false, "print the report as a markdown section")
	writeDocs := fs.String("write-docs", "", "write the report into this markdown file's bench section (docs/performance.md); after a comma, more files, each getting the sections whose markers it holds (the workshop's module 08 holds the screens')")
	var o benchOptions
	fs.StringVar(&o.url, "url", "", "a shop already running on loopback, in dev mode (default: start shop serve as a process of its own)")
	fs.StringVar(&o.shopBin, "shop", "", "the shop binary to start as shop serve (default: this program)")
	revisions := fs.String("revisions", "", "comma-separated git revisions of this repository to build and measure beside this build, on the same data (for a before and after)")
	fs.IntVar(&o.rate, "rate", 5000, "requests per second of the product page's constant-rate run")
	fs.IntVar(&o.mixRate, "mix-rate", 2000, "requests per second of the mixed run")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the shop under wrk's load of its product page to this file (go tool pprof)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "length of each constant-rate run")
	fs.IntVar(&o.products, "products", 10000, "products of the started shop's data set")
	fs.IntVar(&o.users, "users", 10000, "users with an open cart in the started shop's data set")
	fs.IntVar(&o.reviews, "reviews", 20000, "reviews of the started shop's data set")
	fs.IntVar(&o.rampFrom, "ramp-from", 500, "first rate of the product page ramp (doubled at each step)")
	fs.IntVar(&o.rampMax, "ramp-max", 32000, "last rate the ramp may try")
	fs.DurationVar(&o.rampStep, "ramp-step", 2*time.Second, "length of each ramp step")
	fs.DurationVar(&o.closedTime, "closed-loop", 3*time.Second, "length of each throughput round (wrk, or a closed loop without it)")
	fs.IntVar(&o.workers, "clients", 8, "concurrent clients of the closed loop (without wrk)")
	fs.IntVar(&o.flashBuyers, "flash-buyers", 500, "buyers of the flash sale, each checking out one unit of one product at once (0: no flash sale)")
	fs.IntVar(&o.flashUnits, "flash-units", 100, "units of the flash sale's product")
	hotspots := fs.Bool("hotspots", false, "instead of the benchmark, drive the read hot spots (home page, most populous category's page, a product page) and one user's cart writes at full speed with wrk, against a shop with the read cache off then on, both at --throughput RU/s (default 400); --write-docs writes its section of docs/scale.md")
	convergence := fs.Bool("convergence", false, fmt.Sprintf("instead of the benchmark, measure how long the feeds take to catch up after a burst of admin writes that fans out (a category rename, products moved into it, price changes of products in many carts): on a plain shop, at --throughput RU/s (default %d), and after a kill -9 half way through the burst (from the restart), then audit each shop's copies; data %d products, %d users, %d reviews unless given; --write-docs writes its section of docs/reliability.md", defaultConvergenceThroughput, convergenceProducts, convergenceUsers, convergenceReviews))
	screens := fs.Bool("screens", false, fmt.Sprintf("instead of the benchmark, measure every screen that renders from one read (home, category page, search, product page, cart, order history, order detail, my account) against a bare handler serving the same bytes: %d wrk rounds of each, alternating (with --revisions, of each revision's shop too), then the shop at --rate for --duration (p99), then one more round under the profiler (where its CPU went); shop serve's defaults on the catalog of a first start (%d products, %d reviews), %s rounds, %d/s for %s unless given; --write-docs writes its section of docs/performance.md", wrkRounds, screensProducts, screensReviews, screensRound, screensRate, screensDuration))
	fs.StringVar(&o.screenOnly, "screen", "", "with --screens: measure only the screens whose name contains this (case-insensitive), for a quick look; the docs take every screen, so not with --write-docs")
	fs.StringVar(&o.screenProfiles, "cpuprofile-screens", "", "with --screens: also save each screen's CPU profile in this directory (SCREEN.pb.gz, go tool pprof)")
	fs.IntVar(&o.throughput, "throughput", 0, "provisioned Request Units per second of each container of the started shop (SHOP_THROUGHPUT), and a report of what each physical partition spent and refused during the mix (0: unlimited, no report)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if getenv("GOGC") == "" {
		// The generator is the instrument: each of its collections
		// delays the sends and answers in flight, which the runs would
		// count as the shop's latency. The shop serves at the same
		// setting (cmd/shop/serve.go).
		defer debug.SetGCPercent(debug.SetGCPercent(generatorGCPercent))
	}
	for _, r := range strings.Split(*revisions, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.revisions = append(o.revisions, r)
		}
	}
	if err := o.validate(); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if o.screenProfiles != "" && !*screens {
		return errors.New("cpuprofile-screens: profiles the screens of --screens")
	}
	if o.screenOnly != "" && (!*screens || *writeDocs != "") {
		return errors.New("screen: picks some of the screens of --screens, and the docs take them all (no --write-docs)")
	}
	if *screens {
		if o.url != "" || *hotspots || *convergence || o.throughput > 0 {
			return errors.New("screens: starts its own shops with shop serve's defaults; no --url, --hotspots, --convergence or --throughput")
		}
		o.screensDefaults(given)
		rep, err := runScreens(ctx, o)
		if err != nil {
			return err
		}
		rep.Command = strings.TrimSpace("go run ./cmd/shop bench " + strings.Join(args, " "))
		return report.Write(stdout, rep, report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs},
			"bench screens", func(w io.Writer) { writeScreensMarkdown(w, rep) }, func(w io.Writer) { writeScreensText(w, rep) })
	}
	if *convergence {
		if o.url != "" || len(o.revisions) > 0 || *hotspots {
			return errors.New("convergence: starts its own shops; no --url, --revisions or --hotspots")
		}
		if !given["products"] {
			o.products = convergenceProducts
		}
		if !given["users"] {
			o.users = convergenceUsers
		}
		if !given["reviews"] {
			o.reviews = convergenceReviews
		}
		rep, err := runConvergence(ctx, o)
		if err != nil {
			return err
		}
		rep.Command = strings.TrimSpace("go run ./cmd/shop bench " + strings.Join(args, " "))
		return report.Write(stdout, rep, report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs},
			"bench convergence", func(w io.Writer) { writeConvergenceMarkdown(w, rep) }, func(w io.Writer) { writeConvergenceText(w, rep) })
	}
	if *hotspots {
		if o.url != "" || len(o.revisions) > 0 {
			return errors.New("hotspots: starts its own shops; no --url or --revisions")
		}
		rep, err := runHotspots(ctx, o)
		if err != nil {
			return err
		}
		rep.Command = strings.TrimSpace("go run ./cmd/shop bench " + strings.Join(args, " "))
		return report.Write(stdout, rep, report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs},
			"bench hotspots", func(w io.Writer) { writeHotspotsMarkdown(w, rep) }, func(w io.Writer) { writeHotspotsText(w, rep) })
	}
	rep, err := runBench(ctx, o)
	if err != nil {
		return err
	}
	rep.Command = strings.TrimSpace("go run ./cmd/shop bench " + strings.Join(args, " "))
	return report.Write(stdout, rep, report.Output{JSON: *jsonOut, Markdown: *markdown, Docs: *writeDocs},
		"bench", func(w io.Writer) { writeBenchMarkdown(w, rep) }, func(w io.Writer) { writeBenchText(w, rep) })
}

// screensDefaults sets what --screens runs with in place of the flags
// that were not given.
func (o *benchOptions) screensDefaults(given map[string]bool) {
	for _, d := range []struct {
		flag string
		set  func()
	}{
		{"products", func() { o.products = screensProducts }},
		{"reviews", func() { o.reviews = screensReviews }},
		{"users", func() { o.users = screensUsers }},
		{"rate", func() { o.rate = screensRate }},
		{"duration", func() { o.duration = screensDuration }},
		{"closed-loop", func() { o.closedTime = screensRound }},
	} {
		if !given[d.flag] {
			d.set()
		}
	}
}

// shopBinary is the shop binary the bench starts: --shop, or this
// program.
func (o benchOptions) shopBinary() (string, error) {
	if o.shopBin != "" {
		return o.shopBin, nil
	}
	return os.Executable()
}

func (o benchOptions) validate() error {
	switch {
	case o.rate < 1 || o.rate > maxBenchRate || o.mixRate < 1 || o.mixRate > maxBenchRate:
		return fmt.Errorf("rate and mix-rate: want 1 to %d requests per second, got %d and %d", maxBenchRate, o.rate, o.mixRate)
	case o.duration <= 0 || o.duration > maxBenchDuration:
		return fmt.Errorf("duration: want more than 0 and at most %s, got %s", maxBenchDuration, o.duration)
	case o.rampStep <= 0 || o.rampStep > 10*time.Second:
		return fmt.Errorf("ramp-step: want more than 0 and at most 10s, got %s", o.rampStep)
	case o.closedTime <= 0 || o.closedTime > 10*time.Second:
		return fmt.Errorf("closed-loop: want more than 0 and at most 10s, got %s", o.closedTime)
	case o.rampFrom < 1 || o.rampMax < o.rampFrom || o.rampMax > maxBenchRate:
		return fmt.Errorf("ramp: want 1 <= ramp-from <= ramp-max <= %d", maxBenchRate)
	case o.workers < 1 || o.workers > 256:
		return fmt.Errorf("clients: want 1 to 256, got %d", o.workers)
	case o.flashBuyers < 0 || o.flashBuyers > 5000 || o.flashUnits < 0 || o.flashUnits > 1_000_000:
		return errors.New("flash-buyers: want 0 to 5000; flash-units: 0 to 1000000")
	case o.products < 1 || o.users < 0 || o.reviews < 0:
		return errors.New("products must be at least 1, users and reviews at least 0")
	case len(o.revisions) > 4:
		return errors.New("revisions: at most 4")
	case o.url != "" && (len(o.revisions) > 0 || o.shopBin != ""):
		return errors.New("url: a shop already running cannot be measured beside --revisions or --shop")
	case o.throughput < 0 || o.throughput > maxPartitionThroughput*benchPartitions:
		return fmt.Errorf("throughput: want 0 (unlimited) to %d RU/s, %d per each of the %d partitions, got %d", maxPartitionThroughput*benchPartitions, maxPartitionThroughput, benchPartitions, o.throughput)
	case o.url != "" && o.throughput > 0:
		return errors.New("throughput: sets SHOP_THROUGHPUT of the shop the bench starts; a shop at --url has its own")
	}
	if o.url != "" {
		return checkLoopback(o.url)
	}
	return nil
}

// checkLoopback refuses any target but this machine: a load generator
// pointed elsewhere is an attack, not a benchmark.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url: want http://127.0.0.1:PORT or http://localhost:PORT, got %q", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("url: %q is not a loopback address; shop bench only loads this machine (127.0.0.1, ::1, localhost)", host)
}
