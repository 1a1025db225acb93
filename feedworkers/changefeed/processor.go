// Package changefeed is a change-feed processor over the store port: the
// Go SDK for Cosmos DB reads the change feed but has no processor. It
// holds one lease per feed range of a watched container, shares the
// leases among the instances that run it, hands each page of changes to
// a handler and checkpoints after the handler succeeded; a document the
// handler keeps failing on is parked in a dead letter. When a physical
// partition splits, the lease of its range becomes one lease per child at
// the parent's checkpoint (leaseset.go). It knows nothing of the
// documents it carries: its own (leases, dead letters) live in a lease
// container (docs.go, which gives a lease's life cycle). docs/feeds.md
// describes the rules.
package changefeed

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Batch is one page of changed documents, as read from the feed.
type Batch struct {
	// Items are the changed documents, raw JSON. A handler decodes them
	// itself: only it knows their types.
	Items [][]byte
	// MayBeReplay marks a batch that may already have been applied, in
	// whole or in part: the first batch a lease loop reads after taking a
	// lease (its previous owner may have applied it and stopped before
	// the checkpoint), a batch read again after a failed checkpoint, and
	// every retry of a failed batch. A handler that skips work because a
	// write found nothing to change must not skip it then: the first
	// application may have written and stopped before the work that
	// write called for.
	MayBeReplay bool
}

// Handler applies one batch. It must be idempotent: a batch is applied
// again after a crash between the handler and the checkpoint.
type Handler func(ctx context.Context, b Batch) error

// BatchHook observes every attempt at a batch (for spans and metrics):
// the lease, the number of items, the Request Units the handler spent and
// its error.
type BatchHook func(ctx context.Context, lease string, items int, ru float64, err error)

// Processor reads the change feed of one container, one lease per feed
// range, and hands each page to its handler.
type Processor struct {
	cfg     Config
	handler Handler
	watched store.Container
	docs    docs

	mu sync.Mutex
	// ranges are the watched container's feed ranges as last read, and
	// leases the ids of the processor's leases as last synced; resync
	// asks the next balancing pass to sync them again (leaseset.go).
	ranges []store.FeedRange
	leases []string
	resync bool
	owned  map[string]*leaseWorker

	// started is set by Start, running once it succeeded.
	started  bool
	running  bool
	stopOnce sync.Once
	// stopping asks the lease loops to finish their batch and return;
	// cancel aborts everything (a crash, or a Stop whose deadline passed).
	stopping chan struct{}
	cancel   context.CancelFunc
	workers  sync.WaitGroup
	quit     chan struct{}
	loopDone chan struct{}
	// kick asks the loop for a balancing pass now (after a split).
	kick chan struct{}
}

// NewProcessor returns a processor of the changes of watched, keeping
// its leases and dead letters in leases (a container with pk /id) and
// handing each batch to handler; Start runs it.
func NewProcessor(watched, leases store.Container, handler Handler, cfg Config) (*Processor, error) {
	if watched == nil || leases == nil || handler == nil {
		return nil, domain.Errorf(domain.EINVALID, "a processor needs a watched container, a lease container and a handler")
	}
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return &Processor{
		cfg:      cfg,
		handler:  handler,
		watched:  watched,
		docs:     docs{leases},
		owned:    map[string]*leaseWorker{},
		stopping: make(chan struct{}),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		kick:     make(chan struct{}, 1),
	}, nil
}

// Name returns the processor's name.
func (p *Processor) Name() string { return p.cfg.Name }

// Start builds the lease set from the leases that exist, creates a lease
// for each feed range none covers (the first instance to get there wins
// each Create; see leaseset.go), takes its share, and keeps renewing and
// balancing in the background until Stop, or until ctx is cancelled
// (which abandons the current batches without checkpoint, as a crash
// would).
func (p *Processor) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return domain.Errorf(domain.ECONFLICT, "processor %s already started", p.cfg.Name)
	}
	p.started = true
	p.mu.Unlock()
	if err := p.sync(ctx); err != nil {
		// Not started: Start may be called again.
		p.mu.Lock()
		p.started = false
		p.mu.Unlock()
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	p.cancel, p.running = cancel, true
	p.mu.Unlock()
	p.balance(runCtx)
	go p.loop(runCtx)
	return nil
}

// loop renews the owned leases and rebalances every RenewEvery. While
// stopping it keeps renewing, so a long last batch does not lose its
// lease, but takes nothing new.
func (p *Processor) loop(ctx context.Context) {
	defer close(p.loopDone)
	t := time.NewTicker(p.cfg.RenewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.quit:
			return
		case <-t.C:
		case <-p.kick:
		}
		p.renew(ctx)
		select {
		case <-p.stopping:
		default:
			p.balance(ctx)
		}
	}
}

// renew writes a fresh heartbeat on every owned lease, with the lag the
// lease loop saw last: the write is made anyway, so the other instances'
// Status sees a lag at most RenewEvery old for nothing more. A 412 means
// the lease was stolen (its owner stopped renewing in time, or a
// balancing instance took it): the lease loop is stopped.
func (p *Processor) renew(ctx context.Context) {
	for _, w := range p.ownedWorkers() {
		err := w.write(ctx, func(l *lease) { l.Heartbeat, l.LagEstimate = time.Now().UTC(), w.lag.Load() })
		if lostLease(err) {
			p.drop(w)
		}
	}
}

// balance reads every lease of the processor (point reads: a handful of
// feed ranges) and takes this instance's share. When the feed ranges
// changed or a lease is gone, it syncs the lease set first.
func (p *Processor) balance(ctx context.Context) {
	if p.stale(ctx) {
		if err := p.sync(ctx); err != nil {
			return
		}
	}
	ids := p.leaseIDs()
	all := make([]lease, 0, len(ids))
	for _, id := range ids {
		l, err := p.docs.readLease(ctx, id)
		if domain.IsCode(err, domain.ENOTFOUND) {
			// Split by another instance: sync on the next pass.
			p.mu.Lock()
			p.resync = true
			p.mu.Unlock()
			continue
		}
		if err != nil {
			return
		}
		all = append(all, l)
	}
	now := time.Now().UTC()
	for _, l := range plan(all, p.cfg.Instance, now, p.cfg.LeaseExpiry) {
		l.Owner, l.Heartbeat = p.cfg.Instance, now
		// Acquire or steal: If-Match on the version we read, so of two
		// instances grabbing the same lease exactly one wins.
		got, err := p.docs.replaceLease(ctx, l)
		if err != nil {
			continue
		}
		p.startWorker(ctx, got)
	}
}

func (p *Processor) startWorker(ctx context.Context, l lease) {
	wctx, cancel := context.WithCancel(ctx)
	w := &leaseWorker{p: p, id: l.ID, l: l, cancel: cancel}
	w.lag.Store(l.LagEstimate)
	p.mu.Lock()
	if old := p.owned[l.ID]; old != nil {
		old.cancel()
	}
	p.owned[l.ID] = w
	select {
	case <-p.stopping:
		// Stop is under way: the lease stays listed so Stop releases
		// it, but no loop starts (and the WaitGroup Stop waits on is
		// not added to while it waits).
		p.mu.Unlock()
		return
	default:
	}
	p.workers.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.workers.Done()
		w.run(wctx)
	}()
}

// leaseIDs returns the ids of the processor's leases as last synced.
func (p *Processor) leaseIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.leases)
}

// Owned lists the leases this instance holds, sorted.
func (p *Processor) Owned() []string {
	var ids []string
	for _, w := range p.ownedWorkers() {
		ids = append(ids, w.id)
	}
	slices.Sort(ids)
	return ids
}

func (p *Processor) ownedWorkers() []*leaseWorker {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*leaseWorker, 0, len(p.owned))
	for _, w := range p.owned {
		out = append(out, w)
	}
	return out
}

// drop forgets a lease this instance no longer owns and stops its loop.
func (p *Processor) drop(w *leaseWorker) {
	w.cancel()
	p.mu.Lock()
	if p.owned[w.id] == w {
		delete(p.owned, w.id)
	}
	p.mu.Unlock()
}

// Stop finishes the batch each lease loop is on, checkpoints it, and
// releases the leases (owner "", heartbeat zero) so other instances take
// them at once instead of waiting for the expiry. If ctx ends first the
// loops are abandoned without checkpoint and the leases simply expire.
func (p *Processor) Stop(ctx context.Context) error {
	p.mu.Lock()
	running, cancel := p.running, p.cancel
	p.mu.Unlock()
	if !running {
		return nil
	}
	var err error
	p.stopOnce.Do(func() {
		p.mu.Lock()
		close(p.stopping)
		p.mu.Unlock()
		done := make(chan struct{})
		go func() { p.workers.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			cancel()
			<-done
			err = domain.Errorf(domain.EUNAVAILABLE, "processor %s stopped before its batches finished: %v", p.cfg.Name, ctx.Err())
		}
		close(p.quit)
		<-p.loopDone
		for _, w := range p.ownedWorkers() {
			_ = w.write(ctx, func(l *lease) { l.Owner, l.Heartbeat = "", time.Time{} })
			p.drop(w)
		}
		cancel()
	})
	return err
}

func lostLease(err error) bool {
	return domain.IsCode(err, domain.EPRECONDITION) || domain.IsCode(err, domain.ENOTFOUND)
}
