package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// tracedFixture is an embedded store behind store.Traced, with an in-memory
// span recorder and a manual metric reader.
type tracedFixture struct {
	store  store.Store
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newTracedFixture(t *testing.T, inner func(store.Store) store.Store) tracedFixture {
	t.Helper()
	es, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	if _, err := es.EnsureContainer(t.Context(), store.ContainerDef{
		ID:               "products",
		PartitionKeyPath: "/id",
		IndexingPolicy:   store.IndexingPolicy{IncludedPaths: []string{"/*"}},
	}); err != nil {
		t.Fatal(err)
	}
	var s store.Store = es
	if inner != nil {
		s = inner(s)
	}
	f := tracedFixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	f.store = store.Traced(s, f.tp, mp, "embedded")
	return f
}

// only returns the single span the recorder holds.
func (f tracedFixture) only(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := f.spans.Ended()
	if got, want := len(ended), 1; got != want {
		t.Fatalf("spans = %d, want %d", got, want)
	}
	return ended[0]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value)
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestTracedSpans(t *testing.T) {
	product := []byte(`{"id":"p1","type":"product","name":"Mug"}`)
	seed := func(t *testing.T, c store.Container) store.ItemResponse {
		t.Helper()
		r, err := c.Create(t.Context(), "p1", product)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name       string
		seed       bool
		call       func(ctx context.Context, c store.Container) (float64, error)
		spanName   string
		operation  string
		status     codes.Code
		statusCode string // db.response.status_code; "" on success
		extra      map[attribute.Key]attribute.Value
	}{
		{
			name: "PointRead", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Read(ctx, "p1", "p1")
				return r.RequestCharge, err
			},
			spanName: "read_item products", operation: "read_item",
		},
		{
			// A missing item is an answer: the span is not an error.
			name: "ReadNotFound",
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Read(ctx, "nope", "nope")
				return r.RequestCharge, err
			},
			spanName: "read_item products", operation: "read_item", statusCode: "404",
		},
		{
			name: "CreateConflict", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Create(ctx, "p1", product)
				return r.RequestCharge, err
			},
			spanName: "create_item products", operation: "create_item",
			status: codes.Error, statusCode: "409",
		},
		{
			name: "ReplaceStaleIfMatch", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Replace(ctx, "p1", "p1", product, &store.WriteOptions{IfMatch: `"stale"`})
				return r.RequestCharge, err
			},
			spanName: "replace_item products", operation: "replace_item",
			status: codes.Error, statusCode: "412",
		},
		{
			name: "Upsert",
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Upsert(ctx, "p1", product, nil)
				return r.RequestCharge, err
			},
			spanName: "upsert_item products", operation: "upsert_item",
		},
		{
			name: "Patch", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Patch(ctx, "p1", "p1", []store.PatchOp{{Op: store.PatchSet, Path: "/name", Value: "Cup"}}, nil)
				return r.RequestCharge, err
			},
			spanName: "patch_item products", operation: "patch_item",
		},
		{
			name: "Delete", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.Delete(ctx, "p1", "p1", nil)
				return r.RequestCharge, err
			},
			spanName: "delete_item products", operation: "delete_item",
		},
		{
			name: "Batch", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				r, err := c.ExecuteBatch(ctx, "p1", []store.BatchOp{
					{Kind: store.BatchReplace, ID: "p1", Item: product},
					{Kind: store.BatchUpsert, Item: product},
				})
				return r.RequestCharge, err
			},
			spanName: "execute_batch products", operation: "execute_batch",
			extra: map[attribute.Key]attribute.Value{"db.operation.batch.size": attribute.IntValue(2)},
		},
		{
			name: "SinglePartitionQuery", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				p, err := c.Query(ctx, store.Query{PartitionKey: "p1", Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: "product"}}})
				return p.RequestCharge, err
			},
			spanName: "query_items products", operation: "query_items",
			extra: map[attribute.Key]attribute.Value{
				"db.response.returned_rows":     attribute.IntValue(1),
				"shop.store.partitions_touched": attribute.IntValue(1),
			},
		},
		{
			name: "ChangeFeed", seed: true,
			call: func(ctx context.Context, c store.Container) (float64, error) {
				ranges, err := c.ReadFeedRanges(ctx)
				if err != nil {
					return 0, err
				}
				var ru float64
				for _, r := range ranges {
					// One range is enough for a span; the item lives in one.
					p, err := c.ReadChangeFeed(ctx, r, "", 10)
					if err != nil || len(p.Items) > 0 {
						return p.RequestCharge, err
					}
					ru = p.RequestCharge
				}
				return ru, nil
			},
			spanName: "query_change_feed products", operation: "query_change_feed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTracedFixture(t, nil)
			c := f.store.Container("products")
			if tt.seed {
				seed(t, c)
			}
			f.spans.Reset()

			ctx, parent := f.tp.Tracer("test").Start(t.Context(), "parent")
			ru, err := tt.call(ctx, c)
			parent.End()
			if got, want := err != nil, tt.statusCode != ""; got != want {
				t.Fatalf("error = %v, want error: %v", err, want)
			}

			var span sdktrace.ReadOnlySpan
			for _, s := range f.spans.Ended() {
				if s.Name() == tt.spanName {
					// The change feed case reads several ranges: keep the last.
					span = s
				}
			}
			if span == nil {
				t.Fatalf("no span %q", tt.spanName)
			}
			if got, want := span.SpanKind(), trace.SpanKindClient; got != want {
				t.Errorf("kind = %v, want %v", got, want)
			}
			if got, want := span.Parent().SpanID(), parent.SpanContext().SpanID(); got != want {
				t.Errorf("parent = %v, want the caller's span %v", got, want)
			}
			if got, want := span.Status().Code, tt.status; got != want {
				t.Errorf("status = %v, want %v", got, want)
			}
			if ru <= 0 {
				t.Errorf("request charge = %v, want > 0", ru)
			}
			want := map[attribute.Key]attribute.Value{
				"db.system.name":     attribute.StringValue("azure.cosmosdb"),
				"db.system":          attribute.StringValue("cosmosdb"),
				"db.namespace":       attribute.StringValue("shop"),
				"db.collection.name": attribute.StringValue("products"),
				"db.operation.name":  attribute.StringValue(tt.operation),
				"shop.store.adapter": attribute.StringValue("embedded"),
				"azure.cosmosdb.operation.request_charge": attribute.Float64Value(ru),
			}
			if tt.statusCode != "" {
				want["db.response.status_code"] = attribute.StringValue(tt.statusCode)
				want["error.type"] = attribute.StringValue(tt.statusCode)
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			if tt.operation == "query_change_feed" {
				// Which range holds the item depends on the hash: only check
				// the attribute is there.
				want["db.response.returned_rows"] = attrs(span)["db.response.returned_rows"]
			}
			if diff := cmp.Diff(want, attrs(span), cmp.AllowUnexported(attribute.Value{})); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
		})
	}
}

// throttledStore answers every read with a 429, as Cosmos does when a
// container is over its provisioned throughput.
type throttledStore struct{ store.Store }

func (s throttledStore) Container(name string) store.Container {
	return throttledContainer{s.Store.Container(name)}
}

type throttledContainer struct{ store.Container }

func (throttledContainer) Read(context.Context, string, string) (store.ItemResponse, error) {
	err := domain.Errorf(domain.EUNAVAILABLE, "request rate is large")
	err.RetryAfter = 50 * time.Millisecond
	return store.ItemResponse{RequestCharge: 0.5}, err
}

func TestTracedThrottled(t *testing.T) {
	f := newTracedFixture(t, func(s store.Store) store.Store { return throttledStore{s} })
	_, err := f.store.Container("products").Read(t.Context(), "p1", "p1")
	if got, want := domain.ErrorCode(err), domain.EUNAVAILABLE; got != want {
		t.Fatalf("code = %q, want %q", got, want)
	}
	span := f.only(t)
	if got, want := attrs(span)["db.response.status_code"].AsString(), "429"; got != want {
		t.Errorf("db.response.status_code = %q, want %q", got, want)
	}
	if got, want := span.Status().Code, codes.Error; got != want {
		t.Errorf("status = %v, want %v", got, want)
	}
	m := collect(t, f.reader)
	if got, want := counterSum(t, m, "shop.store.throttled", "read_item"), int64(1); got != want {
		t.Errorf("shop.store.throttled = %d, want %d", got, want)
	}
}

func TestTracedFeedPollOutsideTrace(t *testing.T) {
	f := newTracedFixture(t, nil)
	c := f.store.Container("products")
	ranges, err := c.ReadFeedRanges(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadChangeFeed(t.Context(), ranges[0], "", 10); err != nil {
		t.Fatal(err)
	}
	if got := len(f.spans.Ended()); got != 0 {
		t.Errorf("a poll outside any trace made %d spans, want 0", got)
	}
	if got, want := counterSum(t, collect(t, f.reader), "shop.store.operations", "query_change_feed"), int64(1); got != want {
		t.Errorf("operations{query_change_feed} = %d, want %d: measured all the same", got, want)
	}
}

func TestTracedMetrics(t *testing.T) {
	f := newTracedFixture(t, nil)
	c := f.store.Container("products")
	var ru float64
	for _, id := range []string{"a", "b", "c"} {
		r, err := c.Create(t.Context(), id, []byte(`{"id":"`+id+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		ru += r.RequestCharge
	}
	r, err := c.Read(t.Context(), "a", "a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Read(t.Context(), "zz", "zz")
	if !domain.IsCode(err, domain.ENOTFOUND) {
		t.Fatalf("err = %v, want not found", err)
	}

	m := collect(t, f.reader)
	if got, want := counterSum(t, m, "shop.store.operations", "create_item"), int64(3); got != want {
		t.Errorf("operations{create_item} = %d, want %d", got, want)
	}
	if got, want := counterSum(t, m, "shop.store.operations", "read_item"), int64(2); got != want {
		t.Errorf("operations{read_item} = %d, want %d (a 404 is charged and counted)", got, want)
	}
	if got, want := counterSum(t, m, "shop.store.throttled", "read_item"), int64(0); got != want {
		t.Errorf("throttled = %d, want %d", got, want)
	}
	creates := histogram(t, m, "shop.store.request_charge", "create_item")
	if got, want := creates.Count, uint64(3); got != want {
		t.Errorf("request_charge{create_item} count = %d, want %d", got, want)
	}
	if got, want := creates.Sum, ru; got != want {
		t.Errorf("request_charge{create_item} sum = %v, want %v", got, want)
	}
	reads := histogram(t, m, "shop.store.request_charge", "read_item")
	if reads.Sum < r.RequestCharge {
		t.Errorf("request_charge{read_item} sum = %v, want at least the hit's %v", reads.Sum, r.RequestCharge)
	}
	if got, want := histogram(t, m, "db.client.operation.duration", "read_item").Count, uint64(2); got != want {
		t.Errorf("duration{read_item} count = %d, want %d", got, want)
	}
}

func collect(t *testing.T, r *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func find(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

func labeled(set attribute.Set, operation string) bool {
	c, _ := set.Value("db.collection.name")
	op, _ := set.Value("db.operation.name")
	return c.AsString() == "products" && op.AsString() == operation
}

// counterSum adds the counter's points for products/operation, over every
// error.type; a counter never recorded sums to 0.
func counterSum(t *testing.T, rm metricdata.ResourceMetrics, name, operation string) int64 {
	t.Helper()
	m, ok := find(rm, name)
	if !ok {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want a Sum[int64]", name, m.Data)
	}
	var n int64
	for _, p := range sum.DataPoints {
		if labeled(p.Attributes, operation) {
			n += p.Value
		}
	}
	return n
}

// histogram merges the histogram's points for products/operation.
func histogram(t *testing.T, rm metricdata.ResourceMetrics, name, operation string) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m, ok := find(rm, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is %T, want a Histogram[float64]", name, m.Data)
	}
	var merged metricdata.HistogramDataPoint[float64]
	for _, p := range h.DataPoints {
		if labeled(p.Attributes, operation) {
			merged.Count += p.Count
			merged.Sum += p.Sum
		}
	}
	return merged
}

// BenchmarkTracedRead shows what a span and the measurements add to a point
// read of the embedded store.
func BenchmarkTracedRead(b *testing.B) {
	es, err := embedded.Open(filepath.Join(b.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer es.Close()
	if _, err := es.EnsureContainer(b.Context(), store.ContainerDef{
		ID: "products", PartitionKeyPath: "/id",
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}},
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := es.Container("products").Create(b.Context(), "p1", []byte(`{"id":"p1"}`)); err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	for _, bb := range []struct {
		name string
		s    store.Store
	}{
		{"Plain", es},
		{"Traced", store.Traced(es, tp, mp, "embedded")},
	} {
		b.Run(bb.name, func(b *testing.B) {
			c := bb.s.Container("products")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Read(b.Context(), "p1", "p1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestTracedFollowsParentSampling(t *testing.T) {
	f := newTracedFixture(t, nil)
	// A request span that was not sampled (no exporter, or the sampler
	// said no), as a caller's traceparent with flags 00 makes it.
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(t.Context(), parent)
	if _, err := f.store.Container("products").Read(ctx, "p1", "p1"); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Fatalf("read = %v, want ENOTFOUND", err)
	}
	if got := len(f.spans.Ended()); got != 0 {
		t.Errorf("a call under an unsampled span made %d spans, want 0", got)
	}
	if got, want := counterSum(t, collect(t, f.reader), "shop.store.operations", "read_item"), int64(1); got != want {
		t.Errorf("operations{read_item} = %d, want %d: measured all the same", got, want)
	}

	// Under a sampled parent the call has its span.
	sampled := parent.WithTraceFlags(trace.FlagsSampled)
	ctx = trace.ContextWithRemoteSpanContext(t.Context(), sampled)
	if _, err := f.store.Container("products").Read(ctx, "p1", "p1"); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Fatalf("read = %v, want ENOTFOUND", err)
	}
	if got := f.only(t).Parent().SpanID(); got != sampled.SpanID() {
		t.Errorf("span parent = %s, want %s", got, sampled.SpanID())
	}
}
