package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/reference-shop/shop/store"
)

// PartitionKey labels a measurement of one physical partition: its feed
// range, e.g. "00-3F" (with db.collection.name, its container).
const PartitionKey = attribute.Key("shop.store.partition")

// partitionInstruments are the provisioned throughput of each physical
// partition and what it spent, read from the store at every collection:
// a hot partition is one whose charge rate nears its provisioned RU/s
// and whose throttled count grows while the others' do not.
type partitionInstruments struct {
	read lockedFunc[[]store.PartitionThroughput]
}

func (p *partitionInstruments) init(m metric.Meter) error {
	// Running totals read from the store, hence observable counters.
	charge, err := m.Float64ObservableCounter("shop.store.partition.request_charge",
		metric.WithDescription("Request Units charged on a physical partition since the process started."),
		metric.WithUnit("{request_unit}"))
	if err != nil {
		return err
	}
	throttled, err := m.Int64ObservableCounter("shop.store.partition.throttled",
		metric.WithDescription("Calls a physical partition refused over its provisioned throughput (429)."),
		metric.WithUnit("{request}"))
	if err != nil {
		return err
	}
	provisioned, err := m.Float64ObservableGauge("shop.store.partition.provisioned",
		metric.WithDescription("A physical partition's share of its container's provisioned Request Units per second (0: unlimited)."),
		metric.WithUnit("{request_unit}/s"))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		read := p.read.get()
		if read == nil {
			return nil
		}
		for _, pt := range read(ctx) {
			at := metric.WithAttributes(semconv.DBCollectionName(pt.Container), PartitionKey.String(pt.Partition.String()))
			o.ObserveFloat64(charge, pt.RequestCharge, at)
			o.ObserveInt64(throttled, pt.Throttled, at)
			o.ObserveFloat64(provisioned, pt.Provisioned, at)
		}
		return nil
	}, charge, throttled, provisioned)
	return err
}

// ObservePartitions sets the function read at every metric collection
// (every scrape of /metrics) for the per-partition throughput metrics:
// shop.store.partition.request_charge, .throttled and .provisioned, by
// container and partition. A later call replaces the earlier one.
func (t *Telemetry) ObservePartitions(read func(ctx context.Context) []store.PartitionThroughput) {
	t.partition.read.set(read)
}
