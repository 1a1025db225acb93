package telemetry_test

import (
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// fixture is Telemetry over an in-memory span recorder and a manual metric
// reader, and an embedded store (traced and metered) holding product p1.
type fixture struct {
	tel    *telemetry.Telemetry
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	store  store.Store
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	tel, err := telemetry.New(tp, mp)
	if err != nil {
		t.Fatal(err)
	}
	f.tel = tel
	f.store = newStore(t, tp, mp)
	return f
}

// newStore is an embedded store holding products p1 and p2 and an empty
// carts container, traced and metered.
func newStore(t *testing.T, tp trace.TracerProvider, mp metric.MeterProvider) store.Store {
	t.Helper()
	es, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	for _, def := range []store.ContainerDef{
		{ID: "products", PartitionKeyPath: "/id"},
		{ID: "carts", PartitionKeyPath: "/userId"},
	} {
		def.IndexingPolicy = store.IndexingPolicy{IncludedPaths: []string{"/*"}}
		if _, err := es.EnsureContainer(t.Context(), def); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"p1", "p2"} {
		if _, err := es.Container("products").Create(t.Context(), id, []byte(`{"id":"`+id+`","name":"Mug"}`)); err != nil {
			t.Fatal(err)
		}
	}
	return store.Metered(store.Traced(es, tp, mp, "embedded"))
}

// span returns the one ended span with that name.
func (f fixture) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	var names []string
	for _, s := range f.spans.Ended() {
		names = append(names, s.Name())
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("spans named %q: %d, want 1 (spans: %q)", name, len(found), names)
	}
	return found[0]
}

func (f fixture) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := f.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func attr(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func metricNamed(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Aggregation {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// has reports whether set holds every one of want.
func has(set attribute.Set, want ...attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// histogram merges the data points of a float or int histogram whose
// attributes include want.
func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (count uint64, sum float64) {
	t.Helper()
	switch h := metricNamed(t, rm, name).(type) {
	case metricdata.Histogram[float64]:
		for _, p := range h.DataPoints {
			if has(p.Attributes, want...) {
				count, sum = count+p.Count, sum+p.Sum
			}
		}
	case metricdata.Histogram[int64]:
		for _, p := range h.DataPoints {
			if has(p.Attributes, want...) {
				count, sum = count+p.Count, sum+float64(p.Sum)
			}
		}
	default:
		t.Fatalf("%s is %T, want a histogram", name, h)
	}
	return count, sum
}

// sum adds the points of a counter or gauge whose attributes include want,
// and says whether there was any.
func sum(t *testing.T, rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (int64, bool) {
	t.Helper()
	var points []metricdata.DataPoint[int64]
	switch d := metricNamed(t, rm, name).(type) {
	case metricdata.Sum[int64]:
		points = d.DataPoints
	case metricdata.Gauge[int64]:
		points = d.DataPoints
	default:
		t.Fatalf("%s is %T, want an int64 sum or gauge", name, d)
	}
	var n int64
	found := false
	for _, p := range points {
		if has(p.Attributes, want...) {
			n, found = n+p.Value, true
		}
	}
	return n, found
}
