package scale

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// Charges are the Request Units of each operation of the model, split by
// container, measured at run time on the store (an estimate on the
// embedded store: store/embedded's charge model, whatever it is today).
// Each is the mean of reps runs, the feed workers' work included: a
// checkout's cost holds the summary the orders feed writes for it.
type Charges struct {
	// Mix is the cost of each request class of the bench's mix.
	Mix []ClassCost `json:"mix"`
	// Home is the home page's one read: the categories document.
	Home Cost `json:"home"`
	// Review is one review of a product: the review, and the reviews
	// feed's recount, which rewrites the product document.
	Review Cost `json:"review"`
	// PriceChange is one price change of a product held by CartsHolding
	// open carts: the product, its summary, and the fan-out to the carts.
	PriceChange  Cost `json:"priceChange"`
	CartsHolding int  `json:"cartsHolding"`
	// Sizes are the bytes of one document of each kind, as stored.
	Sizes map[string]int `json:"sizes"`
}

// Cost is what one operation spent in each container it touched.
type Cost map[string]containerCost

// RU is the operation's Request Units in container name.
func (c Cost) RU(name string) float64 { return c[name].RU }

// Total is the operation's Request Units in every container.
func (c Cost) Total() float64 {
	t := 0.0
	for _, cc := range c {
		t += cc.RU
	}
	return t
}

// ClassCost is one request class of the mix and its cost.
type ClassCost struct {
	Class string  `json:"class"`
	Share float64 `json:"share"`
	Cost  Cost    `json:"cost"`
}

// The mix of `shop bench` (cmd/shop/internal/loadbench/targets.go).
const (
	classProduct  = "product page"
	classCategory = "category page"
	classCart     = "cart update"
	classCheckout = "checkout"
)

var mixShares = []struct {
	class string
	share float64
}{{classProduct, 0.70}, {classCategory, 0.15}, {classCart, 0.10}, {classCheckout, 0.05}}

// Document kinds whose size the model needs.
const (
	sizeProduct        = "product"
	sizeProductSummary = "product summary"
	sizeCart           = "cart (1 line)"
	sizeOrder          = "order (1 line)"
	sizeOrderSummary   = "order summary"
	sizeStock          = "stock"
	sizeReview         = "review"
)

// measureCharges loads a small catalog into s, runs the shop's API and
// feed workers over it, and measures each operation reps times.
func measureCharges(ctx context.Context, s store.Store, reps int) (Charges, error) {
	ch := Charges{Sizes: map[string]int{}, CartsHolding: 20}
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		return ch, err
	}
	if _, err := sample.Load(ctx, s, sample.Options{Products: 60, Reviews: 120, Categories: 4}); err != nil {
		return ch, fmt.Errorf("sample data: %w", err)
	}
	t := newTally(s)
	pay, err := payembedded.Open("")
	if err != nil {
		return ch, err
	}
	defer pay.Close()
	wk, err := feedworkers.Start(ctx, t, writes.New(repo.New(store.Metered(t), 0), pay, nil), feedworkers.Config{
		Sweeper:   feedworkers.Sweeper{Every: time.Hour},
		Processor: changefeed.Config{StartFromNow: true, PollEvery: 20 * time.Millisecond}})
	if err != nil {
		return ch, err
	}
	defer func() { _ = wk.Stop(context.WithoutCancel(ctx)) }()
	secret := []byte("shop scale: a measurement's own key!")
	l := &lab{t: t, wk: wk, secret: secret, repos: repo.New(t, 0),
		h: api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(t), 0), pay, time.Now), Store: t, Secret: secret, Now: time.Now})}
	if err := l.quiet(ctx); err != nil {
		return ch, err
	}
	cats, err := l.repos.Products.Categories(ctx)
	if err != nil {
		return ch, err
	}
	if len(cats.Items) == 0 {
		return ch, fmt.Errorf("the sample catalog has no category")
	}
	cat := cats.Items[0].ID
	raw, err := l.repos.ProductSummaries.Page(ctx, cat, repo.SortByName, nil, store.DefaultPageSize, "")
	if err != nil {
		return ch, err
	}
	page, err := raw.Decode()
	// Products sold without variants: their stock and cart lines name no
	// SKU.
	page = slices.DeleteFunc(page, func(s domain.ProductSummary) bool { return len(s.Attributes) > 0 })
	if err != nil || len(page) < 2 {
		return ch, fmt.Errorf("category %s: %d products without variants, %v", cat, len(page), err)
	}
	hot, other := page[0].ID, page[1].ID
	admin := l.token("scale-admin", true)
	for _, p := range []string{hot, other} {
		if err := l.call(http.MethodPut, "/v1/admin/products/"+p+"/stock", admin, `{"available":1000000}`, nil, http.StatusOK); err != nil {
			return ch, err
		}
	}

	// The reads: what a render costs the store (the read cache aside).
	read := map[string]func(i int) error{
		classProduct: func(int) error { _, err := l.repos.Products.Read(ctx, hot, ""); return err },
		classCategory: func(int) error {
			_, err := l.repos.ProductSummaries.Page(ctx, cat, repo.SortByName, nil, store.DefaultPageSize, "")
			return err
		},
	}
	costs := map[string]Cost{}
	for class, fn := range read {
		if costs[class], err = l.measure(ctx, reps, fn); err != nil {
			return ch, fmt.Errorf("%s: %w", class, err)
		}
	}
	if ch.Home, err = l.measure(ctx, reps, func(int) error { _, err := l.repos.Products.Categories(ctx); return err }); err != nil {
		return ch, err
	}
	// The writes, through the API, with what the feeds do after them.
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	user := func(kind string, i int) string { return fmt.Sprintf("scale-%s-%s-%03d", run, kind, i) }
	if costs[classCart], err = l.measure(ctx, reps, func(i int) error {
		return l.call(http.MethodPut, "/v1/cart/items/"+hot, l.token(user("cart", i), false), `{"quantity":2}`, nil, http.StatusOK)
	}); err != nil {
		return ch, fmt.Errorf("cart update: %w", err)
	}
	buyers := make([]string, reps)
	for i := range buyers {
		buyers[i] = l.token(user("buyer", i), false)
		if err := l.call(http.MethodPut, "/v1/cart/items/"+hot, buyers[i], `{"quantity":1}`, nil, http.StatusOK); err != nil {
			return ch, err
		}
	}
	if costs[classCheckout], err = l.measure(ctx, reps, func(i int) error {
		return l.call(http.MethodPost, "/v1/checkout", buyers[i], checkoutBody, map[string]string{"Idempotency-Key": user("key", i)}, http.StatusCreated)
	}); err != nil {
		return ch, fmt.Errorf("checkout: %w", err)
	}
	for _, m := range mixShares {
		ch.Mix = append(ch.Mix, ClassCost{Class: m.class, Share: m.share, Cost: costs[m.class]})
	}
	// One review at a time: each is then one recount, its worst case (the
	// feed may coalesce reviews that come together into one rewrite).
	if ch.Review, err = l.measureEach(ctx, min(reps, 5), func(i int) error {
		return l.call(http.MethodPost, "/v1/products/"+hot+"/reviews", l.token(user("reviewer", i), false), `{"rating":4,"title":"Good"}`, nil, http.StatusCreated)
	}); err != nil {
		return ch, fmt.Errorf("review: %w", err)
	}
	for i := range ch.CartsHolding {
		if err := l.call(http.MethodPut, "/v1/cart/items/"+other, l.token(user("holder", i), false), `{"quantity":1}`, nil, http.StatusOK); err != nil {
			return ch, err
		}
	}
	// One change at a time: the feed delivers only the latest version of
	// a document, so changes sent together would fan out once.
	if ch.PriceChange, err = l.measureEach(ctx, min(reps, 5), func(i int) error {
		return l.call(http.MethodPatch, "/v1/products/"+other, admin, fmt.Sprintf(`{"priceCents":%d}`, 1000+i), map[string]string{"Content-Type": "application/merge-patch+json"}, http.StatusOK)
	}); err != nil {
		return ch, fmt.Errorf("price change: %w", err)
	}
	return ch, l.sizes(ctx, s, ch.Sizes, hot, cat, user("cart", 0), user("buyer", 0))
}

var checkoutBody = `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"Scale Buyer","line1":"1 Loopback Lane","city":"Localhost","postalCode":"12700","country":"NL"}}`

// lab is the shop under measurement: its API in process, its feed
// workers, and the tally under both.
type lab struct {
	t      *tally
	wk     *feedworkers.Workers
	h      http.Handler
	repos  *repo.Set
	secret []byte
}

// measure runs fn(0..reps-1) once the feeds are quiet, waits until they
// are quiet again, and returns the mean cost per run by container.
func (l *lab) measure(ctx context.Context, reps int, fn func(i int) error) (Cost, error) {
	if err := l.quiet(ctx); err != nil {
		return nil, err
	}
	before := l.t.snapshot()
	for i := range reps {
		if err := fn(i); err != nil {
			return nil, err
		}
	}
	if err := l.quiet(ctx); err != nil {
		return nil, err
	}
	d := since(before, l.t.snapshot())
	delete(d, store.LeasesContainer) // the processors' checkpoints, per batch
	c := Cost{}
	for name, cc := range d {
		c[name] = containerCost{Ops: cc.Ops / float64(reps), RU: cc.RU / float64(reps)}
	}
	return c, nil
}

// measureEach is measure with the feeds quiet between two runs.
func (l *lab) measureEach(ctx context.Context, reps int, fn func(i int) error) (Cost, error) {
	sum := Cost{}
	for i := range reps {
		c, err := l.measure(ctx, 1, func(int) error { return fn(i) })
		if err != nil {
			return nil, err
		}
		for name, cc := range c {
			s := sum[name]
			s.Ops += cc.Ops / float64(reps)
			s.RU += cc.RU / float64(reps)
			sum[name] = s
		}
	}
	return sum, nil
}

// quiet waits until every lease has read its feed to the end and the
// shop's containers have seen no call for a while (the feed handlers'
// writes included).
func (l *lab) quiet(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	last := l.t.snapshot()
	for still := 0; still < 5; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(40 * time.Millisecond):
		}
		now := l.t.snapshot()
		delete(now, store.LeasesContainer)
		caught, err := l.caughtUp(ctx)
		if err != nil {
			return err
		}
		if caught && reflect.DeepEqual(now, last) {
			still++
		} else {
			still = 0
		}
		last = now
		if time.Now().After(deadline) {
			return fmt.Errorf("the feed workers did not catch up in 30 s")
		}
	}
	return nil
}

func (l *lab) caughtUp(ctx context.Context) (bool, error) {
	ps, err := l.wk.FeedStatus(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range ps {
		for _, ls := range p.Leases {
			if ls.LagEstimate != 0 {
				return false, nil
			}
		}
	}
	return true, nil
}

// token is a bearer token of the lab's own key.
func (l *lab) token(userID string, admin bool) string {
	tok, err := api.IssueToken(l.secret, userID, userID, userID+"@example.com", admin, time.Hour)
	if err != nil {
		panic(err) // HS256 over a fixed key does not fail
	}
	return tok
}

// status sends one request to the API in process and returns its status.
func (l *lab) status(method, path, token, body string, headers map[string]string) int {
	return l.send(method, path, token, body, headers).Code
}

// call sends one request to the API in process and checks its status.
func (l *lab) call(method, path, token, body string, headers map[string]string, want int) error {
	w := l.send(method, path, token, body, headers)
	if w.Code != want {
		return fmt.Errorf("%s %s: %d %s, want %d", method, path, w.Code, bytes.TrimSpace(w.Body.Bytes()), want)
	}
	return nil
}

func (l *lab) send(method, path, token, body string, headers map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
	r.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	l.h.ServeHTTP(w, r)
	return w
}

// sizes reads one document of each kind and records its stored bytes.
func (l *lab) sizes(ctx context.Context, s store.Store, sizes map[string]int, product, category, cartUser, buyer string) error {
	raw, err := repo.New(s, 0).Orders.Page(ctx, buyer, 1, "")
	if err != nil {
		return err
	}
	orders, err := raw.Decode()
	if err != nil || len(orders) == 0 {
		return fmt.Errorf("the buyer's order: %d, %v", len(orders), err)
	}
	o := orders[0]
	for kind, at := range map[string]struct{ container, pk, id string }{
		sizeProduct:        {store.ProductsContainer, product, product},
		sizeProductSummary: {store.ProductsByCategoryContainer, category, product},
		sizeCart:           {store.CartsContainer, cartUser, cartUser},
		sizeOrder:          {store.OrdersContainer, buyer, o.ID},
		sizeOrderSummary:   {store.OrdersByStatusContainer, domain.StatusDayKey(domain.StatusPlaced, o.CreatedAt, o.ID, domain.DefaultStatusBuckets), o.ID},
		sizeStock:          {store.InventoryContainer, product, domain.StockID},
	} {
		it, err := s.Container(at.container).Read(ctx, at.pk, at.id)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", kind, at.pk, at.id, err)
		}
		sizes[kind] = len(it.Item)
	}
	revs, _, err := l.repos.Reviews.Page(ctx, product, 1, "")
	if err != nil || len(revs) == 0 {
		return fmt.Errorf("a review of %s: %v", product, err)
	}
	it, err := s.Container(store.ReviewsContainer).Read(ctx, product, revs[0].ID)
	if err != nil {
		return err
	}
	sizes[sizeReview] = len(it.Item)
	return nil
}
