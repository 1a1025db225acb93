package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
)

// setupTelemetry builds the process's traces and metrics from the standard
// OpenTelemetry environment (OTEL_TRACES_EXPORTER: none by default) and its
// logger: JSON lines when stdout is not a terminal, text when it is, each
// record carrying the trace and span ids of its context.
func setupTelemetry(ctx context.Context, cfg config, getenv func(string) string, stdout io.Writer) (*telemetry.Telemetry, *slog.Logger, error) {
	tel, err := telemetry.Setup(ctx, getenv, stdout, "shop")
	if err != nil {
		return nil, nil, err
	}
	return tel, newLogger(stdout, cfg.LogLevel), nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return telemetry.NewLogger(w, telemetry.IsTerminal(w), l)
}

// shutdownTelemetry flushes the spans still buffered for the exporter.
func shutdownTelemetry(tel *telemetry.Telemetry, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		logger.Warn("flushing telemetry", "err", err)
	}
}

// adapterName labels the store on spans and metrics.
func adapterName(cfg config) string {
	if cfg.Cosmos {
		return "cosmos"
	}
	return "embedded"
}

// feedConfig is the feed workers' configuration: defaults, with every
// batch a span and a measurement (lease, items, Request Units), and failed
// batches logged (they are retried, then dead-lettered).
func feedConfig(logger *slog.Logger, tel *telemetry.Telemetry) feedworkers.Config {
	return feedworkers.Config{
		// The batch's span wraps the handler, so its store calls are children.
		TraceBatch: tel.StartFeedBatch,
		OnBatch: func(ctx context.Context, processor, lease string, items int, ru float64, err error) {
			if err != nil {
				logger.WarnContext(ctx, "feed batch failed", "processor", processor, "lease", lease, "items", items, "err", err)
			}
		},
	}
}

// observeFeeds reports the feed processors' lag, dead letters and fan-out
// (the feed workers' and the webhook relay's) at every metric collection
// (each scrape of /metrics).
func observeFeeds(tel *telemetry.Telemetry, wk feedSet) {
	tel.ObserveFeeds(func(ctx context.Context) []telemetry.FeedGauge {
		processors, err := wk.FeedStatus(ctx)
		if err != nil {
			return nil
		}
		var out []telemetry.FeedGauge
		for _, p := range processors {
			g := telemetry.FeedGauge{Processor: p.Processor, Lag: map[string]int64{}}
			for _, l := range p.Leases {
				if l.LagEstimate >= 0 {
					g.Lag[l.Lease] = l.LagEstimate
				}
				g.DeadLetters += int64(l.DeadLetters)
			}
			if p.Processor == feedworkers.ProductsProcessor {
				// The cart fan-out is the products handler's.
				g.CartsUpdated = int64(wk.FanoutStats().CartsUpdated)
			}
			out = append(out, g)
		}
		return out
	})
}

// observePartitions reports the store's Request Units and throttles per
// physical partition at every metric collection.
func observePartitions(tel *telemetry.Telemetry, tr store.ThroughputReporter) {
	tel.ObservePartitions(func(context.Context) []store.PartitionThroughput { return tr.Throughput() })
}
