package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/store"
)

var partitions = []store.PartitionThroughput{
	{Container: "carts", Partition: store.FeedRange{Min: "", Max: "40000000"}, Provisioned: 100, LastSecond: 98, RequestCharge: 1234.5, Throttled: 7},
	{Container: "carts", Partition: store.FeedRange{Min: "40000000", Max: "80000000"}, Provisioned: 100, RequestCharge: 12},
}

func TestPartitionMetrics(t *testing.T) {
	f := newFixture(t)
	f.tel.ObservePartitions(func(context.Context) []store.PartitionThroughput { return partitions })
	rm := f.collect(t)
	hot := []attribute.KeyValue{attribute.String("db.collection.name", "carts"), telemetry.PartitionKey.String("-40000000")}
	cold := []attribute.KeyValue{attribute.String("db.collection.name", "carts"), telemetry.PartitionKey.String("40000000-80000000")}
	tests := []struct {
		name   string
		metric string
		attrs  []attribute.KeyValue
		want   float64
	}{
		{"ChargeOfTheHotPartition", "shop.store.partition.request_charge", hot, 1234.5},
		{"ChargeOfAnother", "shop.store.partition.request_charge", cold, 12},
		{"Throttled", "shop.store.partition.throttled", hot, 7},
		{"NoneThrottled", "shop.store.partition.throttled", cold, 0},
		{"Provisioned", "shop.store.partition.provisioned", hot, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := point(t, rm, tt.metric, tt.attrs...); !ok || got != tt.want {
				t.Errorf("%s = %v (present %v), want %v", tt.metric, got, ok, tt.want)
			}
		})
	}
}

// TestPartitionMetricsServed: /metrics names them as Prometheus does.
func TestPartitionMetricsServed(t *testing.T) {
	tel, _ := setup(t, nil, io.Discard)
	tel.ObservePartitions(func(context.Context) []store.PartitionThroughput { return partitions })
	body := serve(t, tel.MetricsHandler(), http.MethodGet, "/metrics", nil).Body.String()
	for _, want := range []string{
		`shop_store_partition_request_charge_total{db_collection_name="carts"`,
		`shop_store_partition_throttled_total{db_collection_name="carts"`,
		`shop_store_partition_provisioned_per_second{db_collection_name="carts"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// point returns the value of the one point of a float or int counter or
// gauge whose attributes include want.
func point(t *testing.T, rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (float64, bool) {
	t.Helper()
	var sets []attribute.Set
	var values []float64
	switch d := metricNamed(t, rm, name).(type) {
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			sets, values = append(sets, p.Attributes), append(values, p.Value)
		}
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets, values = append(sets, p.Attributes), append(values, float64(p.Value))
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			sets, values = append(sets, p.Attributes), append(values, p.Value)
		}
	default:
		t.Fatalf("%s is %T, want a counter or a gauge", name, d)
	}
	for i, set := range sets {
		if has(set, want...) {
			return values[i], true
		}
	}
	return 0, false
}
