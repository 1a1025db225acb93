// Package faults wraps a store.Store and injects the failures a Cosmos
// account produces under load: throttling (429 with x-ms-retry-after-ms),
// unavailability (503), timeouts and added latency; and one it produces
// when a logical partition is full (403 with substatus 1014). Tests use it to prove
// that the API answers 503 with Retry-After instead of 500 and that the
// feed workers ride through failures and converge once the store heals.
//
// Faults are drawn from a seeded generator, so a run with the same seed
// and the same sequence of calls injects the same faults. Injection can be
// switched off and on while the store is in use (Heal, Break).
package faults

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Op names one kind of store operation, the unit a Rule selects.
type Op string

// The operations a rule can select.
const (
	OpRead           Op = "read"
	OpCreate         Op = "create"
	OpReplace        Op = "replace"
	OpUpsert         Op = "upsert"
	OpPatch          Op = "patch"
	OpDelete         Op = "delete"
	OpBatch          Op = "batch"
	OpQuery          Op = "query"
	OpReadFeedRanges Op = "readFeedRanges"
	OpReadChangeFeed Op = "readChangeFeed"
	OpPing           Op = "ping"
)

// Writes are the operations that change an item.
var Writes = []Op{OpCreate, OpReplace, OpUpsert, OpPatch, OpDelete, OpBatch}

// Rule injects faults into the operations it selects. The rates are
// probabilities of one call failing that way; their sum must not exceed
// 1. Latency is added before every selected call, failed or not.
type Rule struct {
	// Ops selects operations; empty selects all of them.
	Ops []Op
	// Containers selects containers by name; empty selects all (Ping
	// belongs to no container and is selected only by an empty list).
	Containers []string

	// Throttle is the rate of EUNAVAILABLE with RetryAfter set: what the
	// Cosmos adapter returns for a 429 once the SDK's retries are spent.
	Throttle float64
	// Unavailable is the rate of EUNAVAILABLE without RetryAfter (a 503).
	Unavailable float64
	// Timeout is the rate of calls that hang until the context's deadline
	// (at most Config.TimeoutAfter) and then fail EUNAVAILABLE.
	Timeout float64
	// PartitionFull is the rate of writes failing EPARTITIONFULL: what
	// the Cosmos adapter returns for a 403 with substatus 1014, a logical
	// partition at its 20 GB. Reads and queries it selects never fail so.
	PartitionFull float64
	// Latency is added to every selected call.
	Latency time.Duration
}

func (r Rule) selects(op Op, container string) bool {
	if len(r.Ops) > 0 && !slices.Contains(r.Ops, op) {
		return false
	}
	if len(r.Containers) > 0 && !slices.Contains(r.Containers, container) {
		return false
	}
	return true
}

// Config configures a faulty store. The first rule that selects a call
// decides its fate.
type Config struct {
	// Seed makes the injected faults repeatable.
	Seed  uint64
	Rules []Rule
	// RetryAfter is the wait a throttled call asks for (default 100 ms,
	// a typical x-ms-retry-after-ms).
	RetryAfter time.Duration
	// TimeoutAfter bounds how long a timed-out call hangs when its context
	// has no earlier deadline (default 1 s).
	TimeoutAfter time.Duration
	// Disabled starts the store healed; Break switches injection on.
	Disabled bool
	// ShortPages, when above 0, caps every cross-partition query page at
	// that many items while injection is on: a page of a Cosmos container
	// with several physical partitions may hold fewer items than its
	// limit while more follow, and only an empty continuation ends the
	// query. Callers that stop at a short page show here.
	ShortPages int
}

// Counts is what a faulty store has seen and injected so far.
type Counts struct {
	Calls       int64 `json:"calls"`       // calls a rule selected while injection was on
	Throttled   int64 `json:"throttled"`   // failed as a 429
	Unavailable int64 `json:"unavailable"` // failed as a 503
	TimedOut    int64 `json:"timedOut"`    // hung, then failed
	Full        int64 `json:"full"`        // failed as a 403/1014, partition full
	Delayed     int64 `json:"delayed"`     // got added latency
}

// Injected is the number of calls that failed.
func (c Counts) Injected() int64 { return c.Throttled + c.Unavailable + c.TimedOut + c.Full }

// Store is a store.Store that injects faults into the one it wraps.
type Store struct {
	inner store.Store
	cfg   Config
	on    atomic.Bool

	mu  sync.Mutex
	rng *rand.Rand

	calls, throttled, unavailable, timedOut, full, delayed atomic.Int64
}

var _ store.Store = (*Store)(nil)

// Wrap returns s with faults injected as cfg says.
func Wrap(s store.Store, cfg Config) *Store {
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 100 * time.Millisecond
	}
	if cfg.TimeoutAfter <= 0 {
		cfg.TimeoutAfter = time.Second
	}
	f := &Store{inner: s, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	f.on.Store(!cfg.Disabled)
	return f
}

// Heal switches injection off: every call goes straight to the store.
func (f *Store) Heal() { f.on.Store(false) }

// Break switches injection (back) on.
func (f *Store) Break() { f.on.Store(true) }

// Counts returns what was injected so far.
func (f *Store) Counts() Counts {
	return Counts{
		Calls:       f.calls.Load(),
		Throttled:   f.throttled.Load(),
		Unavailable: f.unavailable.Load(),
		TimedOut:    f.timedOut.Load(),
		Full:        f.full.Load(),
		Delayed:     f.delayed.Load(),
	}
}

// fault is the fate of one call.
type fault int

const (
	none fault = iota
	throttle
	unavailable
	timeout
	partitionFull
)

// inject decides the call's fate, sleeps its latency, and returns the
// error to fail it with (nil: let the call through).
func (f *Store) inject(ctx context.Context, op Op, container string) error {
	if !f.on.Load() {
		return nil
	}
	i := slices.IndexFunc(f.cfg.Rules, func(r Rule) bool { return r.selects(op, container) })
	if i < 0 {
		return nil
	}
	r := f.cfg.Rules[i]
	f.calls.Add(1)
	f.mu.Lock()
	p := f.rng.Float64()
	f.mu.Unlock()
	fate := none
	switch {
	case p < r.Throttle:
		fate = throttle
	case p < r.Throttle+r.Unavailable:
		fate = unavailable
	case p < r.Throttle+r.Unavailable+r.Timeout:
		fate = timeout
	case p < r.Throttle+r.Unavailable+r.Timeout+r.PartitionFull && slices.Contains(Writes, op):
		fate = partitionFull
	}
	if r.Latency > 0 {
		f.delayed.Add(1)
		if err := sleep(ctx, r.Latency); err != nil {
			return err
		}
	}
	switch fate {
	case throttle:
		f.throttled.Add(1)
		return &domain.Error{Code: domain.EUNAVAILABLE, Message: "the store is busy (429): retry later", RetryAfter: f.cfg.RetryAfter}
	case unavailable:
		f.unavailable.Add(1)
		return domain.Errorf(domain.EUNAVAILABLE, "the store is unavailable (503)")
	case timeout:
		f.timedOut.Add(1)
		_ = sleep(ctx, f.cfg.TimeoutAfter)
		return domain.Errorf(domain.EUNAVAILABLE, "the store did not answer in time")
	case partitionFull:
		f.full.Add(1)
		return domain.Errorf(domain.EPARTITIONFULL, "the logical partition is full (403, substatus 1014)")
	}
	return nil
}

// sleep waits d or until ctx ends; a cancelled wait is EUNAVAILABLE, as a
// request abandoned by its caller is on Cosmos.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return domain.Errorf(domain.EUNAVAILABLE, "the store call was abandoned: %v", ctx.Err())
	}
}

// Container returns the named container with faults injected.
func (f *Store) Container(name string) store.Container {
	return &container{f: f, name: name, c: f.inner.Container(name)}
}

// EnsureContainer is never faulted: it is a deployment step, not traffic.
func (f *Store) EnsureContainer(ctx context.Context, def store.ContainerDef) (bool, error) {
	return f.inner.EnsureContainer(ctx, def)
}

// Ping is faulted by rules with no container list, so /readyz can fail.
func (f *Store) Ping(ctx context.Context) error {
	if err := f.inject(ctx, OpPing, ""); err != nil {
		return err
	}
	return f.inner.Ping(ctx)
}

// Close closes the wrapped store.
func (f *Store) Close() error { return f.inner.Close() }
