package store

import (
	"context"
	"sync"
)

// Meter counts the store operations and Request Units spent on behalf of
// one unit of work (an HTTP request, a feed batch). The API reads it into
// X-Store-Operations, X-Request-Charge and Server-Timing, so every response
// says what it cost.
type Meter struct {
	mu    sync.Mutex
	ops   int
	ru    float64
	nanos int64
	// retries counts optimistic-concurrency retries (a lost If-Match race).
	retries int
}

type meterKey struct{}

// WithMeter returns a context that carries a new Meter.
func WithMeter(ctx context.Context) (context.Context, *Meter) {
	m := new(Meter)
	return context.WithValue(ctx, meterKey{}, m), m
}

// MeterFrom returns the context's Meter, or nil.
func MeterFrom(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Add records one store operation of ru Request Units that took nanos.
// A nil Meter records nothing.
func (m *Meter) Add(ru float64, nanos int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.ops++
	m.ru += ru
	m.nanos += nanos
	m.mu.Unlock()
}

// Totals returns the operations, Request Units and store time recorded.
func (m *Meter) Totals() (ops int, ru float64, nanos int64) {
	if m == nil {
		return 0, 0, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops, m.ru, m.nanos
}

// AddRetry records one optimistic-concurrency retry.
func (m *Meter) AddRetry() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.retries++
	m.mu.Unlock()
}

// Retries returns the optimistic-concurrency retries recorded.
func (m *Meter) Retries() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.retries
}
