package loadbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/reference-shop/shop/api/client"
)

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

// mixTargets is the targeter of the mixed run and what it needs, built
// when the run is prepared: each request as the generated client makes
// it (its URL, headers and body), so that the hot loop only picks one.
type mixTargets struct {
	products, categories []string // GET URLs
	// cartURLs[i] is the PUT of cat.oneSKU[i]'s line; cartHeaders[u]
	// signs in cart user u; cartBodies[q-1] sets quantity q.
	cartURLs    []string
	cartHeaders []http.Header
	cartBodies  [][]byte
	// checkouts are one prepared user's checkout each (a fresh user with
	// one line in the cart, so each checkout is a distinct user's first).
	checkouts []vegeta.Target
	// n numbers the hits; nProduct, nCart and nCheck the product pages,
	// cart updates and checkouts among them.
	n, nProduct, nCart, nCheck atomic.Uint64
}

// benchAddress is where the bench's orders go.
var benchAddress = client.Address{Name: "Bench Buyer", Line1: "1 Loopback Lane", City: "Localhost", PostalCode: "12700", Country: "NL"}

// maxCartQuantity is the highest quantity the mix's cart updates set.
const maxCartQuantity = 9

// prepareMix makes the tokens, the checkout users and the requests of a
// run of hits requests.
func prepareMix(ctx context.Context, c benchClient, cat benchCatalog, hits int, runID string) (*mixTargets, error) {
	m := &mixTargets{}
	var err error
	if m.products, err = productURLs(c.base, cat.products); err != nil {
		return nil, err
	}
	for _, id := range cat.categories {
		u, err := urlOf(client.NewListCategoryProductsRequest(c.base, id, nil))
		if err != nil {
			return nil, err
		}
		m.categories = append(m.categories, u)
	}
	for _, id := range cat.oneSKU {
		u, err := urlOf(client.NewPutCartItemRequestWithBody(c.base, id, nil, "", nil))
		if err != nil {
			return nil, err
		}
		m.cartURLs = append(m.cartURLs, u)
	}
	for q := 1; q <= maxCartQuantity; q++ {
		b, err := json.Marshal(client.CartItemRequest{Quantity: q})
		if err != nil {
			return nil, err
		}
		m.cartBodies = append(m.cartBodies, b)
	}

	m.cartHeaders = make([]http.Header, cartUsersFor(hits))
	if err := parallel(len(m.cartHeaders), func(i int) error {
		tok, err := c.token(ctx, fmt.Sprintf("bench-%s-cart-%03d", runID, i))
		m.cartHeaders[i] = http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"}}
		return err
	}); err != nil {
		return nil, err
	}

	// A constant-rate run of d seconds sends rate×d hits (+1 at t=0): one
	// checkout in 20, with a margin.
	body, err := json.Marshal(client.CheckoutRequest{ShippingAddress: benchAddress, PaymentMethod: "pm_card_visa"})
	if err != nil {
		return nil, err
	}
	m.checkouts = make([]vegeta.Target, hits/len(mixSchedule)+hits/200+4)
	if err := parallel(len(m.checkouts), func(i int) error {
		tok, err := c.token(ctx, fmt.Sprintf("bench-%s-buyer-%05d", runID, i))
		if err != nil {
			return err
		}
		buy := cat.inStock
		if len(buy) == 0 {
			buy = cat.oneSKU
		}
		if err := c.putCartLine(ctx, tok, buy[i%len(buy)], 1); err != nil {
			return err
		}
		req, err := client.NewCheckoutRequestWithBody(c.base, &client.CheckoutParams{IdempotencyKey: fmt.Sprintf("bench-%s-%05d", runID, i)}, "application/json", nil)
		if err != nil {
			return err
		}
		if err := client.Bearer(tok)(ctx, req); err != nil {
			return err
		}
		m.checkouts[i] = vegeta.Target{Method: req.Method, URL: req.URL.String(), Header: req.Header, Body: body}
		return nil
	}); err != nil {
		return nil, err
	}
	return m, nil
}

// urlOf is the URL of a request the generated client built.
func urlOf(req *http.Request, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return req.URL.String(), nil
}

// productURLs are the product pages' URLs at base.
func productURLs(base string, products []string) ([]string, error) {
	urls := make([]string, len(products))
	for i, id := range products {
		var err error
		if urls[i], err = urlOf(client.NewGetProductRequest(base, id)); err != nil {
			return nil, err
		}
	}
	return urls, nil
}

// targeter hands out the mix's requests in schedule order; it is called
// from many goroutines at once.
func (m *mixTargets) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		n := m.n.Add(1) - 1
		switch mixSchedule[n%uint64(len(mixSchedule))] {
		case kindProduct:
			i := m.nProduct.Add(1) - 1
			*t = vegeta.Target{Method: http.MethodGet, URL: m.products[i%uint64(len(m.products))]}
		case kindCategory:
			*t = vegeta.Target{Method: http.MethodGet, URL: m.categories[n%uint64(len(m.categories))]}
		case kindCart:
			users := uint64(len(m.cartHeaders))
			u := m.nCart.Add(1) - 1
			p := ((u%users)*cartUserProducts + (u/users)%cartUserProducts) % uint64(len(m.cartURLs))
			*t = vegeta.Target{
				Method: http.MethodPut,
				URL:    m.cartURLs[p],
				Body:   m.cartBodies[n%maxCartQuantity],
				Header: m.cartHeaders[u%users],
			}
		case kindCheckout:
			i := m.nCheck.Add(1) - 1
			if i >= uint64(len(m.checkouts)) {
				return vegeta.ErrNoTargets
			}
			*t = m.checkouts[i]
		}
		return nil
	}
}

// productTarget walks over the product pages' URLs.
func productTarget(urls []string) vegeta.Targeter {
	var n atomic.Uint64
	return func(t *vegeta.Target) error {
		i := n.Add(1) - 1
		*t = vegeta.Target{Method: http.MethodGet, URL: urls[i%uint64(len(urls))]}
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
