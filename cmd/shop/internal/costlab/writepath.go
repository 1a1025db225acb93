package costlab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// This file is `shop cost --writepath`: the write path against the
// physical limit of the embedded store. The embedded store makes every
// write durable before it answers: one bbolt commit, whose fdatasyncs
// (the pages, then the meta page) are the floor of any write on it. The
// measure runs a cart PUT and checkouts of 1, 3 and 10 lines through the
// shop's own write path (store/writes) on the embedded store with fsync
// on, as `shop serve` runs it, counting each one's commits
// (embedded.Store.Commits); after each, a bare bbolt file on the same
// file system makes the same number of commits writing the same keys and
// values (writepathbare.go): what an implementation on this store could
// reach at best. What lies between the two is the shop's own.

// putCartLines is how many lines the cart of the measured PUT holds.
const putCartLines = 3

// writePathOptions are the settings of `shop cost --writepath`.
type writePathOptions struct {
	reps       int
	partitions int
	// dir is where the store's file and the bare file are made (in a
	// directory of their own, removed at the end): the file system
	// measured.
	dir string
}

// writePathReport is what `shop cost --writepath` measured.
type writePathReport struct {
	Command     string         `json:"command"`
	Machine     report.Machine `json:"machine"`
	Store       string         `json:"store"`
	FileSystem  string         `json:"fileSystem"`
	Repetitions int            `json:"repetitions"`
	// CommitMicros is one bare commit of one small item (median over
	// the repetitions): the price of one commit on this file system.
	CommitMicros float64         `json:"commitMicros"`
	Ops          []writeOpResult `json:"ops"`
	// Before is the same measure on the write path before this issue's
	// change (writePathBefore), where one was made.
	Before []writeOpBefore `json:"before"`
}

// writeOpResult is one operation of the write path and its limit.
type writeOpResult struct {
	Op   string `json:"op"`
	What string `json:"what"`
	// Commits, StoreOps, RequestUnits, Writes (the store calls that
	// wrote) and Bytes (the keys and values they put) are means per
	// operation.
	Commits      float64 `json:"commits"`
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
	Writes       float64 `json:"writes"`
	Bytes        float64 `json:"bytes"`
	// ProviderMicros is the mean wall time spent in the payment
	// provider's calls, within Shop's.
	ProviderMicros float64 `json:"providerMicros"`
	// Shop is the operation through the shop; Limit the bare file's
	// commits of the same bytes.
	Shop  timing `json:"shop"`
	Limit timing `json:"limit"`
	// Ratio is Shop over Limit: of the median wall time, the p90, the
	// mean CPU.
	Ratio    float64 `json:"ratio"`
	RatioP90 float64 `json:"ratioP90"`
	RatioCPU float64 `json:"ratioCPU"`
}

// timing is the wall time (median, p90) and mean CPU of an operation.
type timing struct {
	MedianMicros float64 `json:"medianMicros"`
	P90Micros    float64 `json:"p90Micros"`
	CPUMicros    float64 `json:"cpuMicros"`
}

// writeOpBefore is an operation as this measure found it before the
// change (writePathBefore).
type writeOpBefore struct {
	Op       string  `json:"op"`
	Commits  float64 `json:"commits"`
	StoreOps float64 `json:"storeOps"`
	Shop     timing  `json:"shop"`
	// ProviderMicros is writeOpResult's.
	ProviderMicros float64 `json:"providerMicros"`
	Ratio          float64 `json:"ratio"`
	RatioCPU       float64 `json:"ratioCPU"`
}

// writePathBefore is the measure as it ran before the write path's
// change, keyed by the operation's name: this command (its lab as of
// this file) on the write path of writePathBeforeCommit, on this machine
// (load average 0.92 1.86 1.38 at its start), just before the run the
// docs show. That path is gone from the code (the provider's lone call
// waiting MaxBatchDelay, a sold order's cart settled after its
// reservations' commits, a refused write committed), so its figures are
// kept here, not measured again.
var writePathBefore = map[string]writeOpBefore{
	"cart PUT":                    {Op: "cart PUT", Commits: 1, StoreOps: 4, Shop: timing{MedianMicros: 348.78, P90Micros: 427.5, CPUMicros: 234.17}, ProviderMicros: 0, Ratio: 1.35, RatioCPU: 2.01},
	"checkout, 1 line":            {Op: "checkout, 1 line", Commits: 8, StoreOps: 13, Shop: timing{MedianMicros: 4703.86, P90Micros: 5853.94, CPUMicros: 2549.42}, ProviderMicros: 1182.92, Ratio: 1.85, RatioCPU: 2},
	"checkout, 3 lines":           {Op: "checkout, 3 lines", Commits: 10.01, StoreOps: 19, Shop: timing{MedianMicros: 6007.18, P90Micros: 7326.53, CPUMicros: 3417.1}, ProviderMicros: 1185.12, Ratio: 1.79, RatioCPU: 2.08},
	"checkout, 10 lines":          {Op: "checkout, 10 lines", Commits: 12.01, StoreOps: 40, Shop: timing{MedianMicros: 8299.86, P90Micros: 9153.2, CPUMicros: 5311.78}, ProviderMicros: 1188.01, Ratio: 1.86, RatioCPU: 2.24},
	"orders feed's pass, 3 lines": {Op: "orders feed's pass, 3 lines", Commits: 2.01, StoreOps: 5, Shop: timing{MedianMicros: 727.44, P90Micros: 846.8, CPUMicros: 442.62}, ProviderMicros: 0, Ratio: 0, RatioCPU: 0},
}

// writePathBeforeCommit is the commit writePathBefore was measured on:
// the write path as on main before this change.
const writePathBeforeCommit = "34692c4"

// runWritePath is `shop cost --writepath`.
func runWritePath(ctx context.Context, o writePathOptions) (writePathReport, error) {
	rep := writePathReport{Machine: report.ThisMachine(), Repetitions: o.reps, FileSystem: fileSystem(o.dir)}
	dir, err := os.MkdirTemp(o.dir, "shop-writepath-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	l, err := newWritePathLab(ctx, dir, o.partitions)
	if err != nil {
		return rep, err
	}
	defer l.close()
	rep.Store = fmt.Sprintf("embedded store (bbolt), fsync on every commit as shop serve runs it, %d simulated physical partitions, in %s", o.partitions, o.dir)
	if rep.CommitMicros, err = l.bare.commitMicros(o.reps); err != nil {
		return rep, err
	}
	ops := []struct {
		name, what string
		prepare    func(ctx context.Context, i int) (func(context.Context) error, error)
	}{
		{"cart PUT", fmt.Sprintf("writes.SetCartLine: one line's quantity set on a cart of %d lines (the product read, the cart read and replaced with If-Match, the product read again)", putCartLines), l.cartPut},
	}
	for _, n := range checkoutLines {
		ops = append(ops, struct {
			name, what string
			prepare    func(ctx context.Context, i int) (func(context.Context) error, error)
		}{fmt.Sprintf("checkout, %d line%s", n, plural(n)), fmt.Sprintf("writes.Checkout of a new buyer's cart of %d tracked line%s, one unit each, to placed, with the placed order's effects", n, plural(n)), l.checkout(n)})
	}
	ops = append(ops, struct {
		name, what string
		prepare    func(ctx context.Context, i int) (func(context.Context) error, error)
	}{feedPassOp, fmt.Sprintf("feedworkers.Handlers.OrdersCarryOut on an order placed by a checkout of %d lines (not measured): the order read, then CarryOut again on effects already carried out, each one refused by its condition or unchanged", workflowLines), l.feedPass})
	for _, op := range ops {
		r, err := l.measure(ctx, op.prepare, o.reps)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", op.name, err)
		}
		r.Op, r.What = op.name, op.what
		rep.Ops = append(rep.Ops, r)
		if b, ok := writePathBefore[op.name]; ok {
			rep.Before = append(rep.Before, b)
		}
	}
	return rep, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writePathLab is the shop's write path on an embedded store with fsync,
// and the bare file beside it.
type writePathLab struct {
	es   *embedded.Store
	log  *writeLog
	bare *bareFile
	// setup writes the carts unmetered; w is the shop's write path.
	setup    *repo.Set
	w        *writes.Writes
	pay      *payembedded.Provider
	timed    *timedProvider
	feed     *feedworkers.Handlers
	products []domain.Product
	users    int
	now      time.Time
}

func newWritePathLab(ctx context.Context, dir string, partitions int) (*writePathLab, error) {
	// The TTL purge commits on its own clock: not in the measured
	// operations.
	es, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{PhysicalPartitions: partitions, TTLPurgeInterval: 24 * time.Hour})
	if err != nil {
		return nil, err
	}
	l := &writePathLab{es: es, now: time.Now().UTC()}
	if err := migrations.Apply(ctx, es, io.Discard); err != nil {
		l.close()
		return nil, err
	}
	if l.bare, err = openBare(filepath.Join(dir, "bare.db")); err != nil {
		l.close()
		return nil, err
	}
	if l.pay, err = payembedded.Open(""); err != nil {
		l.close()
		return nil, err
	}
	l.log = newWriteLog(es)
	l.setup = repo.New(l.log, 0)
	l.timed = &timedProvider{Provider: l.pay}
	metered := store.Metered(l.log)
	l.w = writes.New(repo.New(metered, 0), l.timed, time.Now)
	l.feed = feedworkers.NewHandlers(metered, l.w, feedworkers.HandlersConfig{})
	for i := range max(checkoutLines[len(checkoutLines)-1], putCartLines) {
		p := domain.Product{Meta: domain.Meta{ID: fmt.Sprintf("wp-%02d", i)}, Name: fmt.Sprintf("Write path %d", i),
			CategoryID: "write-path", CategoryName: "Write path", PriceCents: 1000 + int64(i), Currency: "USD",
			PriceVersion: 1, Version: 1, LastUpdated: l.now}
		// Enough units that no measured checkout runs out.
		if p, err = writes.New(l.setup, l.pay, time.Now).CreateProduct(ctx, p, domain.MaxStock, nil); err != nil {
			l.close()
			return nil, err
		}
		l.products = append(l.products, p)
	}
	return l, nil
}

func (l *writePathLab) close() {
	if l.pay != nil {
		l.pay.Close()
	}
	if l.bare != nil {
		l.bare.close()
	}
	l.es.Close()
}

// buyer is a new user whose cart holds one unit of each of the first n
// products, written by the setup.
func (l *writePathLab) buyer(ctx context.Context, n int) (string, error) {
	l.users++
	user := fmt.Sprintf("wp-buyer-%05d", l.users)
	_, err := l.setup.Carts.Update(ctx, user, "", func(c *domain.Cart) error {
		for _, p := range l.products[:n] {
			if err := c.SetQuantity(p, "", 1, l.now); err != nil {
				return err
			}
		}
		return nil
	})
	return user, err
}

// cartPut is the i-th PUT: one user's cart of putCartLines lines, its
// i-th line set to a quantity it does not hold (1 or 2 in turn).
func (l *writePathLab) cartPut(ctx context.Context, i int) (func(context.Context) error, error) {
	const user = "wp-cart"
	if i == 0 {
		if _, err := l.setup.Carts.Update(ctx, user, "", func(c *domain.Cart) error {
			for _, p := range l.products[:putCartLines] {
				if err := c.SetQuantity(p, "", 1, l.now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	p := l.products[i%putCartLines]
	q := 2 - (i/putCartLines)%2
	return func(ctx context.Context) error {
		_, err := l.w.SetCartLine(ctx, user, p.ID, "", q, "")
		return err
	}, nil
}

// feedPassOp is the name of the orders feed's pass over a placed order.
const feedPassOp = "orders feed's pass, 3 lines"

// feedPass is the orders feed's pass over the order of a checkout of
// workflowLines lines, made first.
func (l *writePathLab) feedPass(ctx context.Context, i int) (func(context.Context) error, error) {
	user, err := l.buyer(ctx, workflowLines)
	if err != nil {
		return nil, err
	}
	o, err := l.w.Checkout(ctx, labCheckout(user, user+"-key"))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return l.feed.OrdersCarryOut(ctx, []domain.Order{o}) }, nil
}

// checkout is the i-th checkout of n lines: a new buyer's cart.
func (l *writePathLab) checkout(n int) func(ctx context.Context, i int) (func(context.Context) error, error) {
	return func(ctx context.Context, _ int) (func(context.Context) error, error) {
		user, err := l.buyer(ctx, n)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) error {
			o, err := l.w.Checkout(ctx, labCheckout(user, user+"-key"))
			if err == nil && o.Status != domain.StatusPlaced {
				err = fmt.Errorf("order %s is %s, want placed", o.ID, o.Status)
			}
			return err
		}, nil
	}
}

// measure runs reps operations (and one warm-up first, not counted),
// each made by prepare, one after the other. Each runs through the shop,
// its commits counted, its store calls metered and its writes logged;
// then the bare file commits the same writes as often. What prepare
// writes is put in the bare file too, unmeasured, so both files hold the
// same items.
func (l *writePathLab) measure(ctx context.Context, prepare func(context.Context, int) (func(context.Context) error, error), reps int) (writeOpResult, error) {
	var r writeOpResult
	var shopWall, limitWall []int64
	var shopCPU, limitCPU time.Duration
	var provider int64
	for i := range reps + 1 {
		op, err := prepare(ctx, i)
		if err != nil {
			return r, err
		}
		if err := l.bare.commit(l.log.take()); err != nil {
			return r, err
		}
		mctx, m := store.WithMeter(ctx)
		paid, commits, cpu, start := l.timed.nanos.Load(), l.es.Commits(), cpuTime(), time.Now()
		err = op(mctx)
		wall, cpu, commits := time.Since(start), cpuTime()-cpu, l.es.Commits()-commits
		paid = l.timed.nanos.Load() - paid
		if err != nil {
			return r, err
		}
		written := l.log.take()
		if commits == 0 && len(written) > 0 {
			return r, fmt.Errorf("%d writes and no commit", len(written))
		}
		// The floor commits what was written, as often as the shop did
		// but never a commit of nothing: nothing written, no limit.
		var bareWall, bareCPU time.Duration
		if floor := min(int(commits), len(written)); floor > 0 {
			start, limitStart := time.Now(), cpuTime()
			if err := l.bare.replay(written, floor); err != nil {
				return r, err
			}
			bareWall, bareCPU = time.Since(start), cpuTime()-limitStart
		}
		if i == 0 {
			continue // the warm-up
		}
		provider += paid
		ops, ru, _ := m.Totals()
		r.Commits += float64(commits)
		r.StoreOps += float64(ops)
		r.RequestUnits += ru
		r.Writes += float64(len(written))
		r.Bytes += float64(bytesOf(written))
		shopWall, limitWall = append(shopWall, wall.Nanoseconds()), append(limitWall, bareWall.Nanoseconds())
		shopCPU, limitCPU = shopCPU+cpu, limitCPU+bareCPU
	}
	n := float64(reps)
	r.Commits, r.StoreOps, r.RequestUnits = report.Round2(r.Commits/n), report.Round2(r.StoreOps/n), report.Round2(r.RequestUnits/n)
	r.Writes, r.Bytes = report.Round2(r.Writes/n), report.Round2(r.Bytes/n)
	r.ProviderMicros = report.Round2(float64(provider) / n / 1e3)
	r.Shop, r.Limit = timingOf(shopWall, shopCPU), timingOf(limitWall, limitCPU)
	r.Ratio, r.RatioP90, r.RatioCPU = ratio(r.Shop.MedianMicros, r.Limit.MedianMicros),
		ratio(r.Shop.P90Micros, r.Limit.P90Micros), ratio(r.Shop.CPUMicros, r.Limit.CPUMicros)
	return r, nil
}

// timingOf is the median and p90 of walls and the mean of cpu over them.
func timingOf(walls []int64, cpu time.Duration) timing {
	if len(walls) == 0 {
		return timing{}
	}
	return timing{
		MedianMicros: report.Round2(float64(quantile(walls, 0.5)) / 1e3),
		P90Micros:    report.Round2(float64(quantile(walls, 0.9)) / 1e3),
		CPUMicros:    report.Round2(float64(cpu.Nanoseconds()) / float64(len(walls)) / 1e3),
	}
}

// quantile is the q-quantile of v by the nearest rank.
func quantile(v []int64, q float64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return report.Round2(a / b)
}

// errNoWritePathOnCosmos: the limit measured is the embedded store's.
var errNoWritePathOnCosmos = errors.New("writepath: measures the embedded store's write path against its physical limit; unset COSMOS_ENDPOINT and COSMOS_CONNECTION_STRING")

// writePathFlags are the flags --writepath runs with; the others set the
// cost lab's data set, which it does not build.
var writePathFlags = map[string]bool{"writepath": true, "reps": true, "partitions": true, "dir": true,
	"json": true, "markdown": true, "write-docs": true}

// runWritePathCommand is `shop cost --writepath` with its parsed flags.
func runWritePathCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, fs *flag.FlagSet, o writePathOptions, out report.Output) error {
	if getenv("COSMOS_ENDPOINT") != "" || getenv("COSMOS_CONNECTION_STRING") != "" {
		return errNoWritePathOnCosmos
	}
	var other []string
	fs.Visit(func(f *flag.Flag) {
		if !writePathFlags[f.Name] {
			other = append(other, "--"+f.Name)
		}
	})
	if len(other) > 0 {
		return fmt.Errorf("writepath: builds no data set; %s do not apply", strings.Join(other, ", "))
	}
	if o.reps < 1 || o.partitions < 1 {
		return errors.New("writepath: reps and partitions must be at least 1")
	}
	rep, err := runWritePath(ctx, o)
	if err != nil {
		return err
	}
	rep.Command = strings.TrimSpace("go run ./cmd/shop cost " + strings.Join(args, " "))
	return report.Write(stdout, rep, out, "cost writepath",
		func(w io.Writer) { writeWritePathMarkdown(w, rep) }, func(w io.Writer) { writeWritePathText(w, rep) })
}
