package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/httpserver"
	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/cmd/shop/internal/shopstore"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
	"github.com/reference-shop/shop/web"
)

// openStore opens the shop's store as cfg says (shopstore.Open).
func openStore(ctx context.Context, cfg config, getenv func(string) string, tp trace.TracerProvider) (store.Store, string, error) {
	return shopstore.Open(ctx, shopstore.Location{Cosmos: cfg.Cosmos, DataDir: cfg.DataDir, Partitions: cfg.Partitions}, getenv, tp)
}

// serve runs the API, the frontend and (by default) the feed workers until
// ctx is cancelled (SIGINT, SIGTERM), then shuts down in order: readiness
// off, in-flight requests finish, workers checkpoint, the store closes.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig("serve", args, getenv, stdout)
	if err != nil {
		return err
	}
	if getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(defaultGCPercent))
	}
	// The addresses first: a busy port must fail before the store is
	// opened, migrated and seeded (a first run would leave a new data
	// directory behind it).
	ln, err := httpserver.Listen(cfg.Addr, "SHOP_ADDR (--addr)", "SHOP_ADDR=127.0.0.1:8081")
	if err != nil {
		return err
	}
	defer ln.Close() // on the way out before Serve, which closes it itself
	var metricsLn, pprofLn net.Listener
	if cfg.MetricsAddr != "" {
		if metricsLn, err = httpserver.Listen(cfg.MetricsAddr, "SHOP_METRICS_ADDR (--metrics-addr)", "SHOP_METRICS_ADDR=127.0.0.1:9465"); err != nil {
			return err
		}
		defer metricsLn.Close()
	}
	if cfg.PprofAddr != "" {
		if pprofLn, err = httpserver.Listen(cfg.PprofAddr, "SHOP_PPROF_ADDR (--pprof-addr)", "SHOP_PPROF_ADDR=127.0.0.1:6061"); err != nil {
			return err
		}
		defer pprofLn.Close()
	}
	tel, logger, err := setupTelemetry(ctx, cfg, getenv, stdout)
	if err != nil {
		return err
	}
	defer shutdownTelemetry(tel, logger)
	raw, desc, err := openStore(ctx, cfg, getenv, tel.TracerProvider())
	if err != nil {
		return err
	}
	defer raw.Close()
	// Every store call the API and the workers make is a span and a
	// measurement; migrations and the sample load below are not.
	s := store.Traced(raw, tel.TracerProvider(), tel.MeterProvider(), adapterName(cfg))
	seeded, err := shopstore.Prepare(ctx, raw, shopstore.Preparation{Migrate: cfg.Migrate, Seed: cfg.Seed && !cfg.Cosmos,
		Throughput: cfg.Throughput, Containers: map[string]int{store.InventoryContainer: cfg.ThroughputInventory}}, stdout)
	if err != nil {
		return err
	}
	if cfg.Throughput > 0 {
		desc += fmt.Sprintf(", %d RU/s provisioned per container", cfg.Throughput)
	}
	if cfg.ThroughputInventory > 0 {
		desc += fmt.Sprintf(", inventory provisioned %d RU/s apart", cfg.ThroughputInventory)
	}
	secret, err := cfg.secret()
	if err != nil {
		return err
	}
	pay, payDesc, closePay, err := openPayments(cfg)
	if err != nil {
		return err
	}
	defer closePay()
	desc += ", " + payDesc
	// Wired once: one set of repositories and one write layer, which the
	// API and the feed workers share. Metered, so a request's cost headers
	// and a feed batch's charge add up their calls; Patient (repo.New), so
	// the workers, whose contexts ask, ride throttles and a request does not.
	repos := repo.New(store.Metered(s), cfg.StatusBuckets)
	w := writes.New(repos, pay, nil)

	var wk *feedworkers.Workers
	var hooks *webhooks.Service
	// One policy for what the dispatcher calls and what the admin API
	// takes as a receiver's URL.
	policy := webhookPolicy(cfg, ln.Addr())
	if cfg.Workers {
		fc := feedConfig(logger, tel)
		// The sample catalog is written with every copy consistent, so
		// workers starting on it begin at the feed's end (Cosmos's "start
		// from now") instead of replaying the load. Only new leases do:
		// a restarted shop resumes from its checkpoints.
		fc.Processor.StartFromNow = seeded
		fc.Sweeper = feedworkers.Sweeper{Every: cfg.SweepEvery, Stall: cfg.CheckoutStall, Expiry: cfg.CheckoutExpiry}
		if wk, err = feedworkers.Start(ctx, s, w, fc); err != nil {
			return fmt.Errorf("feed workers: %w", err)
		}
		// The webhooks: the relay on the orders and products feeds, and
		// this instance's dispatcher (feedworkers/webhooks).
		if hooks, err = webhooks.Start(ctx, s, webhooks.Config{
			Processor:  changefeed.Config{StartFromNow: seeded},
			Dispatcher: webhooks.DispatcherConfig{Policy: policy, Logger: logger, RetryHorizon: cfg.WebhooksRetryHorizon},
		}); err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return errors.Join(fmt.Errorf("webhooks: %w", err), wk.Stop(sctx))
		}
		// The relay's processors are feed processors like the others: in
		// /v1/admin/feeds and the metrics beside them.
		observeFeeds(tel, feedSet{wk, hooks})
		if policy.AllowPrivate || policy.AllowInsecure {
			logger.Info("webhooks may call private addresses or http:// URLs (development settings)", "allow_private", policy.AllowPrivate, "allow_insecure", policy.AllowInsecure)
		}
	}
	var stopping atomic.Bool
	deps := api.Deps{
		Store:     s,
		Logger:    logger,
		Secret:    secret,
		DevMode:   cfg.Dev,
		Web:       web.Handler(),
		Writes:    w,
		RateLimit: api.RateLimit{User: cfg.RateUser, Anon: cfg.RateAnon, Window: time.Minute},
		// Below the server's WriteTimeout, so the 503 still reaches the client.
		RequestTimeout: cfg.RequestTimeout,
		Telemetry:      tel,
		CORSOrigins:    cfg.CORSOrigins,
		SessionTokens:  cfg.Cosmos,
		// The embedded store's charges are its documented estimate.
		ChargesEstimated: !cfg.Cosmos,
		Webhooks:         policy,
		Ready: func(ctx context.Context) error {
			if stopping.Load() {
				return errors.New("shutting down")
			}
			return s.Ping(ctx)
		},
	}
	if wk != nil {
		deps.Feeds = feedSet{wk, hooks}
	}
	if cfg.Cache {
		cache := readcache.New(readcache.Config{MaxAge: cfg.CacheMaxAge})
		// Before the listener: every change from now on reaches the cache.
		if err := cache.Follow(ctx, raw, changefeed.Follow); err != nil {
			return err
		}
		deps.Cache = cache
		desc += fmt.Sprintf("; read cache on (max age %s)", cfg.CacheMaxAge)
	}
	if tr, ok := raw.(store.ThroughputReporter); ok {
		deps.Throughput = tr
		observePartitions(tel, tr)
	}
	deps.DevMode = devTokens(cfg, ln.Addr())
	if deps.DevMode && !httpserver.IsLoopback(ln.Addr()) {
		logger.Warn("dev tokens are served to anyone who can reach this address, admin ones included; set SHOP_DEV=false or listen on loopback", "addr", ln.Addr().String())
	}
	if metricsLn != nil {
		defer httpserver.ServeMetrics(metricsLn, tel.MetricsHandler(), stdout)()
		deps.MetricsElsewhere = true
	}
	srv := httpserver.New(ctx, cfg.Addr, api.NewServer(deps))
	srv.IdleTimeout = cfg.IdleTimeout
	if fds := httpserver.FDLimit(); fds > 0 && uint64(cfg.MaxConns) > fds {
		logger.Warn("max-conns is above the open-file limit: past it accepts fail (EMFILE) and clients wait", "max_conns", cfg.MaxConns, "open_files", fds)
	}
	lim := httpserver.LimitConns(ln, httpserver.Limits{Total: cfg.MaxConns, PerAddr: cfg.MaxConnsPerAddr}, httpserver.RefusalResponse(), srv)
	tel.ObserveConnections(func(context.Context) telemetry.ConnGauge {
		s := lim.Stats()
		return telemetry.ConnGauge{Open: int64(s.Open), Evicted: s.Evicted, Refused: s.Refused}
	})
	if pprofLn != nil {
		defer httpserver.ServePprof(pprofLn, stdout)()
	}
	fmt.Fprintf(stdout, "shop: store %s; dev mode %v; dev tokens %v; feed workers %v\n", desc, cfg.Dev, deps.DevMode, cfg.Workers)
	fmt.Fprintf(stdout, "shop: listening on http://%s\n", httpserver.DisplayAddr(ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lim) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}

	// Readiness goes to 503 first so a load balancer stops sending, then
	// in-flight requests get the grace period to finish.
	stopping.Store(true)
	logger.Info("shutting down", "grace", cfg.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if cfg.ShutdownDrain > 0 {
		// Keep serving while /readyz says 503, so the load balancer sees
		// it and stops routing here before the listener closes.
		drain := time.NewTimer(cfg.ShutdownDrain)
		select {
		case <-drain.C:
		case <-sctx.Done():
		}
		drain.Stop()
	}
	shutErr := srv.Shutdown(sctx)
	if hooks != nil {
		// The requests in flight get the grace; a delivery cut short is
		// sent again by an instance still running once its claim ends.
		if err := hooks.Stop(sctx); err != nil {
			logger.Error("stopping webhooks", "err", err)
		}
	}
	if wk != nil {
		// Finish the current batch, checkpoint, release the leases.
		if err := wk.Stop(sctx); err != nil {
			logger.Error("stopping feed workers", "err", err)
		}
	}
	// A checkout whose client left, or whose request outlived the grace,
	// carries its order on for up to domain.CheckoutBound: let it reach a
	// state of the workflow before the store closes under it. Past the
	// grace it is left to the sweeper of the next start.
	if err := w.Wait(sctx); err != nil {
		logger.Error("checkouts still under way at shutdown; the sweeper carries them on", "err", err)
	}
	if err := raw.Close(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "shop: stopped")
	return shutErr
}

// webhookPolicy is what the webhook dispatcher may call: each setting as
// given, else on in dev mode on a loopback address (a developer's receiver
// on this machine, `go run ./cmd/webhook-receiver`), off otherwise.
func webhookPolicy(cfg config, addr net.Addr) webhooks.Policy {
	dev := cfg.Dev && httpserver.IsLoopback(addr)
	p := webhooks.Policy{AllowPrivate: dev, AllowInsecure: dev}
	if cfg.WebhooksAllowPrivate != nil {
		p.AllowPrivate = *cfg.WebhooksAllowPrivate
	}
	if cfg.WebhooksAllowInsecure != nil {
		p.AllowInsecure = *cfg.WebhooksAllowInsecure
	}
	return p
}

// devTokens decides whether POST /v1/dev/token is served: dev mode on, and
// either the listener is loopback (only this machine can ask) or dev mode
// was set explicitly, by someone who chose to open it wider. Dev mode by
// default on a public address would let anyone mint an admin token.
func devTokens(cfg config, addr net.Addr) bool {
	return cfg.Dev && (httpserver.IsLoopback(addr) || cfg.DevSet)
}

// defaultGCPercent is the garbage collector's target when GOGC is not
// set: a collection when the heap has grown 400% over what the last one
// kept, where Go's default is 100%. The shop's live heap is small (a few
// MB: the documents live in bbolt's mapped file, not on the heap) and a
// page allocates a few KB, so at Go's default a busy shop collects many
// times a second. At 400 it collects a quarter as often, for a heap a few
// MB larger (docs/performance.md: the "allocation and garbage
// collection" row of the CPU breakdown, and the memory line).
// GOGC, if set, is the runtime's; GOMEMLIMIT, if set, still bounds the
// heap.
const defaultGCPercent = 400

// feedSet is every change-feed processor of this process: the feed
// workers' and the webhook relay's (api.FeedStatus).
type feedSet struct {
	*feedworkers.Workers
	hooks *webhooks.Service
}

// FeedStatus reports the feed workers' processors, then the relay's.
func (f feedSet) FeedStatus(ctx context.Context) ([]changefeed.ProcessorStatus, error) {
	out, err := f.Workers.FeedStatus(ctx)
	if err != nil || f.hooks == nil {
		return out, err
	}
	for _, p := range f.hooks.Processors() {
		leases, err := p.Status(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, changefeed.Summarize(p.Name(), leases, time.Now()))
	}
	return out, nil
}
