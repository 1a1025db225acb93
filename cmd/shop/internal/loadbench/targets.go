package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// inStockStatus is a product's availability status, on the wire, when it
// has more than a few units.
const inStockStatus = "in_stock"

// Kinds of request in the mix.
const (
	kindProduct  = "product page"
	kindCategory = "category page"
	kindCart     = "cart update"
	kindCheckout = "checkout"
)

// mixSchedule is the mix as 20 slots, repeated: 70% product page (14), 15%
// category page (3), 10% cart update (2), 5% checkout (1), interleaved so
// that every second of the run sees the same mix.
var mixSchedule = []string{
	kindProduct, kindProduct, kindCategory, kindProduct, kindProduct, kindCart, kindProduct,
	kindProduct, kindCategory, kindProduct, kindProduct, kindCheckout, kindProduct, kindProduct,
	kindCategory, kindProduct, kindCart, kindProduct, kindProduct, kindProduct,
}

// The mix's cart updates go to a pool of users large enough that each
// updates their cart about twice per run, as people do, rather than a few
// carts taking hundreds of concurrent writes; each user only ever touches
// cartUserProducts products, so no cart reaches its 50 lines.
const (
	minCartUsers     = 50
	cartUserProducts = 5
)

// cartUsersFor sizes the pool for a run of hits requests.
func cartUsersFor(hits int) int {
	return max(minCartUsers, hits/len(mixSchedule))
}

// benchClient talks to the shop under test to prepare a run.
type benchClient struct {
	base string
	http *http.Client
}

// do sends one call of the bench's own (not of a measured run) and
// decodes its answer into out, retrying a 503 with Retry-After.
func (c benchClient) do(ctx context.Context, method, path, token string, body any, headers map[string]string, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		wait, err := c.try(ctx, method, path, token, raw, headers, out)
		if wait == 0 || attempt == maxSetupAttempts {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// maxSetupAttempts bounds the tries of one call of the bench's own: a
// shop with a provisioned throughput (--throughput) answers 503 with
// Retry-After while a partition is over its budget, and the call is sent
// again after the wait it asks, as a client should. The measured runs
// never retry: a 503 there is counted.
const maxSetupAttempts = 30

// try sends the call once. wait is the Retry-After of a 503, 0 for any
// other answer.
func (c benchClient) try(ctx context.Context, method, path, token string, body []byte, headers map[string]string, out any) (wait time.Duration, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 300 {
		err := fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(raw))
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode == http.StatusServiceUnavailable && perr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return 0, err
	}
	if out != nil {
		return 0, json.Unmarshal(raw, out)
	}
	return 0, nil
}

// benchCatalog is what the runs address: found through the API, so that it
// works the same against a shop started elsewhere.
type benchCatalog struct {
	products   []string
	categories []string
	// inStock are the products listed in_stock (more than a few units):
	// the mix's checkouts buy those, so that none is refused out of
	// stock (the flash sale measures that apart).
	inStock []string
	// page is the product page the comparisons load (benchProduct when
	// the shop has it), productBody its JSON, which the baseline serves.
	page        string
	productBody []byte
}

// discover lists the categories and up to 100 products of each.
func (c benchClient) discover(ctx context.Context) (benchCatalog, error) {
	var cat benchCatalog
	var cats struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/categories", "", nil, nil, &cats); err != nil {
		return cat, err
	}
	// The comparisons load a full page: benchProduct, or the most
	// reviewed product listed.
	mostReviewed, most := "", 0
	for _, ct := range cats.Items {
		var page struct {
			Items []struct {
				ID           string `json:"id"`
				ReviewCount  int    `json:"reviewCount"`
				Availability struct {
					Status string `json:"status"`
				} `json:"availability"`
			} `json:"items"`
		}
		if err := c.do(ctx, http.MethodGet, "/v1/categories/"+url.PathEscape(ct.ID)+"/products?limit=100", "", nil, nil, &page); err != nil {
			return cat, err
		}
		if len(page.Items) > 0 {
			cat.categories = append(cat.categories, ct.ID)
		}
		for _, p := range page.Items {
			cat.products = append(cat.products, p.ID)
			if p.ReviewCount > most {
				mostReviewed, most = p.ID, p.ReviewCount
			}
			if p.Availability.Status == inStockStatus {
				cat.inStock = append(cat.inStock, p.ID)
			}
		}
	}
	if len(cat.products) == 0 {
		return cat, fmt.Errorf("the shop at %s lists no products", c.base)
	}
	cat.page = cat.products[0]
	if slices.Contains(cat.products, benchProduct) {
		cat.page = benchProduct
	} else if mostReviewed != "" {
		cat.page = mostReviewed
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/products/"+url.PathEscape(cat.page), nil)
	if err != nil {
		return cat, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return cat, err
	}
	defer resp.Body.Close()
	cat.productBody, err = io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET product %s: %s", cat.page, resp.Status)
	}
	return cat, err
}

// token gets a bearer token from the dev token endpoint: the shop under
// test must run in dev mode (the in-process one does).
func (c benchClient) token(ctx context.Context, userID string) (string, error) {
	return c.devToken(ctx, userID, false)
}

// adminToken is a dev token with the admin role, for GET /v1/admin/feeds.
func (c benchClient) adminToken(ctx context.Context) (string, error) {
	return c.devToken(ctx, "bench-admin", true)
}

func (c benchClient) devToken(ctx context.Context, userID string, admin bool) (string, error) {
	var t struct {
		Token string `json:"token"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/dev/token", "", map[string]any{"userId": userID, "name": userID, "email": userID + "@example.com", "admin": admin}, nil, &t)
	if err != nil {
		return "", fmt.Errorf("dev token (is the shop in dev mode?): %w", err)
	}
	return t.Token, nil
}

// parallel runs fn(i) for i in [0, n) on a few goroutines.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// mixTargets is the targeter of the mixed run and what it needs: tokens
// for the cart users, and one prepared user per checkout (a fresh user
// with one line in the cart, so each checkout is a distinct user's first).
type mixTargets struct {
	base       string
	cat        benchCatalog
	cartTokens []string
	checkouts  []string // tokens
	runID      string
	// n numbers the hits; nProduct, nCart and nCheck the product pages,
	// cart updates and checkouts among them.
	n, nProduct, nCart, nCheck atomic.Uint64
}

// prepareMix makes the tokens and the checkout users of a run of hits
// requests.
func prepareMix(ctx context.Context, c benchClient, cat benchCatalog, hits int, runID string) (*mixTargets, error) {
	m := &mixTargets{base: c.base, cat: cat, runID: runID, cartTokens: make([]string, cartUsersFor(hits))}
	if err := parallel(len(m.cartTokens), func(i int) (err error) {
		m.cartTokens[i], err = c.token(ctx, fmt.Sprintf("bench-%s-cart-%03d", runID, i))
		return err
	}); err != nil {
		return nil, err
	}
	// A constant-rate run of d seconds sends rate×d hits (+1 at t=0): one
	// checkout in 20, with a margin.
	m.checkouts = make([]string, hits/len(mixSchedule)+hits/200+4)
	if err := parallel(len(m.checkouts), func(i int) error {
		user := fmt.Sprintf("bench-%s-buyer-%05d", runID, i)
		tok, err := c.token(ctx, user)
		if err != nil {
			return err
		}
		m.checkouts[i] = tok
		buy := cat.inStock
		if len(buy) == 0 {
			buy = cat.products
		}
		p := buy[i%len(buy)]
		return c.do(ctx, http.MethodPut, "/v1/cart/items/"+url.PathEscape(p), tok, map[string]int{"quantity": 1}, nil, nil)
	}); err != nil {
		return nil, err
	}
	return m, nil
}

var checkoutBody = mustJSON(map[string]any{"shippingAddress": map[string]string{
	"name": "Bench Buyer", "line1": "1 Loopback Lane", "city": "Localhost", "postalCode": "12700", "country": "NL",
}})

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// targeter hands out the mix's requests in schedule order; it is called
// from many goroutines at once.
func (m *mixTargets) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		n := m.n.Add(1) - 1
		switch mixSchedule[n%uint64(len(mixSchedule))] {
		case kindProduct:
			i := m.nProduct.Add(1) - 1
			*t = vegeta.Target{Method: http.MethodGet, URL: m.base + "/v1/products/" + url.PathEscape(m.cat.products[i%uint64(len(m.cat.products))])}
		case kindCategory:
			*t = vegeta.Target{Method: http.MethodGet, URL: m.base + "/v1/categories/" + url.PathEscape(m.cat.categories[n%uint64(len(m.cat.categories))]) + "/products"}
		case kindCart:
			users := uint64(len(m.cartTokens))
			u := m.nCart.Add(1) - 1
			p := m.cat.products[((u%users)*cartUserProducts+(u/users)%cartUserProducts)%uint64(len(m.cat.products))]
			u %= users
			*t = vegeta.Target{
				Method: http.MethodPut,
				URL:    m.base + "/v1/cart/items/" + url.PathEscape(p),
				Body:   []byte(fmt.Sprintf(`{"quantity":%d}`, 1+n%9)),
				Header: http.Header{"Authorization": {"Bearer " + m.cartTokens[u]}, "Content-Type": {"application/json"}},
			}
		case kindCheckout:
			i := m.nCheck.Add(1) - 1
			if i >= uint64(len(m.checkouts)) {
				return vegeta.ErrNoTargets
			}
			*t = vegeta.Target{
				Method: http.MethodPost,
				URL:    m.base + "/v1/checkout",
				Body:   checkoutBody,
				Header: http.Header{
					"Authorization":   {"Bearer " + m.checkouts[i]},
					"Content-Type":    {"application/json"},
					"Idempotency-Key": {fmt.Sprintf("bench-%s-%05d", m.runID, i)},
				},
			}
		}
		return nil
	}
}

// productTarget walks over the products' pages.
func productTarget(base string, products []string) vegeta.Targeter {
	var n atomic.Uint64
	return func(t *vegeta.Target) error {
		i := n.Add(1) - 1
		*t = vegeta.Target{Method: http.MethodGet, URL: base + "/v1/products/" + url.PathEscape(products[i%uint64(len(products))])}
		return nil
	}
}

// kindOf classifies a result of the mix by its method and path.
func kindOf(method, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "other"
	}
	switch {
	case method == http.MethodPut:
		return kindCart
	case method == http.MethodPost:
		return kindCheckout
	case strings.HasPrefix(u.Path, "/v1/products/"):
		return kindProduct
	default:
		return kindCategory
	}
}
