package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/metric"
)

// ConnGauge is what the server's connection bounds report when metrics
// are collected (api/httpserver/conns.go).
type ConnGauge struct {
	// Open is the connections held open now.
	Open int64
	// Evicted and Refused are running totals: idle connections closed to
	// make room for a new one over a bound, and new ones answered 503
	// because every connection in the bound was busy.
	Evicted, Refused int64
}

type connInstruments struct {
	gauges lockedFunc[ConnGauge]
}

func (c *connInstruments) init(m metric.Meter) error {
	open, err := m.Int64ObservableGauge("shop.http.connections",
		metric.WithDescription("Connections the server holds open, idle or busy."),
		metric.WithUnit("{connection}"))
	if err != nil {
		return err
	}
	evicted, err := m.Int64ObservableCounter("shop.http.connections.evicted",
		metric.WithDescription("Idle connections closed to make room for a new one over a bound (SHOP_MAX_CONNS, SHOP_MAX_CONNS_PER_ADDR)."),
		metric.WithUnit("{connection}"))
	if err != nil {
		return err
	}
	refused, err := m.Int64ObservableCounter("shop.http.connections.refused",
		metric.WithDescription("New connections answered 503 over a bound, every connection in it busy."),
		metric.WithUnit("{connection}"))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		read := c.gauges.get()
		if read == nil {
			return nil
		}
		g := read(ctx)
		o.ObserveInt64(open, g.Open)
		o.ObserveInt64(evicted, g.Evicted)
		o.ObserveInt64(refused, g.Refused)
		return nil
	}, open, evicted, refused)
	return err
}

// ObserveConnections sets the function read at every metric collection
// for the connection metrics. A later call replaces the earlier one.
func (t *Telemetry) ObserveConnections(read func(ctx context.Context) ConnGauge) {
	t.conns.gauges.set(read)
}
