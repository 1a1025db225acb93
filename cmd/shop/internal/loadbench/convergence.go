package loadbench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/progress"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// `shop bench --convergence` measures, from outside, how long the copies
// the feeds keep take to catch up after a burst of writes that fans out
// (convergence_burst.go): the time from the burst's last write until GET
// /v1/admin/feeds says every processor caught up (convergence_feeds.go),
// on a plain shop, on a throttled one (SHOP_THROUGHPUT), and after a
// kill -9 in the middle of the burst (from the restart on the same data).
// Each shop is then stopped and the convergence audit
// (feedworkers.Handlers.Audit) reads its store file and compares every
// copy with its sources.

// convergenceReport is what `shop bench --convergence` measured.
type convergenceReport struct {
	Machine report.Machine `json:"machine"`
	Command string         `json:"command"`
	Target  string         `json:"target"`
	DataSet string         `json:"dataSet"`
	// HotCarts is how many carts each product of the price changes was
	// put into (besides the sample's own).
	HotCarts int       `json:"hotCarts"`
	Plan     burstPlan `json:"plan"`
	// LeaseExpiry is how long a killed process's leases stay its own.
	LeaseExpiry string           `json:"leaseExpiry"`
	Runs        []convergenceRun `json:"runs"`
	Goals       []report.Goal    `json:"goals"`
}

// convergenceRun is one situation.
type convergenceRun struct {
	Situation  string `json:"situation"`
	Throughput int    `json:"throughput"`
	// Writes is the burst's writes; Answered of them answered 2xx (before
	// the kill, in that run), Sent the requests it took.
	Writes   int `json:"writes"`
	Answered int `json:"answered"`
	Sent     int `json:"sent"`
	// BurstMillis is from the first write sent to the last answered.
	BurstMillis float64 `json:"burstMillis"`
	// ConvergenceMillis is from the last write answered (the restart
	// after a kill) to the first of the answers in a row that said every
	// processor caught up; NotCaughtUp says what was left when the run
	// gave up waiting (convergenceLimit) instead.
	ConvergenceMillis float64 `json:"convergenceMillis"`
	NotCaughtUp       string  `json:"notCaughtUp,omitempty"`
	// After a kill: ListenMillis from the restart until the new process
	// listened, TakeoverMillis until no lease was held by the killed one.
	Killed         bool    `json:"killed"`
	ListenMillis   float64 `json:"listenMillis,omitempty"`
	TakeoverMillis float64 `json:"takeoverMillis,omitempty"`
	// PeakLag and PeakPendingSeconds are the highest backlog and oldest
	// change not yet applied that GET /v1/admin/feeds showed.
	PeakLag            int64       `json:"peakLag"`
	PeakPendingSeconds float64     `json:"peakPendingSeconds"`
	Polls              int         `json:"polls"`
	FailedPolls        int         `json:"failedPolls"`
	Audit              auditResult `json:"audit"`
}

// auditResult is what the convergence audit found in a stopped shop's file.
type auditResult struct {
	Differences int            `json:"differences"`
	ByCopy      map[string]int `json:"byCopy,omitempty"`
	// Examples holds the first difference of each kind of copy.
	Examples     []string `json:"examples,omitempty"`
	Documents    int      `json:"documents"`
	Operations   int      `json:"operations"`
	RequestUnits float64  `json:"requestUnits"`
	Millis       float64  `json:"millis"`
}

// Bounds of the convergence runs.
const (
	// convergenceLimit is the longest a run waits for the feeds.
	convergenceLimit = 5 * time.Minute
	// defaultConvergenceThroughput is the throttled run's RU/s per
	// container (--throughput).
	defaultConvergenceThroughput = 400
	// leaseExpiry is changefeed.Config's default, which shop serve keeps.
	leaseExpiry = 10 * time.Second
)

// Data set of the runs when --products, --users and --reviews are not
// given: the rename then rewrites a few hundred products, which the
// throttled run carries in about a minute.
const (
	convergenceProducts = 2000
	convergenceUsers    = 2000
	convergenceReviews  = 4000
)

// runConvergence loads the data once, then runs each situation on a copy.
func runConvergence(ctx context.Context, o benchOptions) (convergenceReport, error) {
	bin, err := o.shopBinary()
	if err != nil {
		return convergenceReport{}, err
	}
	throughput := o.throughput
	if throughput == 0 {
		throughput = defaultConvergenceThroughput
	}
	rep := convergenceReport{Machine: report.ThisMachine(), HotCarts: min(hotCarts, o.users), LeaseExpiry: leaseExpiry.String(),
		Target: fmt.Sprintf("shop serve in a process of its own with its default settings (embedded store with fsync, %d simulated physical partitions, feed workers)", benchPartitions)}
	data, err := prepareBenchData(ctx, o, progress.OnStderr("loading the sample data"))
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(data.dir)
	hot, err := seedHotCarts(ctx, filepath.Join(data.dir, "shop.db"), burstPrices, rep.HotCarts)
	if err != nil {
		return rep, fmt.Errorf("hot carts: %w", err)
	}
	rep.DataSet = data.dataSet
	for _, s := range []struct {
		situation  string
		throughput int
		kill       bool
	}{
		{"plain shop", 0, false},
		{fmt.Sprintf("throttled, %d RU/s per container", throughput), throughput, false},
		{"kill -9 half way through the burst, restarted on the same data", 0, true},
	} {
		run, plan, err := convergenceRunOn(ctx, bin, data, hot, s.throughput, s.kill)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", s.situation, err)
		}
		run.Situation = s.situation
		rep.Plan = plan
		rep.Runs = append(rep.Runs, run)
	}
	rep.Goals = convergenceGoals(rep.Runs)
	return rep, nil
}

// convergenceRunOn starts a shop on a copy of the data, sends the burst
// (killing and restarting the shop half way through it when kill is
// set), waits until the feeds have caught up, stops the shop and audits
// its file.
func convergenceRunOn(ctx context.Context, bin string, data benchData, hot []hotProduct, throughput int, kill bool) (convergenceRun, burstPlan, error) {
	run := convergenceRun{Throughput: throughput, Killed: kill}
	dir, err := data.copyTo()
	if err != nil {
		return run, burstPlan{}, err
	}
	defer os.RemoveAll(dir)
	settings := map[string]string{}
	if throughput > 0 {
		settings["SHOP_THROUGHPUT"] = strconv.Itoa(throughput)
	}
	child, err := startChild(ctx, "shop", bin, dir, settings)
	if err != nil {
		return run, burstPlan{}, err
	}
	defer func() { child.stop() }()
	c, err := newBenchClient(child.url)
	if err != nil {
		return run, burstPlan{}, err
	}
	tok, err := c.adminToken(ctx)
	if err != nil {
		return run, burstPlan{}, err
	}
	w := newFeedWatcher(c, tok, nil)
	// The burst starts on a shop whose feeds have nothing to do.
	if _, err := w.until(ctx, time.Minute); err != nil {
		return run, burstPlan{}, err
	}
	plan, err := planBurst(ctx, c, hot)
	if err != nil {
		return run, plan, err
	}
	writes := plan.writes()
	run.Writes = len(writes)

	burstCtx, stopBurst := context.WithCancel(ctx)
	defer stopBurst()
	var (
		killOnce sync.Once
		killed   atomic.Bool
		killedAt time.Time
	)
	answered := func(n int) {
		if kill && n >= len(writes)/2 {
			killOnce.Do(func() {
				// The writes in flight are cut by the kill.
				killed.Store(true)
				child.kill()
				killedAt = time.Now()
				stopBurst()
			})
		}
	}
	done := make(chan struct{})
	var watching sync.WaitGroup
	watching.Go(func() { w.during(ctx, done) })
	res, err := sendBurst(burstCtx, c, tok, writes, answered, killed.Load)
	close(done)
	watching.Wait()
	if err != nil {
		return run, plan, fmt.Errorf("burst: %w", err)
	}
	run.Answered, run.Sent = res.Answered, res.Sent
	run.BurstMillis = millis(res.Last.Sub(res.Start))
	from := res.Last
	if kill {
		if killedAt.IsZero() {
			return run, plan, fmt.Errorf("the burst ended (%d writes answered) before the kill", res.Answered)
		}
		run.BurstMillis = millis(killedAt.Sub(res.Start))
		// The instances seen holding leases are the killed process's.
		gone := w.seen()
		from = time.Now()
		if child, err = startChild(ctx, "shop (restarted)", bin, dir, settings); err != nil {
			return run, plan, err
		}
		run.ListenMillis = millis(time.Since(from))
		if c, err = newBenchClient(child.url); err != nil {
			return run, plan, err
		}
		if tok, err = c.adminToken(ctx); err != nil {
			return run, plan, err
		}
		before := w
		w = newFeedWatcher(c, tok, gone)
		w.peakLag, w.peakPending = before.peakLag, before.peakPending
		w.polls, w.failed = before.polls, before.failed
	}
	caught, err := w.until(ctx, convergenceLimit)
	switch {
	case ctx.Err() != nil:
		return run, plan, ctx.Err()
	case err != nil:
		// Measured too: the audit then says what was left behind.
		run.NotCaughtUp = err.Error()
	default:
		run.ConvergenceMillis = millis(caught.Sub(from))
	}
	if kill && !w.takenOver.IsZero() {
		run.TakeoverMillis = millis(w.takenOver.Sub(from))
	}
	run.PeakLag, run.PeakPendingSeconds, run.Polls, run.FailedPolls = w.peakLag, w.peakPending, w.polls, w.failed
	if err := child.alive(); err != nil {
		return run, plan, err
	}
	// bbolt holds the file's lock while the shop runs: stop it first.
	child.stop()
	run.Audit, err = auditFile(ctx, filepath.Join(dir, "shop.db"))
	return run, plan, err
}

// auditFile runs the convergence audit on a store file no process has
// open: every copy the feeds keep derived from its sources as they are
// and compared with the stored one (feedworkers.Handlers.Audit, read only).
func auditFile(ctx context.Context, path string) (auditResult, error) {
	s, err := embedded.Open(path, embedded.Options{PhysicalPartitions: benchPartitions})
	if err != nil {
		return auditResult{}, err
	}
	defer s.Close()
	r, err := feedworkers.NewHandlers(store.Metered(s), writes.New(repo.New(store.Metered(s), 0), nil, nil), feedworkers.HandlersConfig{}).Audit(ctx, feedworkers.AuditOptions{})
	if err != nil {
		return auditResult{}, fmt.Errorf("audit: %w", err)
	}
	out := auditResult{Differences: len(r.Differences), Operations: r.Operations,
		RequestUnits: report.Round2(r.RequestUnits), Millis: millis(r.Elapsed)}
	if len(r.Differences) > 0 {
		out.ByCopy = r.ByCopy()
	}
	for _, n := range r.Documents {
		out.Documents += n
	}
	// One example of each kind of copy that differs.
	seen := map[string]bool{}
	for _, d := range r.Differences {
		if !seen[d.Copy] {
			seen[d.Copy] = true
			out.Examples = append(out.Examples, d.String())
		}
	}
	return out, nil
}

func millis(d time.Duration) float64 { return report.Round2(float64(d) / float64(time.Millisecond)) }

func errNotCaughtUp(limit time.Duration, last feedPoll) error {
	return fmt.Errorf("not caught up after %s (last answer: %s; oldest change pending %.1f s)", limit, strings.Join(last.behind, ", "), last.oldestPending)
}

// convergenceGoals: after every situation the feeds caught up, and the
// audit finds no copy differing from its sources.
func convergenceGoals(runs []convergenceRun) []report.Goal {
	var goals []report.Goal
	for _, r := range runs {
		goals = append(goals, report.Goal{Name: "copies differing from their sources once the feeds caught up (" + r.Situation + ")",
			Want: "= 0", Got: float64(r.Audit.Differences), Met: r.NotCaughtUp == "" && r.Audit.Differences == 0})
	}
	return goals
}

// copiesText lists the differences by copy, e.g. "product.categoryName 3".
func copiesText(by map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, by[k]))
	}
	return strings.Join(parts, ", ")
}
