package store

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/domain"
)

// Operation names of the OpenTelemetry semantic conventions for Azure
// Cosmos DB (db.operation.name), so that a trace of the embedded store reads
// like one of Cosmos.
const (
	opReadItem        = "read_item"
	opCreateItem      = "create_item"
	opReplaceItem     = "replace_item"
	opUpsertItem      = "upsert_item"
	opPatchItem       = "patch_item"
	opDeleteItem      = "delete_item"
	opExecuteBatch    = "execute_batch"
	opQueryItems      = "query_items"
	opQueryChangeFeed = "query_change_feed"
)

// Attribute keys the conventions do not define.
const (
	// AdapterKey says which adapter served the call ("embedded" or
	// "cosmos"); db.system.name stays azure.cosmosdb on both because the
	// embedded store copies Cosmos's semantics and charges.
	AdapterKey = attribute.Key("shop.store.adapter")
	// PartitionsTouchedKey is how many physical partitions a query ran on:
	// more than one is a cross-partition fan-out (query-avoid-cross-partition).
	PartitionsTouchedKey = attribute.Key("shop.store.partitions_touched")
)

// legacySystem is db.system of the conventions before 1.26; trace viewers
// that predate db.system.name still group Cosmos spans by it.
var legacySystem = attribute.String("db.system", "cosmosdb")

// ChargeBuckets are the bucket boundaries of every histogram of Request
// Units, per store operation here and per request or feed batch in
// api/telemetry. They fit Cosmos charges: a point read of 1 KB is 1 RU, a
// write a few, a checkout batch or a query page tens (the SDK's default
// buckets start at 5). Each call returns a new slice.
func ChargeBuckets() []float64 {
	return []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
}

// durationBuckets are the conventions' advice for db.client.operation.duration.
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// Traced wraps a Store so that every item operation is a client span and a
// set of measurements named by the OpenTelemetry semantic conventions for
// Azure Cosmos DB: span "read_item products" with db.system.name,
// db.namespace, db.collection.name, db.operation.name and the Request Unit
// charge in azure.cosmosdb.operation.request_charge. adapter labels which
// store served it ("embedded" or "cosmos").
//
// Metrics: shop.store.request_charge (histogram of RU), shop.store.operations
// and shop.store.throttled (429s) counters and db.client.operation.duration,
// all by container and operation.
func Traced(s Store, tp trace.TracerProvider, mp metric.MeterProvider, adapter string) Store {
	const scope = "github.com/reference-shop/shop/store"
	meter := mp.Meter(scope)
	var errs [4]error
	in := &instruments{
		tracer:  tp.Tracer(scope),
		adapter: adapter,
	}
	in.charge, errs[0] = meter.Float64Histogram("shop.store.request_charge",
		metric.WithDescription("Request Units charged per store operation."),
		metric.WithUnit("{request_unit}"),
		metric.WithExplicitBucketBoundaries(ChargeBuckets()...))
	in.ops, errs[1] = meter.Int64Counter("shop.store.operations",
		metric.WithDescription("Store operations, failed ones included (Cosmos charges for them)."),
		metric.WithUnit("{operation}"))
	in.throttled, errs[2] = meter.Int64Counter("shop.store.throttled",
		metric.WithDescription("Store operations refused with 429: the container is over its provisioned throughput."),
		metric.WithUnit("{operation}"))
	in.duration, errs[3] = meter.Float64Histogram("db.client.operation.duration",
		metric.WithDescription("Duration of store operations."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err := errors.Join(errs[:]...); err != nil {
		// The metric API hands back working no-op instruments with the
		// error, so the store keeps serving; the global handler logs it.
		otel.Handle(err)
	}
	return tracedStore{Store: s, in: in}
}

type instruments struct {
	tracer    trace.Tracer
	adapter   string
	charge    metric.Float64Histogram
	duration  metric.Float64Histogram
	ops       metric.Int64Counter
	throttled metric.Int64Counter
	// labels caches the labels of each (container, operation): built once,
	// they cost nothing per call. A map under a lock rather than a
	// sync.Map, whose interface keys would allocate on every call.
	mu     sync.RWMutex
	labels map[[2]string]*labels
}

// labels are what every span and measurement of one operation on one
// container carries.
type labels struct {
	spanName string
	start    []trace.SpanStartOption
	set      attribute.Set
	measure  *measureOpts
	// failed are the measurements' labels of each error status, built
	// on first use: a missing item is an everyday answer (a new user's
	// summary, an unused idempotency key), and a set built at every call
	// cost a store read a tenth of its CPU.
	failed sync.Map // error status → *measureOpts
}

// measureOpts is one set of labels as the option lists the instruments
// take, built once: the instruments are interfaces, so a list built at
// each call (a variadic argument) would be an allocation per measurement.
type measureOpts struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

func measuredWith(m metric.MeasurementOption) *measureOpts {
	return &measureOpts{add: []metric.AddOption{m}, record: []metric.RecordOption{m}}
}

// failedWith returns the labels of the measurements of an error of status.
func (l *labels) failedWith(status string) *measureOpts {
	if m, ok := l.failed.Load(status); ok {
		return m.(*measureOpts)
	}
	m := measuredWith(metric.WithAttributes(append(l.set.ToSlice(), semconv.ErrorTypeKey.String(status))...))
	l.failed.Store(status, m)
	return m
}

func (in *instruments) labelsFor(container, operation string) *labels {
	key := [2]string{container, operation}
	in.mu.RLock()
	l, ok := in.labels[key]
	in.mu.RUnlock()
	if ok {
		return l
	}
	set := attribute.NewSet(
		semconv.DBSystemNameAzureCosmosDB,
		semconv.DBCollectionName(container),
		semconv.DBOperationName(operation),
		AdapterKey.String(in.adapter),
	)
	l = &labels{
		// Span name per the database conventions: "{operation} {collection}".
		spanName: operation + " " + container,
		start: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(set.ToSlice()...),
			trace.WithAttributes(legacySystem, semconv.DBNamespace(dbNamespace)),
		},
		set:     set,
		measure: measuredWith(metric.WithAttributeSet(set)),
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if actual, ok := in.labels[key]; ok {
		return actual
	}
	if in.labels == nil {
		in.labels = map[[2]string]*labels{}
	}
	in.labels[key] = l
	return l
}

type tracedStore struct {
	Store
	in *instruments
}

func (s tracedStore) Container(name string) Container {
	return tracedContainer{c: s.Store.Container(name), name: name, in: s.in}
}

type tracedContainer struct {
	c    Container
	name string
	in   *instruments
}

// operation is one store call in flight: its span and what its
// measurements will be labeled with.
type operation struct {
	ctx    context.Context
	span   trace.Span
	start  time.Time
	labels *labels
	in     *instruments
}

func (c tracedContainer) start(ctx context.Context, name string) (context.Context, operation) {
	l := c.in.labelsFor(c.name, name)
	op := operation{ctx: ctx, start: time.Now(), labels: l, in: c.in}
	parent := trace.SpanContextFromContext(ctx)
	switch {
	case name == opQueryChangeFeed && !parent.IsValid():
		// Every lease polls its feed range every few seconds, mostly
		// finding nothing: a poll outside any trace (a feed batch's) is
		// measured but gets no trace of its own.
		op.span = noSpan
		return ctx, op
	case parent.IsValid() && !parent.IsSampled():
		// Under a span that is not sampled (no exporter, or the sampler
		// said no) a child is not sampled either by the parent-based
		// samplers the shop uses: starting one would only cost the
		// request. The call is still measured.
		op.span = noSpan
		return ctx, op
	}
	op.ctx, op.span = c.in.tracer.Start(ctx, l.spanName, l.start...)
	return op.ctx, op
}

// noSpan stands for the span of a call that gets none: it records nothing
// and ending it ends nothing (never the parent's).
var noSpan = trace.SpanFromContext(context.Background())

// dbNamespace is db.namespace: the Cosmos database every container lives
// in (migrations.Database, which imports this package).
const dbNamespace = "shop"

// end records the outcome. Failed calls are charged and counted too: Cosmos
// bills a 404 or a 412 like any other request.
func (op operation) end(ru float64, err error, extra ...attribute.KeyValue) {
	if op.span.IsRecording() {
		defer op.span.End()
		op.span.SetAttributes(append(extra, semconv.AzureCosmosDBOperationRequestCharge(ru))...)
	}

	measure := op.labels.measure
	if err != nil {
		status := statusCode(err)
		errorType := semconv.ErrorTypeKey.String(status)
		op.span.SetAttributes(semconv.DBResponseStatusCode(status), errorType)
		// A missing item is an answer, not a failure: the shop reads to
		// find out whether something exists (a cart, an idempotency key).
		if !domain.IsCode(err, domain.ENOTFOUND) {
			op.span.SetStatus(codes.Error, domain.ErrorMessage(err))
		}
		measure = op.labels.failedWith(status)
		if status == "429" {
			op.in.throttled.Add(op.ctx, 1, op.labels.measure.add...)
		}
	}
	op.in.ops.Add(op.ctx, 1, measure.add...)
	op.in.charge.Record(op.ctx, ru, measure.record...)
	op.in.duration.Record(op.ctx, time.Since(op.start).Seconds(), measure.record...)
}

// statusCodes gives the Cosmos status code each domain code stands for: the
// Cosmos adapter maps exactly these statuses to these codes at its boundary.
var statusCodes = map[string]int{
	domain.ENOTFOUND:      404,
	domain.ECONFLICT:      409,
	domain.EPRECONDITION:  412,
	domain.EINVALID:       400,
	domain.ETOOLARGE:      413,
	domain.EUNAVAILABLE:   503,
	domain.EPARTITIONFULL: 403,
	domain.EINTERNAL:      500,
}

// statusCode returns err's Cosmos status as db.response.status_code wants
// it (a string). A throttled call is EUNAVAILABLE with a RetryAfter: 429.
func statusCode(err error) string {
	if e, ok := errors.AsType[*domain.Error](err); ok && e.Code == domain.EUNAVAILABLE && e.RetryAfter > 0 {
		return "429"
	}
	if s, ok := statusCodes[domain.ErrorCode(err)]; ok {
		return strconv.Itoa(s)
	}
	return "500"
}

func (c tracedContainer) Read(ctx context.Context, pk, id string) (ItemResponse, error) {
	ctx, op := c.start(ctx, opReadItem)
	r, err := c.c.Read(ctx, pk, id)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (ItemResponse, error) {
	ctx, op := c.start(ctx, opReadItem)
	r, err := c.c.ReadIfNoneMatch(ctx, pk, id, etag)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) Create(ctx context.Context, pk string, item []byte) (ItemResponse, error) {
	ctx, op := c.start(ctx, opCreateItem)
	r, err := c.c.Create(ctx, pk, item)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *WriteOptions) (ItemResponse, error) {
	ctx, op := c.start(ctx, opReplaceItem)
	r, err := c.c.Replace(ctx, pk, id, item, opts)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) Upsert(ctx context.Context, pk string, item []byte, opts *WriteOptions) (ItemResponse, error) {
	ctx, op := c.start(ctx, opUpsertItem)
	r, err := c.c.Upsert(ctx, pk, item, opts)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) Patch(ctx context.Context, pk, id string, ops []PatchOp, opts *PatchOptions) (ItemResponse, error) {
	ctx, op := c.start(ctx, opPatchItem)
	r, err := c.c.Patch(ctx, pk, id, ops, opts)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) Delete(ctx context.Context, pk, id string, opts *WriteOptions) (ItemResponse, error) {
	ctx, op := c.start(ctx, opDeleteItem)
	r, err := c.c.Delete(ctx, pk, id, opts)
	op.end(r.RequestCharge, err)
	return r, err
}

func (c tracedContainer) ExecuteBatch(ctx context.Context, pk string, ops []BatchOp) (BatchResponse, error) {
	ctx, op := c.start(ctx, opExecuteBatch)
	r, err := c.c.ExecuteBatch(ctx, pk, ops)
	op.end(r.RequestCharge, err, semconv.DBOperationBatchSize(len(ops)))
	return r, err
}

func (c tracedContainer) Query(ctx context.Context, q Query) (QueryPage, error) {
	ctx, op := c.start(ctx, opQueryItems)
	p, err := c.c.Query(ctx, q)
	op.end(p.RequestCharge, err,
		semconv.DBResponseReturnedRows(len(p.Items)),
		PartitionsTouchedKey.Int(p.PartitionsTouched))
	return p, err
}

// ReadFeedRanges is metadata with no charge on the port: no span.
func (c tracedContainer) ReadFeedRanges(ctx context.Context) ([]FeedRange, error) {
	return c.c.ReadFeedRanges(ctx)
}

func (c tracedContainer) ReadChangeFeed(ctx context.Context, r FeedRange, continuation string, maxItems int) (ChangeFeedPage, error) {
	ctx, op := c.start(ctx, opQueryChangeFeed)
	p, err := c.c.ReadChangeFeed(ctx, r, continuation, maxItems)
	op.end(p.RequestCharge, err, semconv.DBResponseReturnedRows(len(p.Items)))
	return p, err
}
