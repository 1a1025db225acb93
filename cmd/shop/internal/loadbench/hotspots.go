package loadbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// `shop bench --hotspots` measures the read hot spots of this design on a
// throttled store, before and after the read cache: the home page (ONE
// categories document), the most populous category's page (one
// /categoryId partition) and a product page (one product document), each
// driven at full speed by wrk, and one user's cart writes, which no cache
// can take. Each load runs against a shop started with the cache off,
// then against one with it on (SHOP_CACHE), both at the same provisioned
// throughput (SHOP_THROUGHPUT) on the sample catalog.

// hotspotsReport is what `shop bench --hotspots` measured.
type hotspotsReport struct {
	Machine    report.Machine `json:"machine"`
	Command    string         `json:"command"`
	Target     string         `json:"target"`
	Throughput int            `json:"throughput"`
	Partitions int            `json:"partitions"`
	// Load is wrk's command line; each load runs Duration, after a pause
	// that lets the partitions' budgets refill.
	Load     string        `json:"load"`
	Duration string        `json:"duration"`
	Runs     []hotspotRun  `json:"runs"`
	Goals    []report.Goal `json:"goals"`
}

// hotspotRun is one load against one shop.
type hotspotRun struct {
	Load  string `json:"load"`
	Path  string `json:"path"`
	Cache bool   `json:"cache"`
	// Requests wrk completed, OK the 2xx among them, Throttled the 503s
	// and RetryAfter the 503s that carried Retry-After; Other the rest.
	Requests   int64   `json:"requests"`
	RPS        float64 `json:"rps"`
	OK         int64   `json:"ok"`
	Throttled  int64   `json:"throttled"`
	RetryAfter int64   `json:"retryAfter"`
	Other      int64   `json:"other"`
	P99Millis  float64 `json:"p99Millis"`
	// Hottest is the physical partition that spent the most RU/s during
	// the load (GET /v1/admin/throughput before and after), Partitions
	// every one that spent or refused something.
	Hottest    partitionUsage   `json:"hottest"`
	Partitions []partitionUsage `json:"partitions"`
}

// spent is what the partition of container c named p spent during the
// run (zero when it spent nothing).
func (r hotspotRun) spent(c, p string) partitionUsage {
	for _, u := range r.Partitions {
		if u.Container == c && u.Partition == p {
			return u
		}
	}
	return partitionUsage{Container: c, Partition: p}
}

// successRate is the share of the requests answered 2xx, in percent.
func (r hotspotRun) successRate() float64 {
	if r.Requests == 0 {
		return 0
	}
	return report.Round2(100 * float64(r.OK) / float64(r.Requests))
}

// Bounds of the hot spot loads: a few seconds each, 8 runs in all.
const (
	hotspotConns         = 16
	defaultHotThroughput = 400
	hotspotPause         = 2 * time.Second
)

// runHotspots runs the loads against a shop with the cache off, then one
// with it on.
func runHotspots(ctx context.Context, o benchOptions) (hotspotsReport, error) {
	wrk := findWrk()
	if wrk == "" {
		return hotspotsReport{}, errors.New("shop bench --hotspots loads the shop with wrk, which is not on PATH")
	}
	bin, err := o.shopBinary()
	if err != nil {
		return hotspotsReport{}, err
	}
	throughput := o.throughput
	if throughput == 0 {
		throughput = defaultHotThroughput
	}
	round := max(o.duration, time.Second).Round(time.Second)
	rep := hotspotsReport{
		Machine: report.ThisMachine(), Throughput: throughput, Partitions: benchPartitions,
		Target: fmt.Sprintf("shop serve in a process of its own on the sample catalog (embedded store, %d simulated physical partitions, %d RU/s per container, feed workers)",
			benchPartitions, throughput),
		Load:     fmt.Sprintf("wrk -t%d -c%d -d%s --latency -s counts.lua URL", wrkThreads, hotspotConns, round),
		Duration: round.String(),
	}
	for _, cache := range []bool{false, true} {
		runs, err := hotspotLoads(ctx, wrk, bin, throughput, cache, round)
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, runs...)
	}
	rep.Goals = hotspotGoals(rep.Runs)
	return rep, nil
}

// hotspotLoads starts one shop and runs the four loads against it.
func hotspotLoads(ctx context.Context, wrk, bin string, throughput int, cache bool, round time.Duration) ([]hotspotRun, error) {
	dir, err := os.MkdirTemp("", "shop-hotspots-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	child, err := startChild(ctx, fmt.Sprintf("shop (cache %v)", cache), bin, dir, map[string]string{
		"SHOP_THROUGHPUT": strconv.Itoa(throughput),
		"SHOP_CACHE":      strconv.FormatBool(cache),
	})
	if err != nil {
		return nil, err
	}
	defer child.stop()
	c, err := newBenchClient(child.url)
	if err != nil {
		return nil, err
	}
	if err := waitCaughtUp(ctx, c, time.Minute); err != nil {
		return nil, err
	}
	category, product, err := hotTargets(ctx, c)
	if err != nil {
		return nil, err
	}
	buyer, err := c.token(ctx, "hot-buyer")
	if err != nil {
		return nil, err
	}
	loads := []struct{ name, path, script string }{
		{"home page", "/v1/categories", countsScript("GET", "", "")},
		{"category page", "/v1/categories/" + category + "/products", countsScript("GET", "", "")},
		{"product page", "/v1/products/" + product, countsScript("GET", "", "")},
		{"cart writes, one user", "/v1/cart/items/" + product, countsScript("PUT", buyer, `{"quantity":1}`)},
	}
	var runs []hotspotRun
	for _, l := range loads {
		script := filepath.Join(dir, "counts.lua")
		if err := os.WriteFile(script, []byte(l.script), 0o600); err != nil {
			return nil, err
		}
		// The budgets refill, and a run's debt is paid, before the next.
		time.Sleep(hotspotPause)
		before, err := c.throughput(ctx)
		if err != nil {
			return nil, err
		}
		out, err := wrkCounts(ctx, wrk, child.url+l.path, script, round)
		if err != nil {
			return nil, err
		}
		after, err := c.throughput(ctx)
		if err != nil {
			return nil, err
		}
		out.Load, out.Path, out.Cache = l.name, l.path, cache
		out.Partitions = partitionsDuring(before, after)
		for _, p := range out.Partitions {
			if p.RUPerSecond > out.Hottest.RUPerSecond {
				out.Hottest = p
			}
		}
		runs = append(runs, out)
		if err := child.alive(); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// hotTargets picks the most populous category and the first product of
// its page: the popular category and product of the loads.
func hotTargets(ctx context.Context, c benchClient) (category, product string, err error) {
	cats, err := call(ctx, func() (*client.ListCategoriesResponse, error) {
		return c.api.ListCategoriesWithResponse(ctx)
	})
	if err != nil {
		return "", "", fmt.Errorf("categories: %w", err)
	}
	most := -1
	for _, cat := range cats.JSON200.Items {
		if cat.ProductCount > most {
			category, most = cat.ID, cat.ProductCount
		}
	}
	page, err := call(ctx, func() (*client.ListCategoryProductsResponse, error) {
		return c.api.ListCategoryProductsWithResponse(ctx, category, nil)
	})
	if err != nil {
		return "", "", fmt.Errorf("category %s: %w", category, err)
	}
	if len(page.JSON200.Items) == 0 {
		return "", "", fmt.Errorf("category %q lists no product", category)
	}
	return category, page.JSON200.Items[0].ID, nil
}

// countsScript is wrk's script of a load: the request (a method, a token,
// a JSON body), and a count of each status and of the 503s carrying
// Retry-After, per thread, printed by done with the 99th percentile.
func countsScript(method, token, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %q\n", method)
	if body != "" {
		fmt.Fprintf(&b, "wrk.body = %q\nwrk.headers[\"Content-Type\"] = \"application/json\"\n", body)
	}
	if token != "" {
		fmt.Fprintf(&b, "wrk.headers[\"Authorization\"] = %q\n", "Bearer "+token)
	}
	b.WriteString(`statuses = {}
retry_after = 0
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 503 and (headers["Retry-After"] or headers["retry-after"]) then
    retry_after = retry_after + 1
  end
end
threads = {}
function setup(thread)
  table.insert(threads, thread)
end
function done(summary, latency, requests)
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("statuses")) do
      io.write(string.format("status %d %d\n", status, n))
    end
    io.write(string.format("retry-after %d\n", t:get("retry_after")))
  end
  io.write(string.format("p99-us %d\n", latency:percentile(99)))
end
`)
	return b.String()
}

// wrkCounts runs wrk with the counting script on url for d.
func wrkCounts(ctx context.Context, wrk, url, script string, d time.Duration) (hotspotRun, error) {
	cmd := exec.CommandContext(ctx, wrk, "-t"+strconv.Itoa(wrkThreads), "-c"+strconv.Itoa(hotspotConns),
		"-d"+strconv.Itoa(int(d.Seconds()))+"s", "--latency", "-s", script, url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return hotspotRun{}, fmt.Errorf("wrk: %w: %s", err, out.String())
	}
	return parseCounts(out.String())
}

// parseCounts reads wrk's report and what countsScript's done printed.
func parseCounts(out string) (hotspotRun, error) {
	w, err := parseWrk(out)
	if err != nil {
		return hotspotRun{}, err
	}
	r := hotspotRun{Requests: w.requests, RPS: report.Round2(w.rps)}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "status":
			status, _ := strconv.Atoi(f[1])
			n, _ := strconv.ParseInt(f[2], 10, 64)
			switch {
			case status >= 200 && status < 300:
				r.OK += n
			case status == http.StatusServiceUnavailable:
				r.Throttled += n
			default:
				r.Other += n
			}
		case len(f) == 2 && f[0] == "retry-after":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			r.RetryAfter += n
		case len(f) == 2 && f[0] == "p99-us":
			us, _ := strconv.ParseFloat(f[1], 64)
			r.P99Millis = report.Round2(us / 1000)
		}
	}
	return r, nil
}

// hotspotGoals are the acceptance: with the cache, the home page
// and the category page answer 200 every time; one user's cart writes
// are throttled, every 503 with Retry-After.
func hotspotGoals(runs []hotspotRun) []report.Goal {
	var goals []report.Goal
	for _, r := range runs {
		switch {
		case r.Cache && (r.Load == "home page" || r.Load == "category page"):
			goals = append(goals, report.Goal{Name: r.Load + " with the cache, at full speed", Want: "100% answered 200",
				Got: r.successRate(), Unit: "%", Met: r.Requests > 0 && r.OK == r.Requests})
		case r.Cache && r.Load == "cart writes, one user":
			goals = append(goals, report.Goal{Name: "one user's cart writes at full speed", Want: "503s, each with Retry-After",
				Got: float64(r.Throttled), Unit: "503s", Met: r.Throttled > 0 && r.RetryAfter == r.Throttled})
		}
	}
	return goals
}
