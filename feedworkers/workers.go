package feedworkers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// Processor names: each names the leases of one watched container.
const (
	ProductsProcessor  = "products"
	ReviewsProcessor   = "reviews"
	OrdersProcessor    = "orders"
	InventoryProcessor = "inventory"
)

// Config configures the shop's feed workers; the zero value is the
// default (see changefeed.Config for each field's default).
type Config struct {
	// Processor configures each of the shop's processors (see
	// changefeed.Config for each field and its default: the instance,
	// lease timings, page size, attempts, backoff, StartFromNow); Start
	// sets Name and Watched, and OnBatch and TraceBatch from the fields
	// below, per processor.
	Processor changefeed.Config
	// FanoutConcurrency bounds the concurrent cart writes of one product
	// change (default 16).
	FanoutConcurrency int
	// OnBatch, when set, sees every attempt at every batch.
	OnBatch func(ctx context.Context, processor, lease string, items int, ru float64, err error)
	// TraceBatch, when set, wraps every attempt at every batch (see
	// changefeed.Config.TraceBatch).
	TraceBatch func(ctx context.Context, processor, lease string) (context.Context, func(items int, ru float64, err error))
	// Sweeper times the carrying on of checkouts nobody carries on any
	// more (zero fields: DefaultSweepEvery, domain.CheckoutStall,
	// domain.CheckoutExpiry).
	Sweeper Sweeper
}

// Workers are the running processors of the shop.
type Workers struct {
	handlers    *Handlers
	processors  []*changefeed.Processor
	stopSweeper context.CancelFunc
	swept       chan struct{}
}

// Start runs the shop's four processors (docs/feeds.md lists their
// handlers) as instance cfg.Processor.Instance, and the checkout
// sweeper: products feed → view, categories, cart lines, rename, delete;
// reviews feed → product review stats; orders feed → the workflow's
// effects (stock, money, cart), ordersByStatus; inventory feed → product
// availability.
// The handlers write through w (NewHandlers), the process's one write
// layer. st should be the raw store: Start meters it so each batch's
// Request Units are counted (build w's repositories over store.Metered
// too), and every call under Start's context rides its throttles
// (store.WithPatience). While the store is unavailable Start keeps trying
// to set up the leases, until ctx ends (startRetrying).
func Start(ctx context.Context, st store.Store, w *writes.Writes, cfg Config) (*Workers, error) {
	// Patient: a throttled call waits its Retry-After and goes on, so a
	// batch keeps what it has done (store.Patient says why).
	ctx = store.WithPatience(ctx)
	st = store.Patient(store.Metered(st))
	if cfg.Processor.Instance == "" {
		cfg.Processor.Instance = changefeed.DefaultInstance()
	}
	h := NewHandlers(st, w, HandlersConfig{FanoutConcurrency: cfg.FanoutConcurrency})
	wk := &Workers{handlers: h}
	for _, def := range []struct {
		name, watched string
		handler       changefeed.Handler
	}{
		{ProductsProcessor, store.ProductsContainer, h.Products},
		{ReviewsProcessor, store.ReviewsContainer, h.Reviews},
		{OrdersProcessor, store.OrdersContainer, h.Orders},
		{InventoryProcessor, store.InventoryContainer, h.Inventory},
	} {
		pc := cfg.Processor
		pc.Name, pc.Watched = def.name, def.watched
		name := def.name
		if hook := cfg.OnBatch; hook != nil {
			pc.OnBatch = func(ctx context.Context, lease string, items int, ru float64, err error) {
				hook(ctx, name, lease, items, ru, err)
			}
		}
		if trace := cfg.TraceBatch; trace != nil {
			pc.TraceBatch = func(ctx context.Context, lease string) (context.Context, func(int, float64, error)) {
				return trace(ctx, name, lease)
			}
		}
		p, err := changefeed.NewProcessor(st.Container(def.watched), st.Container(store.LeasesContainer), def.handler, pc)
		if err == nil {
			err = startRetrying(ctx, p, cfg.Processor.Backoff)
		}
		if err != nil {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return nil, errors.Join(err, wk.Stop(stopCtx))
		}
		wk.processors = append(wk.processors, p)
	}
	r := cfg.Sweeper.withDefaults()
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	wk.stopSweeper = stop
	wk.swept = make(chan struct{})
	go func() {
		defer close(wk.swept)
		r.run(rctx, h)
	}()
	return wk, nil
}

// maxStartBackoff caps the wait between two attempts at starting a
// processor.
const maxStartBackoff = 5 * time.Second

// startRetrying starts p, and while the store is throttled or unavailable
// (EUNAVAILABLE: transient, Cosmos asks to retry a 429 after
// x-ms-retry-after-ms) tries again with a doubling backoff until ctx
// ends, so a process starting while Cosmos is briefly unavailable waits
// for it instead of exiting. Any other error is returned at once: a
// missing container or a bad configuration does not heal by waiting.
func startRetrying(ctx context.Context, p *changefeed.Processor, backoff time.Duration) error {
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	for {
		err := p.Start(ctx)
		if !domain.IsCode(err, domain.EUNAVAILABLE) {
			return err
		}
		wait := backoff
		if e, ok := errors.AsType[*domain.Error](err); ok && e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("start %s: %w (gave up: %v)", p.Name(), err, ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, maxStartBackoff)
	}
}

// Stop stops every processor: current batches finish and are
// checkpointed, leases are released.
func (w *Workers) Stop(ctx context.Context) error {
	if w.stopSweeper != nil {
		w.stopSweeper()
		select {
		case <-w.swept:
		case <-ctx.Done():
		}
	}
	var errs []error
	for _, p := range w.processors {
		errs = append(errs, p.Stop(ctx))
	}
	return errors.Join(errs...)
}

// Handlers returns the handlers the processors run (for their stats).
func (w *Workers) Handlers() *Handlers { return w.handlers }

// FeedStatus reports, per processor, whether it is caught up, the changes
// still ahead, its last checkpoint and the age of its oldest change not
// yet applied, then per lease the owner, the lag estimate, the last
// checkpoint and the dead letters (for the api package's FeedStatus and
// the metrics). It costs one point read per lease another instance holds
// (changefeed's Status), none for this instance's; the rest is summed from
// those. The list is never nil.
func (w *Workers) FeedStatus(ctx context.Context) ([]changefeed.ProcessorStatus, error) {
	out := []changefeed.ProcessorStatus{}
	for _, p := range w.processors {
		leases, err := p.Status(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, changefeed.Summarize(p.Name(), leases, time.Now()))
	}
	return out, nil
}

// FanoutStats reports what the cart fan-out of the products processor
// has cost in this process so far.
func (w *Workers) FanoutStats() repo.FanoutStats { return w.handlers.FanoutStats() }
