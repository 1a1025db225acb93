package loadbench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"shop/api"
	"shop/api/telemetry"
	"shop/feedworkers"
	"shop/feedworkers/changefeed"
	"shop/migrations"
	"shop/migrations/sample"
	"shop/store"
	"shop/store/embedded"
)

// benchShop is the shop under test: started here, or already running.
type benchShop struct {
	url  string
	desc string
	// dataSet describes what it holds (in process only).
	dataSet string
	// loaded is the process's memory once the data is in and the feed
	// workers have caught up (in process only).
	loaded memSample
	// settle waits until the work a run left behind is done (the feed
	// workers' backlog), so that it does not weigh on the next run.
	settle func(ctx context.Context) error
	close  func()
}

// startBenchShop starts the shop in process, as `shop serve` runs it, on
// 127.0.0.1 with a temporary embedded store: sample data, migrations, feed
// workers, dev mode. The data is loaded without fsync (nothing to protect
// yet), then the store is reopened durable so that the writes under test
// pay for their fsync as they do in production.
func startBenchShop(ctx context.Context, o benchOptions, progress func(done, total int)) (*benchShop, error) {
	dir, err := os.MkdirTemp("", "shop-bench-")
	if err != nil {
		return nil, err
	}
	cleanup := []func(){func() { _ = os.RemoveAll(dir) }}
	fail := func(err error) (*benchShop, error) {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
		return nil, err
	}
	path := filepath.Join(dir, "shop.db")
	opts := embedded.Options{PhysicalPartitions: 4}
	if err := loadBenchData(ctx, path, opts, o, progress); err != nil {
		return fail(err)
	}

	s, err := embedded.Open(path, opts)
	if err != nil {
		return fail(err)
	}
	cleanup = append(cleanup, func() { _ = s.Close() })
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cleanup = append(cleanup, cancel)
	// The sample data is consistent from the start (sample.Load
	// writes every copy), so the workers start at the feed's end, as a
	// Cosmos processor started from "now" does: replaying the bulk load
	// would only redo it.
	wk, err := feedworkers.Start(wctx, s, feedworkers.Config{Processor: changefeed.Config{StartFromNow: true}})
	if err != nil {
		return fail(fmt.Errorf("feed workers: %w", err))
	}
	cleanup = append(cleanup, func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = wk.Stop(sctx)
	})
	if err := waitCaughtUp(ctx, wk, 30*time.Second); err != nil {
		return fail(err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	// inFlight counts the requests the shop is still working on: a client
	// that gave up (timeout) leaves its request running on the server.
	var inFlight atomic.Int64
	// Served as `shop serve` serves by default: traced and measured with
	// no trace exporter (GET /metrics), the store traced, the request log
	// at info (written nowhere, but formatted), each request's store calls
	// bounded.
	tel, err := telemetry.Setup(ctx, func(string) string { return "" }, io.Discard, "shop")
	if err != nil {
		return fail(err)
	}
	cleanup = append(cleanup, func() { _ = tel.Shutdown(context.Background()) })
	shop := api.NewServer(api.Deps{
		Store: store.Traced(s, tel.TracerProvider(), tel.MeterProvider(), "embedded"), Secret: secret, DevMode: true, Feeds: wk,
		Telemetry: tel, Logger: telemetry.NewLogger(io.Discard, false, slog.LevelInfo), RequestTimeout: 10 * time.Second,
	})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inFlight.Add(1)
			defer inFlight.Add(-1)
			shop.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	cleanup = append(cleanup, func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	})
	return &benchShop{
		url:     "http://" + ln.Addr().String(),
		desc:    "shop in process (embedded store with fsync, 4 simulated physical partitions, feed workers running from the end of the feed; telemetry, request log and timeout as shop serve has them by default)",
		dataSet: fmt.Sprintf("sample data: %d products, %d reviews, %d users with an open cart", o.products, o.reviews, o.users),
		loaded:  readMem(),
		settle: func(ctx context.Context) error {
			if err := waitIdle(ctx, &inFlight, time.Minute); err != nil {
				return err
			}
			return waitCaughtUp(ctx, wk, time.Minute)
		},
		close: func() {
			for i := len(cleanup) - 1; i >= 0; i-- {
				cleanup[i]()
			}
		},
	}, nil
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
	return nil
}

// waitIdle waits until no request is in flight.
func waitIdle(ctx context.Context, inFlight *atomic.Int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for inFlight.Load() > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the shop still has %d requests in flight after %s", inFlight.Load(), limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// waitCaughtUp waits until every lease of every processor has read the
// feed to its end, so that no catch-up work runs during the measurement.
func waitCaughtUp(ctx context.Context, wk *feedworkers.Workers, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		processors, err := wk.FeedStatus(ctx)
		if err != nil {
			return err
		}
		behind := int64(0)
		for _, p := range processors {
			for _, l := range p.Leases {
				if l.LagEstimate != 0 {
					behind += max(l.LagEstimate, 1)
				}
			}
		}
		if behind == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the feed workers are still %d changes behind after %s", behind, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
