package faults_test

import (
	"path/filepath"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"shop/store"
	"shop/store/embedded"
	"shop/store/faults"
	"shop/store/storetest"
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
	}, storetest.Options{})
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
	}, storetest.Options{})
}
