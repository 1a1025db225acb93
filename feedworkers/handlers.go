// Package feedworkers keeps the shop's denormalized copies in sync: the
// handlers of the products, reviews, orders and inventory feeds, plain
// methods over decoded documents, each idempotent and version-guarded
// because the feed delivers at least once, and Start, which runs them on
// four change-feed processors of feedworkers/changefeed, one per feed,
// with the checkout sweeper. docs/feeds.md lists what each handler writes
// and why it converges.
package feedworkers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// Handlers holds what the handlers write through: the typed repositories.
// Each handler is a plain method over decoded documents, so tests call it
// directly, twice, shuffled or duplicated, without a processor.
type Handlers struct {
	st     store.Store
	repos  *repo.Set
	writes *writes.Writes
	now    func() time.Time
	// fanout bounds the concurrent cart writes of one product change.
	fanout int

	stats fanoutCounters

	// names remembers the category names already pushed to the products,
	// so that the categories document changing for another reason (a
	// product count) does not re-read every product. Lost on restart,
	// which only costs one full (idempotent) pass.
	namesMu sync.Mutex
	names   map[string]string
}

// HandlersConfig tunes the handlers; the zero value is the default.
type HandlersConfig struct {
	// FanoutConcurrency bounds the cart writes in flight for one product
	// change (default 16).
	FanoutConcurrency int
	// Now is the clock for lastUpdated (default time.Now).
	Now func() time.Time
}

// NewHandlers returns the handlers: they read the watched containers of
// st and write every copy through w and its repositories (w.Repos), the
// ones the API shares, so both see one number of status buckets and one
// payment provider.
func NewHandlers(st store.Store, w *writes.Writes, cfg HandlersConfig) *Handlers {
	if cfg.FanoutConcurrency <= 0 {
		cfg.FanoutConcurrency = 16
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Handlers{
		st: st, repos: w.Repos(), writes: w,
		now: cfg.Now, fanout: cfg.FanoutConcurrency, names: map[string]string{},
	}
}

// ignoreUnchanged is nil for repo.ErrUnchanged: a read-modify-write whose
// document already held the values skipped its write, which keeps a
// replayed batch free of charge and of new feed events.
func ignoreUnchanged(err error) error {
	if errors.Is(err, repo.ErrUnchanged) {
		return nil
	}
	return err
}

type head struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// decodeItem decodes one changed document of a batch with repo.Decode.
// A change that does not decode is refused as EINVALID, not EINTERNAL: it
// is a poison document for the processor, retried and then parked in a
// dead letter, and the code says so in the batch's logs and spans.
func decodeItem[T any](item []byte) (T, error) {
	v, err := repo.Decode[T](item)
	if err != nil {
		return v, domain.Errorf(domain.EINVALID, "feed item: %s", domain.ErrorMessage(err))
	}
	return v, nil
}

// Reviews is the handler of the reviews feed.
func (h *Handlers) Reviews(ctx context.Context, b changefeed.Batch) error {
	var reviews []domain.Review
	for _, it := range b.Items {
		r, err := decodeItem[domain.Review](it)
		if err != nil {
			return err
		}
		if r.Type == domain.TypeReview {
			reviews = append(reviews, r)
		}
	}
	return h.ReviewsToProducts(ctx, reviews)
}

// Orders is the handler of the orders feed: idempotency records and
// customer summaries share the container and are skipped.
func (h *Handlers) Orders(ctx context.Context, b changefeed.Batch) error {
	var orders []domain.Order
	for _, it := range b.Items {
		hd, err := decodeItem[head](it)
		if err != nil {
			return err
		}
		if hd.Type != domain.TypeOrder {
			continue
		}
		o, err := decodeItem[domain.Order](it)
		if err != nil {
			return err
		}
		orders = append(orders, o)
	}
	if err := h.OrdersCarryOut(ctx, orders); err != nil {
		return err
	}
	return h.OrdersToStatusView(ctx, orders)
}
