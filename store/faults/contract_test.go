package faults_test

import (
	"path/filepath"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/faults"
	"github.com/reference-shop/shop/store/storetest"
)

// The decorators of the port change nothing a call means: the whole
// contract (conditional patches, batch patches and their options among
// it) passes through metering over tracing (the server's order) over
// faults switched off, on the embedded store.
func TestContractThroughTheDecorators(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		es, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { es.Close() })
		faulty := faults.Wrap(es, faults.Config{Disabled: true})
		return store.Metered(store.Traced(faulty, tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider(), "embedded"))
	}, storetest.Options{Elsewhere: hooksOnTheEmbeddedStore})
}

// TestContractWithShortCrossPartitionPages holds the contract to pages as
// a Cosmos container of several physical partitions returns them: a
// cross-partition page may hold fewer items than its limit, more to come.
func TestContractWithShortCrossPartitionPages(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		es, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { es.Close() })
		return faults.Wrap(es, faults.Config{ShortPages: 3})
	}, storetest.Options{Elsewhere: hooksOnTheEmbeddedStore})
}

// hooksOnTheEmbeddedStore: the decorators pass no test hook through (a
// throttle or a split is the store's, not the decorator's), so these two
// tests run where the hooks are, on the embedded store itself.
var hooksOnTheEmbeddedStore = map[string]string{
	storetest.ThrottledOverBudget:   "the decorators forward no hook: store/embedded's TestContract runs it on the embedded store",
	storetest.ChangeFeedAcrossSplit: "the decorators forward no hook: store/embedded's TestContract runs it on the embedded store",
}
