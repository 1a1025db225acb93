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

// errUnchanged aborts a read-modify-write whose document already holds
// the values: skipping the write keeps a replayed batch free of charge
// and of new feed events.
var errUnchanged = errors.New("unchanged")

func ignoreUnchanged(err error) error {
	if errors.Is(err, errUnchanged) {
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

// Products is the handler of the products feed: the categories index
// document drives the category rename; each product drives the view, the
// search index, the cart lines and, once deleted, the removal of its
// reviews. The category counts and featured products the batch's products
// changed are recomputed once, at the end, in one write of the categories
// index; the index read for it then names the products that a rename
// missed (nameProducts).
func (h *Handlers) Products(ctx context.Context, b changefeed.Batch) error {
	var products []domain.Product
	for _, it := range b.Items {
		hd, err := decodeItem[head](it)
		if err != nil {
			return err
		}
		switch hd.Type {
		case domain.TypeCategories:
			cats, err := decodeItem[domain.Categories](it)
			if err != nil {
				return err
			}
			if err := h.RenameCategories(ctx, cats); err != nil {
				return err
			}
		case domain.TypeProduct:
			p, err := decodeItem[domain.Product](it)
			if err != nil {
				return err
			}
			products = append(products, p)
		}
	}
	current, err := h.currentProducts(ctx, products)
	if err != nil {
		return err
	}
	rc := recount{every: b.MayBeReplay}
	for _, p := range current {
		if err := h.productCopies(ctx, p, b.MayBeReplay, &rc); err != nil {
			return err
		}
	}
	cats, err := h.updateIndex(ctx, &rc)
	if err != nil {
		return err
	}
	return h.nameProducts(ctx, current, cats)
}

// productCopies brings every copy of one product out of p, its current
// version: its summary, its search entries, its cart lines, and, once it
// is deleted, its reviews. What it changes in the categories index is
// collected in rc, for one write of the index per batch (updateIndex).
func (h *Handlers) productCopies(ctx context.Context, p domain.Product, replay bool, rc *recount) error {
	if err := h.productToView(ctx, p, replay, rc); err != nil {
		return err
	}
	if err := h.ProductToSearch(ctx, p); err != nil {
		return err
	}
	if err := h.syncCarts(ctx, p); err != nil {
		return err
	}
	return h.DeleteReviewsOfDeleted(ctx, p)
}

// currentProducts replaces each changed product of the batch by its
// current version (one point read per distinct product, 1 RU each): the
// copies are then made from the truth, so a duplicate or a late, older
// version of a product can never move a copy backwards, and skipping the
// writes that would change nothing is safe. A product already gone (its
// soft-delete ttl passed) is kept as the feed delivered it.
func (h *Handlers) currentProducts(ctx context.Context, batch []domain.Product) ([]domain.Product, error) {
	seen := map[string]bool{}
	var out []domain.Product
	for _, p := range batch {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		cur, err := h.repos.Products.GetAny(ctx, p.ID)
		switch {
		case domain.IsCode(err, domain.ENOTFOUND):
			cur = latest(batch, p.ID)
		case err != nil:
			return nil, err
		}
		out = append(out, cur)
	}
	return out, nil
}

// latest is the newest version of a product in the batch.
func latest(batch []domain.Product, id string) domain.Product {
	var best domain.Product
	for _, p := range batch {
		if p.ID == id && (best.ID == "" || p.Version > best.Version) {
			best = p
		}
	}
	return best
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
