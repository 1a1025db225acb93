package loadbench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"shop/cmd/shop/internal/progress"
	"shop/cmd/shop/internal/report"
)

// memSample is the process's resident memory, from /proc/self/status.
type memSample struct {
	RSSKB int64 // VmRSS: resident now
	HWMKB int64 // VmHWM: the peak so far
}

func readMem() memSample {
	var m memSample
	f, err := os.Open("/proc/self/status")
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
		}
	}
	return m
}

func mb(kb int64) float64 { return report.Round2(float64(kb) / 1024) }

// memoryReport is the resident memory of the bench process, which holds
// the shop (in process) and the load generator.
type memoryReport struct {
	InProcess bool `json:"inProcess"`
	Products  int  `json:"products"`
	Users     int  `json:"users"`
	// LoadedMB: data loaded, feed workers caught up, after a GC.
	LoadedMB float64 `json:"loadedMb"`
	// PeakServingMB: the highest VmRSS sampled while the runs went on.
	PeakServingMB float64 `json:"peakServingMb"`
	Note          string  `json:"note"`
}

// rssSampler records the peak resident memory while the runs go on
// (VmHWM would include the data loading, which is not serving).
type rssSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak int64
}

func startRSSSampler() *rssSampler {
	s := &rssSampler{stop: make(chan struct{})}
	s.done.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			s.peak = max(s.peak, readMem().RSSKB)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	})
	return s
}

func (s *rssSampler) Stop() int64 {
	close(s.stop)
	s.done.Wait()
	return s.peak
}

// serveBaseline serves body from a bare net/http handler on 127.0.0.1:
// what the machine does for the same bytes without the shop in the way.
func serveBaseline(body []byte) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// benchSegments is how many turns the product page and the baseline take
// when they are compared (see alternate).
const benchSegments = 4

// The comparison through wrk: rounds of each side, of --closed-loop each,
// with as many connections as the measurement (wrk -t2 -c32).
const (
	wrkRounds      = 2
	wrkConnections = 32
)

// runBench prepares the target, then runs, in order: the mix at the
// constant rate; the product page and the baseline at the same rate; both
// in a closed loop (throughput); the product page ramp.
func runBench(ctx context.Context, o benchOptions) (benchReport, error) {
	rep := benchReport{Machine: report.ThisMachine()}
	start := time.Now()
	shop := &benchShop{
		url: strings.TrimRight(o.url, "/"), desc: "shop at " + o.url, close: func() {},
		settle: func(context.Context) error { return nil },
	}
	if o.url == "" {
		runtime.GC()
		var err error
		if shop, err = startBenchShop(ctx, o, progress.OnStderr("loading the sample data")); err != nil {
			return rep, err
		}
		runtime.GC()
		debug.FreeOSMemory()
		shop.loaded = readMem()
	}
	defer shop.close()
	rep.Target, rep.DataSet = shop.desc, shop.dataSet
	if rep.DataSet == "" {
		rep.DataSet = "whatever the shop at " + o.url + " holds"
	}

	client := benchClient{base: shop.url, http: &http.Client{Timeout: 10 * time.Second}}
	cat, err := client.discover(ctx)
	if err != nil {
		return rep, err
	}
	runID := make([]byte, 4)
	_, _ = rand.Read(runID)
	hits := int(float64(o.mixRate)*o.duration.Seconds()) + 1
	mix, err := prepareMix(ctx, client, cat, hits, hex.EncodeToString(runID))
	if err != nil {
		return rep, fmt.Errorf("preparing the mix: %w", err)
	}
	baseURL, closeBaseline, err := serveBaseline(cat.productBody)
	if err != nil {
		return rep, err
	}
	defer closeBaseline()

	rep.SetupTime = time.Since(start).Round(time.Millisecond).String()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return rep, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return rep, err
		}
		defer pprof.StopCPUProfile()
	}
	sampler := startRSSSampler()
	constant := func(name string, rate int) load { return load{name: name, rate: rate, duration: o.duration} }
	closed := func(name string) load { return load{name: name, clients: o.workers, duration: o.closedTime} }
	rep.Mix, rep.MixByKind = attack(ctx, constant("mix", o.mixRate), mix.targeter(), kindOf)
	// Let the mix's leftovers finish before the next run: requests whose
	// client timed out, and the feed workers' work after the checkouts
	// (cart resets, the ordersByStatus view).
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	const baselineName = "baseline (bare net/http, same bytes)"
	rep.ProductPage, rep.Baseline = alternate(ctx, benchSegments,
		constant("product page", o.rate), constant(baselineName, o.rate),
		productTarget(shop.url, cat.products), productTarget(baseURL, cat.products[:1]))
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	rep.ProductClosed, rep.BaselineClosed = alternate(ctx, benchSegments,
		closed("product page"), closed(baselineName),
		productTarget(shop.url, cat.products), productTarget(baseURL, cat.products[:1]))
	if rep.BaselineClosed.Throughput > 0 {
		rep.ThroughputRatio = report.Round2(rep.ProductClosed.Throughput / rep.BaselineClosed.Throughput)
	}
	rep.Generator = "vegeta (in process)"
	if wrk := findWrk(); wrk != "" {
		if err := shop.settle(ctx); err != nil {
			return rep, err
		}
		page := "/v1/products/" + url.PathEscape(cat.products[0])
		ext, err := runExternal(ctx, wrk, shop.url+page, baseURL+page, wrkConnections, wrkRounds, wrkRounds*o.closedTime)
		if err != nil {
			return rep, err
		}
		rep.External, rep.Generator = &ext, ext.Generator
	}
	if err := shop.settle(ctx); err != nil {
		return rep, err
	}
	rep.Ramp, rep.MaxSustainableRate, rep.RampStopped = ramp(ctx, o, "product page", func() vegeta.Targeter {
		return productTarget(shop.url, cat.products)
	})
	if o.flashBuyers > 0 {
		if err := shop.settle(ctx); err != nil {
			return rep, err
		}
		f, err := runFlashSale(ctx, client, cat, o.flashBuyers, o.flashUnits, hex.EncodeToString(runID))
		if err != nil {
			return rep, fmt.Errorf("flash sale: %w", err)
		}
		rep.FlashSale = &f
	}
	peak := sampler.Stop()
	if err := ctx.Err(); err != nil {
		return rep, err
	}

	rep.Memory = memoryReport{InProcess: o.url == "", Products: o.products, Users: o.users}
	if rep.Memory.InProcess {
		rep.Memory.LoadedMB, rep.Memory.PeakServingMB = mb(shop.loaded.RSSKB), mb(peak)
		rep.Memory.Note = "VmRSS of the bench process, which holds the shop, the mapped pages of its bbolt file and, while serving, the load generator and its requests in flight"
	} else {
		rep.Memory.Products, rep.Memory.Users = 0, 0
		rep.Memory.Note = "not measured: the shop runs in another process"
	}
	rep.Goals = benchGoals(o, rep)
	return rep, nil
}

// benchGoals are the targets for the HTTP path.
func benchGoals(o benchOptions, rep benchReport) []report.Goal {
	ratio := report.Goal{
		Name: "product page throughput / bare-handler baseline (closed loop, same run, in-process generator)",
		Want: ">= 0.5", Got: rep.ThroughputRatio, Met: rep.ThroughputRatio >= 0.5,
	}
	if e := rep.External; e != nil {
		ratio = report.Goal{
			Name: "product page throughput / bare-handler baseline (" + e.Generator + ", same run)",
			Want: ">= 0.5", Got: e.Ratio, Met: e.Ratio >= 0.5 && e.Errors == 0,
		}
	}
	goals := []report.Goal{ratio, {
		Name: fmt.Sprintf("product page p99 at %d requests/s", o.rate),
		Want: "< 5 ms", Got: rep.ProductPage.P99Ms, Unit: " ms",
		Met: rep.ProductPage.P99Ms < 5 && rep.ProductPage.Success == 1,
	}}
	if f := rep.FlashSale; f != nil {
		sold := min(f.Buyers, f.Units)
		goals = append(goals, report.Goal{
			Name: fmt.Sprintf("flash sale of %d units to %d buyers: units sold (201s), never more, the rest refused out of stock, the count left = units − sold", f.Units, f.Buyers),
			Want: fmt.Sprintf("= %d", sold), Got: float64(f.Created),
			Met: f.Created == sold && f.Refused == f.Buyers-sold && f.AvailableAfter == int64(f.Units-sold),
		})
	}
	if rep.Memory.InProcess && o.products >= 10000 && o.users >= 10000 {
		// Measured before the load starts: once the runs begin, the same
		// process also holds the load generator (reported apart).
		goals = append(goals, report.Goal{
			Name: fmt.Sprintf("resident memory with %d products and %d open carts loaded, shop ready", o.products, o.users),
			Want: "< 150 MB", Got: rep.Memory.LoadedMB, Unit: " MB", Met: rep.Memory.LoadedMB < 150,
		})
	}
	return goals
}
