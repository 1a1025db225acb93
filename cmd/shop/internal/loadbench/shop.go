package loadbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// benchShop is the shop under test: started here as a child process, or
// already running at --url.
type benchShop struct {
	// name is how the report names it: "this build", or a revision.
	name string
	url  string
	desc string
	// dataSet describes what it holds (started here only).
	dataSet string
	// child is the process (nil at --url), fileKB the size of its store's
	// file.
	child  *childShop
	fileKB int64
	// dir is its data directory (started here only).
	dir string
	// settle waits until the work a run left behind is done (the feed
	// workers' backlog), so that it does not weigh on the next run.
	settle func(ctx context.Context) error
	close  func()
}

// benchData is a data directory loaded with the sample data, its leases at
// the end of every feed: each shop started on a copy of it begins where
// the data ends, as a Cosmos processor started from "now" does, instead of
// replaying the bulk load.
type benchData struct {
	dir     string
	dataSet string
}

// prepareBenchData loads the sample data into a temporary directory,
// without fsync (nothing to protect yet; the shop that serves it writes
// durably), and checkpoints the feed workers' leases at the feeds' end.
func prepareBenchData(ctx context.Context, o benchOptions, progress func(done, total int)) (benchData, error) {
	dir, err := os.MkdirTemp("", "shop-bench-")
	if err != nil {
		return benchData{}, err
	}
	d := benchData{dir: dir, dataSet: fmt.Sprintf("sample data: %d products, %d reviews, %d users with an open cart", o.products, o.reviews, o.users)}
	if err := loadBenchData(ctx, filepath.Join(dir, "shop.db"), embedded.Options{PhysicalPartitions: benchPartitions}, o, progress); err != nil {
		_ = os.RemoveAll(dir)
		return benchData{}, err
	}
	return d, nil
}

// benchPartitions is the embedded store's default number of simulated
// physical partitions (SHOP_PARTITIONS), which the shop reopens it with.
const benchPartitions = 4

// copyTo copies the data into a new directory for one more shop: every
// file of the directory, the store's and those a shop keeps beside it
// (its JWT secret, the embedded payment provider's file), so that the
// tokens and the orders of a shop that ran on it are good on the copy.
func (d benchData) copyTo() (string, error) {
	dir, err := os.MkdirTemp("", "shop-bench-")
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(d.dir, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			_ = os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// copyFile copies the file at src to a new file at dst, owner-only.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// startBenchShop starts bin as `shop serve` with its default settings on a
// copy of the data: the embedded store with fsync, the feed workers,
// telemetry and the request log as shipped, dev mode (loopback); with a
// throughput above 0, its containers provisioned with that many RU/s
// each (SHOP_THROUGHPUT; a revision older than the setting ignores it).
func startBenchShop(ctx context.Context, name, bin string, data benchData, throughput int) (*benchShop, error) {
	dir, err := data.copyTo()
	if err != nil {
		return nil, err
	}
	settings := map[string]string{}
	provisioned := ""
	if throughput > 0 {
		settings["SHOP_THROUGHPUT"] = strconv.Itoa(throughput)
		provisioned = fmt.Sprintf(", %d RU/s provisioned per container", throughput)
	}
	child, err := startChild(ctx, name, bin, dir, settings)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	calls, err := newBenchClient(child.url)
	if err != nil {
		child.stop()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	var fileKB int64
	if fi, err := os.Stat(filepath.Join(dir, "shop.db")); err == nil {
		fileKB = fi.Size() / 1024
	}
	shop := &benchShop{
		fileKB: fileKB, dir: dir,
		name: name, url: child.url, child: child, dataSet: data.dataSet,
		desc: "shop serve (" + name + ") in a process of its own with its default settings (embedded store with fsync, " +
			fmt.Sprint(benchPartitions) + " simulated physical partitions" + provisioned + ", feed workers, telemetry with no trace exporter, request log, request timeout)",
		settle: func(ctx context.Context) error {
			if err := child.alive(); err != nil {
				return err
			}
			return waitCaughtUp(ctx, calls, time.Minute)
		},
		close: func() {
			child.stop()
			_ = os.RemoveAll(dir)
		},
	}
	if err := waitCaughtUp(ctx, calls, time.Minute); err != nil {
		shop.close()
		return nil, err
	}
	return shop, nil
}

// stopKeepingData stops a shop started here, as SIGTERM does, and returns
// the data it left, for more shops to start on copies of; the directory is
// then the caller's to remove (close would remove it).
func (s *benchShop) stopKeepingData() benchData {
	s.child.stop()
	return benchData{dir: s.dir, dataSet: s.dataSet}
}

// loadBenchData fills the store at path with the sample data.
func loadBenchData(ctx context.Context, path string, opts embedded.Options, o benchOptions, progress func(done, total int)) error {
	opts.NoSync = true
	s, err := embedded.Open(path, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		return err
	}
	if _, err := sample.Load(ctx, s, sample.Options{
		Products: o.products, Reviews: o.reviews, Users: o.users, Progress: progress,
	}); err != nil {
		return fmt.Errorf("sample data: %w", err)
	}
	// The sample data is consistent from the start (sample.Load writes
	// every copy): the leases are created at the feeds' end and
	// checkpointed there, so the shop resumes from the end.
	wk, err := feedworkers.Start(ctx, s, writes.New(repo.New(store.Metered(s), 0), nil, nil), feedworkers.Config{Processor: changefeed.Config{StartFromNow: true}})
	if err != nil {
		return fmt.Errorf("feed workers: %w", err)
	}
	if err := waitLeases(ctx, wk, 30*time.Second); err != nil {
		_ = wk.Stop(context.WithoutCancel(ctx))
		return err
	}
	return wk.Stop(ctx)
}

// waitLeases waits until every lease of every processor has read its
// feed range once (to its end, since they start from now).
func waitLeases(ctx context.Context, wk *feedworkers.Workers, limit time.Duration) error {
	return waitUntil(ctx, limit, func() (string, error) {
		processors, err := wk.FeedStatus(ctx)
		if err != nil {
			return "", err
		}
		return behind(processors), nil
	})
}

// waitCaughtUp waits until every lease of every processor of the shop has
// read its feed to the end (GET /v1/admin/feeds), so that no catch-up
// work runs during the measurement.
func waitCaughtUp(ctx context.Context, c benchClient, limit time.Duration) error {
	tok, err := c.adminToken(ctx)
	if err != nil {
		return err
	}
	return waitUntil(ctx, limit, func() (string, error) {
		r, err := call(ctx, func() (*client.FeedStatusResponse, error) {
			return c.api.FeedStatusWithResponse(ctx, client.Bearer(tok))
		})
		if err != nil {
			return "", fmt.Errorf("feed status: %w", err)
		}
		processors := make([]changefeed.ProcessorStatus, len(r.JSON200.Processors))
		for i, p := range r.JSON200.Processors {
			for _, l := range p.Leases {
				processors[i].Leases = append(processors[i].Leases, changefeed.LeaseStatus{Lease: l.Lease, LagEstimate: int64(l.LagEstimate)})
			}
		}
		return behind(processors), nil
	})
}

// behind says how far the leases are from the end of their feeds ("" when
// every one has read to the end).
func behind(processors []changefeed.ProcessorStatus) string {
	n := int64(0)
	for _, p := range processors {
		for _, l := range p.Leases {
			if l.LagEstimate != 0 {
				n += max(l.LagEstimate, 1)
			}
		}
	}
	if n == 0 && len(processors) > 0 {
		return ""
	}
	return fmt.Sprintf("the feed workers are still %d changes behind", n)
}

// waitUntil polls check until it reports nothing left ("").
func waitUntil(ctx context.Context, limit time.Duration, check func() (string, error)) error {
	deadline := time.Now().Add(limit)
	for {
		left, err := check()
		if err != nil {
			return err
		}
		if left == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s after %s", left, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
