package main

import (
	"context"
	"errors"
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
	"shop/feedworkers"
	"shop/migrations"
	"shop/store"
	"shop/store/cosmos"
	"shop/store/embedded"
	"shop/web"
)

// openStore opens Cosmos when COSMOS_ENDPOINT (or a connection string) is
// set, the embedded store in the data directory otherwise.
func openStore(ctx context.Context, cfg config, getenv func(string) string) (store.Store, string, error) {
	if cfg.Cosmos {
		cc, err := cosmos.ConfigFromEnv(getenv)
		if err != nil {
			return nil, "", err
		}
		s, err := cosmos.Open(ctx, cc)
		if err != nil {
			return nil, "", err
		}
		return s, "cosmos " + cc.Endpoint, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, "", err
	}
	path := filepath.Join(cfg.DataDir, "shop.db")
	s, err := embedded.Open(path, embedded.Options{PhysicalPartitions: cfg.Partitions})
	if err != nil {
		return nil, "", fmt.Errorf("open %s: %w", path, err)
	}
	return s, fmt.Sprintf("embedded %s (%d simulated physical partitions)", path, cfg.Partitions), nil
}

// prepare applies the migrations and loads the sample catalog into an
// empty embedded store, as configured; with Cosmos and migrations off it
// checks that the containers exist.
func prepare(ctx context.Context, cfg config, s store.Store, stdout io.Writer) error {
	if cfg.Migrate {
		if err := migrations.Apply(ctx, s, io.Discard); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	} else if cs, ok := s.(*cosmos.Store); ok {
		if err := cs.CheckContainers(ctx, migrations.Containers); err != nil {
			return err
		}
	}
	if !cfg.Seed || cfg.Cosmos {
		return nil
	}
	empty, err := migrations.IsEmpty(ctx, s)
	if err != nil || !empty {
		return err
	}
	stats, err := migrations.Sample(ctx, s, migrations.SampleOptions{})
	if err != nil {
		return fmt.Errorf("sample data: %w", err)
	}
	fmt.Fprintf(stdout, "sample data: %s\n", stats)
	return nil
}

// serve runs the API, the frontend and (by default) the feed workers until
// ctx is cancelled (SIGINT, SIGTERM), then shuts down in order: readiness
// off, in-flight requests finish, workers checkpoint, the store closes.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig("serve", args, getenv, stdout)
	if err != nil {
		return err
	}
	logger := newLogger(stdout, cfg.LogLevel)
	s, desc, err := openStore(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := prepare(ctx, cfg, s, stdout); err != nil {
		return err
	}
	secret, err := cfg.secret()
	if err != nil {
		return err
	}

	var wk *feedworkers.Workers
	if cfg.Workers {
		if wk, err = feedworkers.Start(ctx, s, feedConfig(logger)); err != nil {
			return fmt.Errorf("feed workers: %w", err)
		}
	}
	var stopping atomic.Bool
	deps := api.Deps{
		Store:     s,
		Logger:    logger,
		Secret:    secret,
		DevMode:   cfg.Dev,
		Web:       web.Handler(),
		RateLimit: api.RateLimit{User: cfg.RateUser, Anon: cfg.RateAnon, Window: time.Minute},
		// Below the server's WriteTimeout, so the 503 still reaches the client.
		RequestTimeout: cfg.RequestTimeout,
		Ready: func(ctx context.Context) error {
			if stopping.Load() {
				return errors.New("shutting down")
			}
			return s.Ping(ctx)
		},
	}
	if wk != nil {
		deps.Feeds = wk
	}
	srv := newHTTPServer(ctx, cfg.Addr, api.NewServer(deps))
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shop: store %s; dev mode %v; feed workers %v\n", desc, cfg.Dev, cfg.Workers)
	fmt.Fprintf(stdout, "shop: listening on http://%s\n", displayAddr(ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
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
	if wk != nil {
		// Finish the current batch, checkpoint, release the leases.
		if err := wk.Stop(sctx); err != nil {
			logger.Error("stopping feed workers", "err", err)
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "shop: stopped")
	return shutErr
}

// newHTTPServer is the shop's http.Server: its timeouts bound what a slow
// or hostile client can hold (a client sending headers one byte at a time
// is cut off after 5 s). Requests run on a context that outlives ctx, so
// a cancelled ctx lets them finish within the shutdown grace.
func newHTTPServer(ctx context.Context, addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

func displayAddr(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		return fmt.Sprintf("localhost:%d", ta.Port)
	}
	return a.String()
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// feedConfig is the feed workers' configuration: defaults, with failed
// batches logged (they are retried, then dead-lettered).
func feedConfig(logger *slog.Logger) feedworkers.Config {
	return feedworkers.Config{
		OnBatch: func(ctx context.Context, processor, lease string, items int, ru float64, err error) {
			if err != nil {
				logger.WarnContext(ctx, "feed batch failed", "processor", processor, "lease", lease, "items", items, "err", err)
			}
		},
	}
}
