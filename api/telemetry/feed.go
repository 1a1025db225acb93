package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Attribute keys of the change-feed processor.
const (
	ProcessorKey = attribute.Key("shop.feed.processor") // "products", "reviews", "orders", "inventory"
	LeaseKey     = attribute.Key("shop.feed.lease")     // the feed range, e.g. "00-3F"
	ItemsKey     = attribute.Key("shop.feed.items")     // changed items in the batch
)

// FeedGauge is what one change-feed processor reports when metrics are
// collected.
type FeedGauge struct {
	Processor string
	// Lag is the estimated number of changes not yet handled, by lease (the
	// feed range it covers). A negative estimate (unknown) is not reported.
	Lag map[string]int64
	// DeadLetters counts the documents parked after too many failures.
	DeadLetters int64
	// CartsUpdated is how many carts this processor has rewritten since
	// the process started (the price fan-out): a running total.
	CartsUpdated int64
}

type feedInstruments struct {
	batches metric.Int64Counter
	items   metric.Int64Counter
	charge  metric.Float64Histogram
	gauges  lockedFunc[[]FeedGauge]
}

func (f *feedInstruments) init(m metric.Meter) error {
	var err error
	if f.batches, err = m.Int64Counter("shop.feed.batches",
		metric.WithDescription("Change-feed batches handled, by processor; failed ones carry error.type."),
		metric.WithUnit("{batch}")); err != nil {
		return err
	}
	if f.items, err = m.Int64Counter("shop.feed.items",
		metric.WithDescription("Changed items handed to a feed handler."),
		metric.WithUnit("{item}")); err != nil {
		return err
	}
	if f.charge, err = m.Float64Histogram("shop.feed.request_charge",
		metric.WithDescription("Request Units spent by one change-feed batch: the read and the handler's writes."),
		metric.WithUnit("{request_unit}"),
		metric.WithExplicitBucketBoundaries(store.ChargeBuckets()...)); err != nil {
		return err
	}
	lag, err := m.Int64ObservableGauge("shop.feed.lag",
		metric.WithDescription("Estimated changes not yet handled, per lease."),
		metric.WithUnit("{item}"))
	if err != nil {
		return err
	}
	dead, err := m.Int64ObservableGauge("shop.feed.dead_letters",
		metric.WithDescription("Documents parked after too many failed attempts, per processor."),
		metric.WithUnit("{item}"))
	if err != nil {
		return err
	}
	// A running total read from the workers, hence an observable counter.
	carts, err := m.Int64ObservableCounter("shop.feed.carts_updated",
		metric.WithDescription("Open carts whose line copies a price or name change rewrote."),
		metric.WithUnit("{cart}"))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		read := f.gauges.get()
		if read == nil {
			return nil
		}
		for _, g := range read(ctx) {
			p := ProcessorKey.String(g.Processor)
			o.ObserveInt64(dead, g.DeadLetters, metric.WithAttributes(p))
			o.ObserveInt64(carts, g.CartsUpdated, metric.WithAttributes(p))
			for lease, n := range g.Lag {
				if n >= 0 {
					o.ObserveInt64(lag, n, metric.WithAttributes(p, LeaseKey.String(lease)))
				}
			}
		}
		return nil
	}, lag, dead, carts)
	return err
}

// ObserveFeeds sets the function read at every metric collection (every
// scrape of /metrics) for the lag, dead-letter and carts-updated metrics;
// ctx bounds the collection. A later call replaces the earlier one.
func (t *Telemetry) ObserveFeeds(read func(ctx context.Context) []FeedGauge) {
	t.feed.gauges.set(read)
}

// StartFeedBatch starts the span "feed batch <processor>" of one batch of
// one lease; the store calls made with the returned context are its
// children. Call the returned end with the outcome.
func (t *Telemetry) StartFeedBatch(ctx context.Context, processor, lease string) (context.Context, func(items int, ru float64, err error)) {
	ctx, span := t.tracer.Start(ctx, "feed batch "+processor,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(ProcessorKey.String(processor), LeaseKey.String(lease)))
	return ctx, func(items int, ru float64, err error) {
		defer span.End()
		span.SetAttributes(ItemsKey.Int(items), semconv.AzureCosmosDBOperationRequestCharge(ru))
		p := ProcessorKey.String(processor)
		byOutcome := []attribute.KeyValue{p}
		if err != nil {
			code := semconv.ErrorTypeKey.String(domain.ErrorCode(err))
			span.SetStatus(codes.Error, domain.ErrorMessage(err))
			span.SetAttributes(code)
			byOutcome = append(byOutcome, code)
		}
		t.feed.batches.Add(ctx, 1, metric.WithAttributes(byOutcome...))
		t.feed.items.Add(ctx, int64(items), metric.WithAttributes(p))
		t.feed.charge.Record(ctx, ru, metric.WithAttributes(p))
	}
}
