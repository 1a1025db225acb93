package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/domain"
)

func TestFeedBatchSpan(t *testing.T) {
	f := newFixture(t)
	ctx, end := f.tel.StartFeedBatch(t.Context(), "products", "00-3F")
	r, err := f.store.Container("products").Read(ctx, "p1", "p1")
	if err != nil {
		t.Fatal(err)
	}
	end(7, r.RequestCharge, nil)

	batch := f.span(t, "feed batch products")
	if got, want := batch.SpanKind(), trace.SpanKindConsumer; got != want {
		t.Errorf("kind = %v, want %v", got, want)
	}
	if got, want := batch.Status().Code, codes.Unset; got != want {
		t.Errorf("status = %v, want %v", got, want)
	}
	for _, want := range []attribute.KeyValue{
		telemetry.ProcessorKey.String("products"),
		telemetry.LeaseKey.String("00-3F"),
		telemetry.ItemsKey.Int(7),
		attribute.Float64("azure.cosmosdb.operation.request_charge", r.RequestCharge),
	} {
		if got, ok := attr(batch.Attributes(), want.Key); !ok || got != want.Value {
			t.Errorf("%s = %v, want %v", want.Key, got.Emit(), want.Value.Emit())
		}
	}
	read := f.span(t, "read_item products")
	if got, want := read.Parent().SpanID(), batch.SpanContext().SpanID(); got != want {
		t.Errorf("store span parent = %s, want the batch span %s", got, want)
	}
}

func TestFeedBatchFailure(t *testing.T) {
	f := newFixture(t)
	_, end := f.tel.StartFeedBatch(t.Context(), "orders", "40-7F")
	end(3, 2.5, domain.Errorf(domain.EPRECONDITION, "cart changed"))

	batch := f.span(t, "feed batch orders")
	if got, want := batch.Status().Code, codes.Error; got != want {
		t.Errorf("status = %v, want %v", got, want)
	}
	if got, _ := attr(batch.Attributes(), "error.type"); got.AsString() != domain.EPRECONDITION {
		t.Errorf("error.type = %q, want %q", got.AsString(), domain.EPRECONDITION)
	}
}

func TestFeedMetrics(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	batch := func(processor, lease string, items int, ru float64, err error) {
		_, end := f.tel.StartFeedBatch(ctx, processor, lease)
		end(items, ru, err)
	}
	batch("products", "00-3F", 4, 4.25, nil)
	batch("products", "40-7F", 2, 2.5, nil)
	batch("reviews", "00-3F", 1, 1, domain.Errorf(domain.EUNAVAILABLE, "throttled"))
	f.tel.ObserveFeeds(func(context.Context) []telemetry.FeedGauge {
		return []telemetry.FeedGauge{
			{Processor: "products", Lag: map[string]int64{"00-3F": 12, "40-7F": 0}, DeadLetters: 1, CartsUpdated: 5},
			{Processor: "reviews", Lag: map[string]int64{"00-3F": -1}},
		}
	})
	rm := f.collect(t)
	products := telemetry.ProcessorKey.String("products")
	reviews := telemetry.ProcessorKey.String("reviews")

	tests := []struct {
		name   string
		metric string
		attrs  []attribute.KeyValue
		want   int64
		found  bool
	}{
		{"BatchesByProcessor", "shop.feed.batches", []attribute.KeyValue{products}, 2, true},
		{"FailedBatchHasErrorType", "shop.feed.batches", []attribute.KeyValue{reviews, attribute.String("error.type", domain.EUNAVAILABLE)}, 1, true},
		{"Items", "shop.feed.items", []attribute.KeyValue{products}, 6, true},
		{"CartsUpdated", "shop.feed.carts_updated", []attribute.KeyValue{products}, 5, true},
		{"LagPerLease", "shop.feed.lag", []attribute.KeyValue{products, telemetry.LeaseKey.String("00-3F")}, 12, true},
		{"CaughtUpLease", "shop.feed.lag", []attribute.KeyValue{products, telemetry.LeaseKey.String("40-7F")}, 0, true},
		{"UnknownLagNotReported", "shop.feed.lag", []attribute.KeyValue{reviews}, 0, false},
		{"DeadLetters", "shop.feed.dead_letters", []attribute.KeyValue{products}, 1, true},
		{"NoDeadLetters", "shop.feed.dead_letters", []attribute.KeyValue{reviews}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := sum(t, rm, tt.metric, tt.attrs...)
			if got != tt.want || found != tt.found {
				t.Errorf("%s = %d (present %v), want %d (present %v)", tt.metric, got, found, tt.want, tt.found)
			}
		})
	}
	if n, s := histogram(t, rm, "shop.feed.request_charge", products); n != 2 || s != 6.75 {
		t.Errorf("shop.feed.request_charge{products}: count %d sum %v, want 2 and 6.75", n, s)
	}
}
