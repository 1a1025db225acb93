package loadbench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/reference-shop/shop/cmd/shop/internal/progress"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// memSample is a process's resident memory, from /proc/PID/status.
type memSample struct {
	RSSKB  int64 // VmRSS: resident now
	HWMKB  int64 // VmHWM: the peak so far
	AnonKB int64 // RssAnon: resident now, not backed by a file (the heap)
	FileKB int64 // RssFile: resident now, pages of mapped files (bbolt's)
}

func readMemOf(path string) memSample {
	var m memSample
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			m.RSSKB = n
		case "VmHWM":
			m.HWMKB = n
		case "RssAnon":
			m.AnonKB = n
		case "RssFile":
			m.FileKB = n
		}
	}
	return m
}

func mb(kb int64) float64 { return report.Round2(float64(kb) / 1024) }

// memoryReport is the resident memory of the shop's process.
type memoryReport struct {
	Measured bool `json:"measured"`
	Products int  `json:"products"`
	Users    int  `json:"users"`
	// ReadyMB: data loaded, feed workers caught up, before any load;
	// ReadyAnonMB the part of it that is not bbolt's mapped file.
	ReadyMB     float64 `json:"readyMb"`
	ReadyAnonMB float64 `json:"readyAnonMb"`
	// PeakMB: the highest resident memory of the process's whole life
	// (VmHWM), read once every run is over; PeakAnonMB the highest part of
	// it not backed by bbolt's file, sampled every 50 ms.
	PeakMB     float64 `json:"peakMb"`
	PeakAnonMB float64 `json:"peakAnonMb"`
	// ServingMB and ServingAnonMB are the same peaks sampled over the
	// runs at the goals' loads only (the mix, the product page at its
	// constant rate, the throughput rounds), before the ramp drives the
	// shop past what it can serve and the flash sale's burst.
	ServingMB     float64 `json:"servingMb"`
	ServingAnonMB float64 `json:"servingAnonMb"`
	// FileMB is the size of the store's file, which bbolt maps whole: the
	// pages a run touches count as resident.
	FileMB float64 `json:"fileMb"`
	Note   string  `json:"note"`
}

// serveBaseline serves body with its Content-Type from a bare net/http
// handler on 127.0.0.1, whatever the path: what the machine does for the
// same bytes without the shop in the way.
func serveBaseline(body []byte, contentType string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// benchSegments is how many turns the product page and the baseline take
// when they are compared at a constant rate (see alternate).
const benchSegments = 4

// The comparison through wrk: rounds of each target, of --closed-loop
// each, with as many connections as the measurement (wrk -t2
// -c32).
const (
	wrkRounds      = 3
	wrkConnections = 32
)

// benchProduct is the product page the comparisons load when the shop
// has it: the default sample's product with the most reviews (a full
// page); a larger sample's ids have more digits.
const benchProduct = "p-0147"

// runBench starts the shops (this build, and each --revisions one), then
// runs, in order: the mix at its constant rate; the product page and the
// baseline at the same constant rate; the throughput comparison (wrk, or
// without it a closed loop); the product page ramp; the flash sale.
func runBench(ctx context.Context, o benchOptions) (benchReport, error) {
	rep := benchReport{Machine: report.ThisMachine()}
	start := time.Now()
	shops, revs, startRevisions, closeShops, err := startShops(ctx, o)
	if err != nil {
		return rep, err
	}
	defer closeShops()
	shop := shops[0]
	rep.Target, rep.DataSet, rep.Revisions = shop.desc, shop.dataSet, revs
	if rep.DataSet == "" {
		rep.DataSet = "whatever the shop at " + o.url + " holds"
	}
	var sampler *memSampler
	if shop.child != nil {
		ready := shop.child.mem()
		rep.Memory = memoryReport{Measured: true, Products: o.products, Users: o.users,
			ReadyMB: mb(ready.RSSKB), ReadyAnonMB: mb(ready.AnonKB), FileMB: mb(shop.fileKB)}
		sampler = sampleMem(shop.child, 50*time.Millisecond)
		defer sampler.Stop()
	}

	calls, err := newBenchClient(shop.url)
	if err != nil {
		return rep, err
	}
	cat, err := calls.discover(ctx)
	if err != nil {
		return rep, err
	}
	runID := make([]byte, 4)
	_, _ = rand.Read(runID)
	hits := int(float64(o.mixRate)*o.duration.Seconds()) + 1
	mix, err := prepareMix(ctx, calls, cat, hits, hex.EncodeToString(runID))
	if err != nil {
		return rep, fmt.Errorf("preparing the mix: %w", err)
	}
	page := "/v1/products/" + url.PathEscape(cat.page)
	rep.Page, rep.PageBytes = page, len(cat.productBody)
	baseURL, closeBaseline, err := serveBaseline(cat.productBody, cat.productType)
	if err != nil {
		return rep, err
	}
	defer closeBaseline()
	// The product pages' URLs, built once: the runs only pick one.
	shopPages, err := productURLs(shop.url, cat.products)
	if err != nil {
		return rep, err
	}
	basePages, err := productURLs(baseURL, cat.products[:1])
	if err != nil {
		return rep, err
	}
	rep.SetupTime = time.Since(start).Round(time.Millisecond).String()

	constant := func(name string, rate int) load { return load{name: name, rate: rate, duration: o.duration} }
	var before throughputSnapshot
	if o.throughput > 0 {
		if before, err = calls.throughput(ctx); err != nil {
			return rep, err
		}
	}
	// The mix starts on a quiet shop: nothing of its preparation (the
	// buyers' carts) still in the feed workers' hands.
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	rep.Mix, rep.MixByKind = attack(ctx, constant("mix", o.mixRate), mix.targeter(), kindOf)
	if o.throughput > 0 {
		after, err := calls.throughput(ctx)
		if err != nil {
			return rep, err
		}
		rep.Throughput, rep.MixPartitions = o.throughput, partitionsDuring(before, after)
	}
	// Let the mix's leftovers finish before the next run: the feed
	// workers' work after the checkouts (cart resets, the ordersByStatus
	// view).
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	const baselineName = "baseline (bare net/http, same bytes)"
	rep.ProductPage, rep.Baseline = alternate(ctx, benchSegments,
		constant("product page", o.rate), constant(baselineName, o.rate),
		productTarget(shopPages), productTarget(basePages))
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	if wrk := findWrk(); wrk != "" {
		// The other builds run only for these rounds: idle, each would
		// still share the CPUs with the runs at a constant rate.
		others, closeOthers, err := startRevisions(ctx)
		if err != nil {
			return rep, err
		}
		defer closeOthers()
		var targets []wrkTarget
		for _, s := range append(shops, others...) {
			targets = append(targets, wrkTarget{name: s.name, url: s.url + page, child: s.child})
		}
		targets = append(targets, wrkTarget{name: baselineName, url: baseURL + page})
		// wrk counts whole seconds.
		round := max(o.closedTime, time.Second).Round(time.Second)
		ext, err := runExternal(ctx, wrk, targets, wrkConnections, wrkRounds, round)
		if err != nil {
			return rep, err
		}
		if err := profileTargets(ctx, wrk, targets, &ext, wrkConnections, round); err != nil {
			return rep, err
		}
		closeOthers()
		rep.External, rep.Generator = &ext, ext.Generator
		if o.cpuProfile != "" && shop.child != nil && shop.child.pprof != "" {
			if err := saveProfile(ctx, wrk, shop, page, o.cpuProfile, round); err != nil {
				return rep, err
			}
		}
	} else {
		// Without wrk, a closed loop of clients from this process (which
		// is not the shop's): the comparison the goal then reads.
		closed := func(name string) load { return load{name: name, clients: o.workers, duration: o.closedTime} }
		pc, bc := alternate(ctx, benchSegments, closed("product page"), closed(baselineName),
			productTarget(shopPages), productTarget(basePages))
		rep.ProductClosed, rep.BaselineClosed = &pc, &bc
		if bc.Throughput > 0 {
			rep.ThroughputRatio = report.Round2(pc.Throughput / bc.Throughput)
		}
		rep.Generator = "vegeta, closed loop, in the bench's process"
	}
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	if sampler != nil {
		rss, anon := sampler.peaks()
		rep.Memory.ServingMB, rep.Memory.ServingAnonMB = mb(rss), mb(anon)
	}
	rep.Ramp, rep.MaxSustainableRate, rep.RampStopped = ramp(ctx, o, "product page", func() vegeta.Targeter {
		return productTarget(shopPages)
	})
	if o.flashBuyers > 0 {
		if err := shop.settle(ctx); err != nil {
			return rep, err
		}
		f, err := runFlashSale(ctx, calls, cat, o.flashBuyers, o.flashUnits, hex.EncodeToString(runID))
		if err != nil {
			return rep, fmt.Errorf("flash sale: %w", err)
		}
		rep.FlashSale = &f
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if shop.child != nil {
		if err := shop.child.alive(); err != nil {
			return rep, err
		}
		sampler.Stop()
		// The kernel's counters are approximate: a sample may pass VmHWM.
		rss, anon := sampler.peaks()
		rep.Memory.PeakMB, rep.Memory.PeakAnonMB = mb(max(shop.child.mem().HWMKB, rss)), mb(anon)
		rep.Memory.Note = "the shop's process alone (VmRSS and VmHWM from /proc), bbolt's mapped file pages included; the load generators run in other processes"
	} else {
		rep.Memory.Note = "not measured: the shop at --url is not a process this bench started"
	}
	rep.Goals = benchGoals(o, rep)
	return rep, nil
}

// startShops starts the shop under test (this program, or --shop) and
// builds one shop per --revisions revision; startRevisions starts those,
// each on its own copy of the same data, and returns a function that stops
// them. With --url, the shop already running there instead.
func startShops(ctx context.Context, o benchOptions) (shops []*benchShop, revs []revision,
	startRevisions func(context.Context) ([]*benchShop, func(), error), closeAll func(), err error) {
	none := func(context.Context) ([]*benchShop, func(), error) { return nil, func() {}, nil }
	if o.url != "" {
		u := strings.TrimRight(o.url, "/")
		calls, err := newBenchClient(u)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		// In dev mode, as --url requires: its feed status is readable.
		settle := func(ctx context.Context) error { return waitCaughtUp(ctx, calls, time.Minute) }
		return []*benchShop{{name: "shop at " + u, url: u, desc: "shop at " + u, close: func() {},
			settle: settle}}, nil, none, func() {}, nil
	}
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	bin, err := o.shopBinary()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	revs, removeRevs, err := buildRevisions(ctx, o.revisions)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	closers = append(closers, removeRevs)
	data, err := prepareBenchData(ctx, o, progress.OnStderr("loading the sample data"))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	closers = append(closers, func() { _ = os.RemoveAll(data.dir) })
	shop, err := startBenchShop(ctx, "this build", bin, data, o.throughput)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	closers = append(closers, shop.close)
	startRevisions = func(ctx context.Context) ([]*benchShop, func(), error) {
		var started []*benchShop
		var once sync.Once
		stop := func() {
			once.Do(func() {
				for _, s := range started {
					s.close()
				}
			})
		}
		for _, r := range revs {
			s, err := startBenchShop(ctx, "revision "+r.Rev, r.bin, data, o.throughput)
			if err != nil {
				stop()
				return nil, nil, fmt.Errorf("revision %s: %w", r.Rev, err)
			}
			started = append(started, s)
		}
		return started, stop, nil
	}
	return []*benchShop{shop}, revs, startRevisions, closeAll, nil
}

// saveProfile writes a CPU profile of the shop under one more wrk round
// of its product page to --cpuprofile (go tool pprof reads it).
func saveProfile(ctx context.Context, wrk string, shop *benchShop, page, path string, round time.Duration) error {
	p, err := profileDuring(ctx, wrk, wrkTarget{name: shop.name, url: shop.url + page, child: shop.child}, wrkConnections, round)
	if err != nil {
		return err
	}
	return writeProfile(p, path)
}

// writeProfile writes p to path, as go tool pprof reads it.
func writeProfile(p *profile.Profile, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(p.Write(f), f.Close())
}

// benchGoals are the targets of the HTTP path.
func benchGoals(o benchOptions, rep benchReport) []report.Goal {
	ratio := report.Goal{
		Name: "product page throughput / bare-handler baseline (" + rep.Generator + ", same run)",
		Want: ">= 0.5", Got: rep.ThroughputRatio, Met: rep.ThroughputRatio >= 0.5,
	}
	if e := rep.External; e != nil {
		got := e.Targets[0].Ratio
		ratio = report.Goal{
			Name: "product page throughput / bare-handler baseline (" + e.Generator + ", same run)",
			Want: ">= 0.5", Got: got, Met: got >= 0.5 && e.Errors == 0,
		}
	}
	goals := []report.Goal{ratio, {
		Name: fmt.Sprintf("product page p99 at a constant %d requests/s, every request answered 200", o.rate),
		Want: "< 5 ms", Got: rep.ProductPage.P99Ms, Unit: " ms",
		Met: rep.ProductPage.P99Ms < 5 && rep.ProductPage.Success == 1,
	}, {
		Name: fmt.Sprintf("mixed workload p99 at a constant %d requests/s, every request answered 2xx", o.mixRate),
		Want: "< 10 ms", Got: rep.Mix.P99Ms, Unit: " ms",
		Met: rep.Mix.P99Ms < 10 && rep.Mix.Success == 1,
	}}
	if f := rep.FlashSale; f != nil {
		sold := min(f.Buyers, f.Units)
		goals = append(goals, report.Goal{
			Name: fmt.Sprintf("flash sale of %d units to %d buyers: units sold (201s), never more, the rest refused out of stock, the count left = units − sold", f.Units, f.Buyers),
			Want: fmt.Sprintf("= %d", sold), Got: float64(f.Created),
			Met: f.Created == sold && f.Refused == f.Buyers-sold && f.AvailableAfter == int64(f.Units-sold),
		})
	}
	if rep.Memory.Measured && o.products >= 10000 && o.users >= 10000 {
		goals = append(goals, report.Goal{
			Name: fmt.Sprintf("the shop's peak resident memory with %d products and %d open carts, serving the goals' loads (bbolt's mapped pages included)", o.products, o.users),
			Want: "< 150 MB", Got: rep.Memory.ServingMB, Unit: " MB", Met: rep.Memory.ServingMB < 150,
		})
	}
	return goals
}
