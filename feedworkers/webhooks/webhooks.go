// Package webhooks delivers the shop's events (domain/events.go) to the
// receivers subscribed to them (domain/webhooks.go), in two halves that
// never wait for each other:
//
//   - the Relay, a change-feed handler of the orders and products
//     containers (processors RelayOrders and RelayProducts, with their own
//     leases), writes one pending Delivery per event and subscription
//     into the webhooks container. It never calls a receiver, so a slow
//     or dead receiver never slows the shop's feeds.
//   - the Dispatcher, run by every shop instance, polls the due
//     deliveries, claims each with If-Match and POSTs it, signed
//     (api/webhooksig), to the subscription's URL; a failed attempt is
//     retried with exponential backoff and full jitter until RetryHorizon,
//     then dead (the dead-letter list, repo.Webhooks.ListDeliveries).
//
// Per subscription, the events of one subject (an order, a product) are
// sent in sequence order: one is sent only when the subject's earlier
// ones were delivered or are dead (repo.Webhooks.Due). Delivery is at
// least once: a receiver drops a repeat by its Shop-Event-Id.
//
// Every request goes through Policy.Client, which refuses internal
// addresses at dial time (server-side request forgery; ssrf.go).
package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// The relay's processors: each names its own leases, so the relay reads
// the orders and products feeds beside the shop's other processors of
// those containers, at its own pace.
const (
	RelayOrders   = "webhooks-orders"
	RelayProducts = "webhooks-products"
)

// Config configures Start.
type Config struct {
	// Processor configures the relay's processors (Start sets Name and
	// Watched; see changefeed.Config for the rest).
	Processor changefeed.Config
	// SubscriptionCache is how long the relay reuses its list of
	// subscriptions (DefaultSubscriptionCache).
	SubscriptionCache time.Duration
	// Dispatcher configures the dispatcher (its Instance defaults to
	// Processor.Instance).
	Dispatcher DispatcherConfig
}

// Service is the running relay and dispatcher.
type Service struct {
	processors []*changefeed.Processor
	dispatcher *Dispatcher
}

// Start runs the relay's two processors and the dispatcher over st (the
// store the shop's feed workers use; Start rides its throttles with
// store.WithPatience, as feedworkers.Start does).
func Start(ctx context.Context, st store.Store, cfg Config) (*Service, error) {
	ctx = store.WithPatience(ctx)
	st = store.Patient(st)
	if cfg.Processor.Instance == "" {
		cfg.Processor.Instance = changefeed.DefaultInstance()
	}
	if cfg.Dispatcher.Instance == "" {
		cfg.Dispatcher.Instance = cfg.Processor.Instance
	}
	r := repo.NewWebhooks(st)
	relay := NewRelay(r, cfg.Dispatcher.Now, cfg.SubscriptionCache)
	svc := &Service{dispatcher: NewDispatcher(r, cfg.Dispatcher)}
	relay.notify = svc.dispatcher.Notify
	fail := func(err error) (*Service, error) {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return nil, errors.Join(err, svc.Stop(sctx))
	}
	for _, def := range []struct{ name, watched string }{
		{RelayOrders, store.OrdersContainer},
		{RelayProducts, store.ProductsContainer},
	} {
		pc := cfg.Processor
		pc.Name, pc.Watched = def.name, def.watched
		p, err := changefeed.NewProcessor(st.Container(def.watched), st.Container(store.LeasesContainer), relay.Handle, pc)
		if err == nil {
			err = p.Start(ctx)
		}
		if err != nil {
			return fail(err)
		}
		svc.processors = append(svc.processors, p)
	}
	if err := svc.dispatcher.Start(ctx); err != nil {
		return fail(err)
	}
	return svc, nil
}

// Processors are the relay's processors (for their status).
func (s *Service) Processors() []*changefeed.Processor { return s.processors }

// Stop stops the relay's processors (their batches finish and are
// checkpointed) and the dispatcher (its requests in flight get until ctx
// ends).
func (s *Service) Stop(ctx context.Context) error {
	var errs []error
	for _, p := range s.processors {
		errs = append(errs, p.Stop(ctx))
	}
	errs = append(errs, s.dispatcher.Stop(ctx))
	return errors.Join(errs...)
}
