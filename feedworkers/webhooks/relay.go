package webhooks

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store/repo"
)

// Relay turns the events written into the orders and products containers
// into deliveries: its Handle is the handler of the processors
// RelayOrders and RelayProducts. It only writes deliveries (one create
// each) and never calls a receiver, so a slow or dead receiver never
// slows the shop's feeds; the Dispatcher sends them.
type Relay struct {
	repo  *repo.Webhooks
	now   func() time.Time
	cache time.Duration

	// notify is called after a delivery is written (the dispatcher's
	// Notify, in Start); nil calls nothing.
	notify func()

	mu     sync.Mutex
	subs   []domain.Subscription
	loaded time.Time // by the wall clock: the cache's age
}

// NewRelay returns the relay writing through r; now is its clock (nil:
// time.Now), cache how long it keeps the subscription list (0: 2 s).
func NewRelay(r *repo.Webhooks, now func() time.Time, cache time.Duration) *Relay {
	if now == nil {
		now = time.Now
	}
	if cache <= 0 {
		cache = DefaultSubscriptionCache
	}
	return &Relay{repo: r, now: now, cache: cache}
}

// DefaultSubscriptionCache is how long the relay reuses its list of
// subscriptions: a subscription created, changed or paused is seen by the
// relay at most this long after.
const DefaultSubscriptionCache = 2 * time.Second

// subscriptions returns the cached list, listed again when older than
// the cache time.
func (r *Relay) subscriptions(ctx context.Context) ([]domain.Subscription, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs != nil && time.Since(r.loaded) < r.cache {
		return r.subs, nil
	}
	subs, err := r.repo.List(ctx, repo.MaxSubscriptions)
	if err != nil {
		return nil, err
	}
	r.subs, r.loaded = subs, time.Now()
	return subs, nil
}

// head is what the relay reads of every changed document first.
type head struct {
	Type string `json:"type"`
}

// Handle creates, for each event of the batch, one pending delivery per
// subscription that is not paused, wants the event's type and existed
// when the event occurred (a new subscription gets the events from its
// creation on, not the retained history). An order's events are the
// event documents its moves wrote; a product's are derived from the
// product's version (domain.ProductEventsOf); every other item is
// skipped. It is idempotent: a
// delivery's id comes from its event's (domain.DeliveryID), so a replayed
// batch's creates are conflicts, and skipped. Events are handled in feed
// order, which is per subject their sequence order (a subject's events
// share its partition key), so a subject's deliveries are created in
// order.
func (r *Relay) Handle(ctx context.Context, b changefeed.Batch) error {
	for _, it := range b.Items {
		h, err := repo.Decode[head](it)
		if err != nil {
			return err
		}
		var events []domain.Event
		switch h.Type {
		case domain.TypeEvent:
			// An order's, written in its move's batch (the outbox).
			ev, err := repo.Decode[domain.Event](it)
			if err != nil {
				return err
			}
			events = []domain.Event{ev}
		case domain.TypeProduct:
			// A product's are derived from its version: no document
			// shares a product's partition (domain.ProductEventsOf).
			p, err := repo.Decode[domain.Product](it)
			if err != nil {
				return err
			}
			events = domain.ProductEventsOf(p)
		}
		for _, ev := range events {
			if err := r.deliver(ctx, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// deliver creates ev's pending delivery to each subscription that wants
// it; one that exists already (a replay, or a later version of a product
// naming the same change) is left as it is.
func (r *Relay) deliver(ctx context.Context, ev domain.Event) error {
	subs, err := r.subscriptions(ctx)
	if err != nil {
		return err
	}
	var body []byte
	for _, s := range subs {
		if s.Paused || !s.Wants(ev.EventType) || ev.OccurredAt.Before(s.CreatedAt) {
			continue
		}
		if body == nil {
			if body, err = EventBody(ev); err != nil {
				return err
			}
		}
		now := r.now()
		err := r.repo.CreateDelivery(ctx, domain.Delivery{
			SubscriptionID: s.ID, EventID: ev.ID, EventType: ev.EventType,
			Subject: ev.Subject, Sequence: ev.Sequence, Status: domain.DeliveryPending,
			NextAttemptAt: now, CreatedAt: now, Body: body,
		})
		switch {
		case err == nil && r.notify != nil:
			r.notify()
		case err != nil && !domain.IsCode(err, domain.ECONFLICT):
			return err
		}
	}
	return nil
}

// EventBody is the body of every webhook request of ev: the event
// document without its store properties (_etag, _ts) and its ttl.
func EventBody(ev domain.Event) (json.RawMessage, error) {
	ev.ETag, ev.TS, ev.TTL = "", 0, nil
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, domain.Errorf(domain.EINTERNAL, "encode event %s: %v", ev.ID, err)
	}
	return b, nil
}
