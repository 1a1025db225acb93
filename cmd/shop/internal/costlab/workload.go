package costlab

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// readMix is the share of each screen in the workload's reads: the shape of
// the bench's traffic (mostly product pages, then browsing, then carts and
// order history).
var readMix = []mixShare{
	{Screen: "product page", Share: 0.70},
	{Screen: "category page (20)", Share: 0.15},
	{Screen: "cart (10 lines)", Share: 0.10},
	{Screen: "order history (10)", Share: 0.05},
}

type mixShare struct {
	Screen string  `json:"screen"`
	Share  float64 `json:"share"`
}

// designLoad is the workload template of model-denormalize-reads for one
// design: read cost + write cost (+ the propagation of the copies).
type designLoad struct {
	// Per operation, measured.
	ReadRU        float64 `json:"ruPerRead"`
	WriteRU       float64 `json:"ruPerWrite"`
	PropagationRU float64 `json:"ruPropagationPerWrite"`
	WriteOps      float64 `json:"storeOpsPerWrite"`
	PropagateOps  float64 `json:"storeOpsPropagationPerWrite"`
	// Per second, at the workload's rates.
	ReadRUs  float64 `json:"readRUPerSecond"`
	WriteRUs float64 `json:"writeRUPerSecond"`
	TotalRUs float64 `json:"totalRUPerSecond"`
}

// workloadResult compares the two designs under one workload.
type workloadResult struct {
	ReadRPS  float64    `json:"readRps"`
	WriteRPS float64    `json:"writeRps"`
	ReadMix  []mixShare `json:"readMix"`
	// Write is what one write is: a price change of a product held by
	// CartsPerProduct open carts.
	Write           string     `json:"write"`
	CartsPerProduct int        `json:"cartsPerProduct"`
	Denormalized    designLoad `json:"denormalized"`
	Normalized      designLoad `json:"normalized"`
	Cheaper         string     `json:"cheaper"`
	// Factor is the dearer total over the cheaper one.
	Factor float64 `json:"factor"`
	// BreakEvenWriteRPS is the write rate at which, for ReadRPS reads, the
	// two designs cost the same; above it the normalized one is cheaper.
	// 0 when the denormalized design's writes cost no more.
	BreakEvenWriteRPS float64 `json:"breakEvenWriteRps"`
	// Before is the denormalized design's price change on commit d2aeb27
	// (workloadBefore), when this run has that run's options.
	Before *priceChangeBefore `json:"before,omitempty"`
}

// priceChangeBefore is what the workload measured of a price change.
type priceChangeBefore struct {
	PropagationRU     float64 `json:"ruPropagationPerWrite"`
	PropagateOps      float64 `json:"storeOpsPropagationPerWrite"`
	BreakEvenWriteRPS float64 `json:"breakEvenWriteRps"`
}

// workloadBefore is the price change as this lab measured it on commit
// d2aeb27 with its default options (beforeOptions), the entries then
// copying the whole summary (searchBefore).
var workloadBefore = priceChangeBefore{PropagationRU: 158.36, PropagateOps: 55.4, BreakEvenWriteRPS: 34.7}

// beforeOptions are the options workloadBefore was measured with: the
// defaults of `shop cost` (Run).
var beforeOptions = costOptions{
	lab:     labOptions{Products: 500, Categories: 8, ReviewsPerProduct: 8, Users: 100, OrdersPerUser: 12, PriceChanges: 20, CartsPerProduct: 10},
	readRPS: 1000, writeRPS: 10, partitions: 4,
}

// comparable reports whether o measures what beforeOptions did (the
// repetitions apart, which change no mean of a price change).
func (o costOptions) comparable() bool {
	a, b := o.lab, beforeOptions.lab
	return a.Products == b.Products && a.Categories == b.Categories && a.ReviewsPerProduct == b.ReviewsPerProduct &&
		a.Users == b.Users && a.OrdersPerUser == b.OrdersPerUser && a.PriceChanges == b.PriceChanges && a.CartsPerProduct == b.CartsPerProduct &&
		o.readRPS == beforeOptions.readRPS && o.writeRPS == beforeOptions.writeRPS && o.partitions == beforeOptions.partitions
}

// priceChange measures the writes of both designs: the same price change
// applied to the shop's product (and propagated to its copies, as the
// products feed does) and to the normalized product (nothing to propagate).
type priceChange struct {
	raw   store.Store // unmetered, to position the change feed
	repos *repo.Set
	ms    store.Store
	// handlers are the feed workers' own, over the metered store.
	handlers *feedworkers.Handlers
	now      func() time.Time
	// conts are the products feed's continuations, one per feed range.
	ranges []store.FeedRange
	conts  []string
}

func newPriceChange(ctx context.Context, raw, ms store.Store) (*priceChange, error) {
	pc := &priceChange{raw: raw, ms: ms, repos: repo.New(ms, 0), now: time.Now,
		handlers: feedworkers.NewHandlers(ms, writes.New(repo.New(ms, 0), nil, nil), feedworkers.HandlersConfig{})}
	feed := raw.Container(store.ProductsContainer)
	ranges, err := feed.ReadFeedRanges(ctx)
	if err != nil {
		return nil, err
	}
	pc.ranges = ranges
	pc.conts = make([]string, len(ranges))
	// Start at the end of the feed: only the lab's own changes are read.
	for i, r := range ranges {
		for {
			page, err := feed.ReadChangeFeed(ctx, r, pc.conts[i], store.MaxQueryPageSize)
			if err != nil {
				return nil, err
			}
			pc.conts[i] = page.Continuation
			if len(page.Items) == 0 {
				break
			}
		}
	}
	return pc, nil
}

// denormalized changes the product's price, then propagates it to the
// copies as the products feed does. It returns the write and the
// propagation separately.
func (pc *priceChange) denormalized(ctx context.Context, productID string) (write, propagate sample, err error) {
	write, err = once(ctx, func(ctx context.Context, _ int) error {
		_, err := pc.repos.Products.Update(ctx, productID, "", func(p *domain.Product) error {
			price := p.PriceCents + 100
			p.Apply(domain.ProductChange{PriceCents: &price}, pc.now())
			return nil
		})
		return err
	}, 0)
	if err != nil {
		return write, propagate, err
	}
	propagate, err = once(ctx, pc.propagate, 0)
	return write, propagate, err
}

// propagate is the products feed's work for a price change (docs/feeds.md):
// read the feed, then run the shop's own products handler on what it
// delivered, which refreshes the productsByCategory summary and the
// product's search entries (one per term), checks the product's fan-out
// record and fans the new price out to every open cart
// holding the product (a cross-partition query, then one replace per
// cart), then records what it pushed.
func (pc *priceChange) propagate(ctx context.Context, _ int) error {
	feed := pc.raw.Container(store.ProductsContainer)
	m := store.MeterFrom(ctx)
	var items [][]byte
	for i, r := range pc.ranges {
		start := time.Now()
		page, err := feed.ReadChangeFeed(ctx, r, pc.conts[i], store.MaxQueryPageSize)
		if err != nil {
			return err
		}
		pc.conts[i] = page.Continuation
		if len(page.Items) == 0 {
			// An empty poll is the processor's idle cost, paid whatever
			// the write rate: it is not part of a write's propagation.
			continue
		}
		m.Add(page.RequestCharge, time.Since(start).Nanoseconds())
		items = append(items, page.Items...)
	}
	if len(items) == 0 {
		return fmt.Errorf("the change feed did not deliver the price change")
	}
	return pc.handlers.Products(ctx, changefeed.Batch{Items: items})
}

// normalized changes the price of the normalized product: read, replace
// with If-Match. Nothing holds a copy, so nothing propagates.
func (pc *priceChange) normalized(ctx context.Context, productID string) (sample, error) {
	c := pc.ms.Container(normProductsContainer)
	return once(ctx, func(ctx context.Context, _ int) error {
		r, err := c.Read(ctx, productID, productID)
		if err != nil {
			return err
		}
		p, err := repo.Decode[normProduct](r.Item)
		if err != nil {
			return err
		}
		p.PriceCents += 100
		p.PriceVersion++
		p.LastUpdated = pc.now().UTC()
		raw, err := json.Marshal(p)
		if err != nil {
			return err
		}
		_, err = c.Replace(ctx, productID, productID, raw, &store.WriteOptions{IfMatch: r.ETag})
		return err
	}, 0)
}

// measureWorkload applies the template of model-denormalize-reads:
//
//	denormalized: reads × RU per read + writes × (RU per write + propagation)
//	normalized:   reads × RU per read (with the lookups) + writes × RU per write
//
// with every RU figure measured in this run.
func measureWorkload(ctx context.Context, raw, ms store.Store, d *labData, screens []screenResult, readRPS, writeRPS float64, cartsPerProduct int) (workloadResult, error) {
	w := workloadResult{
		ReadRPS:         readRPS,
		WriteRPS:        writeRPS,
		ReadMix:         readMix,
		Write:           fmt.Sprintf("price change of a product held by %d open carts", cartsPerProduct),
		CartsPerProduct: cartsPerProduct,
	}
	for _, m := range readMix {
		i := -1
		for j, s := range screens {
			if s.Screen == m.Screen {
				i = j
			}
		}
		if i < 0 {
			return w, fmt.Errorf("read mix names %q, which was not measured", m.Screen)
		}
		w.Denormalized.ReadRU += m.Share * screens[i].Denormalized.RequestUnits
		w.Normalized.ReadRU += m.Share * screens[i].Normalized.RequestUnits
	}
	pc, err := newPriceChange(ctx, raw, ms)
	if err != nil {
		return w, err
	}
	var writes, props, norms []sample
	for _, id := range d.changeProducts {
		wr, pr, err := pc.denormalized(ctx, id)
		if err != nil {
			return w, fmt.Errorf("price change of %s: %w", id, err)
		}
		nr, err := pc.normalized(ctx, id)
		if err != nil {
			return w, fmt.Errorf("normalized price change of %s: %w", id, err)
		}
		writes, props, norms = append(writes, wr), append(props, pr), append(norms, nr)
	}
	den, prop, norm := summarize(design{}, writes), summarize(design{}, props), summarize(design{}, norms)
	w.Denormalized.WriteRU, w.Denormalized.WriteOps = den.RequestUnits, den.StoreOps
	w.Denormalized.PropagationRU, w.Denormalized.PropagateOps = prop.RequestUnits, prop.StoreOps
	w.Normalized.WriteRU, w.Normalized.WriteOps = norm.RequestUnits, norm.StoreOps
	for _, l := range []*designLoad{&w.Denormalized, &w.Normalized} {
		l.ReadRU = report.Round2(l.ReadRU)
		l.ReadRUs = report.Round2(readRPS * l.ReadRU)
		l.WriteRUs = report.Round2(writeRPS * (l.WriteRU + l.PropagationRU))
		l.TotalRUs = report.Round2(l.ReadRUs + l.WriteRUs)
	}
	w.Cheaper, w.Factor = "denormalized", 0
	lo, hi := w.Denormalized.TotalRUs, w.Normalized.TotalRUs
	if hi < lo {
		w.Cheaper, lo, hi = "normalized", hi, lo
	}
	if lo > 0 {
		w.Factor = report.Round2(hi / lo)
	}
	extra := w.Denormalized.WriteRU + w.Denormalized.PropagationRU - w.Normalized.WriteRU
	if saved := w.Normalized.ReadRU - w.Denormalized.ReadRU; extra > 0 && saved > 0 {
		w.BreakEvenWriteRPS = report.Round2(readRPS * saved / extra)
	}
	return w, nil
}
