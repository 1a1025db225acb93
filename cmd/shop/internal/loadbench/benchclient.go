package loadbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/reference-shop/shop/api/client"
)

// benchClient makes the bench's own calls to the shop under test (the
// preparation of a run, never a measured request) through the shop's
// generated client, as any Go program calling the shop would.
type benchClient struct {
	base string
	api  *client.ClientWithResponses
}

func newBenchClient(base string) (benchClient, error) {
	api, err := client.NewClientWithResponses(base, client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	return benchClient{base: base, api: api}, err
}

// maxSetupAttempts bounds the tries of one call of the bench's own: a
// shop with a provisioned throughput (--throughput) answers 503 with
// Retry-After while a partition is over its budget, and the call is sent
// again after the wait it asks, as a client should. The measured runs
// never retry: a 503 there is counted.
const maxSetupAttempts = 30

// call sends one call of the bench's own and returns its answer when it
// is a success, its problem (a *client.Error) otherwise, sending it again
// after the wait of a 503 with Retry-After.
func call[R client.Response](ctx context.Context, send func() (R, error)) (R, error) {
	for attempt := 1; ; attempt++ {
		r, err := client.OK(send())
		var e *client.Error
		if err == nil || !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.RetryAfter == 0 || attempt == maxSetupAttempts {
			return r, err
		}
		t := time.NewTimer(e.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return r, ctx.Err()
		case <-t.C:
		}
	}
}

// benchCatalog is what the runs address: found through the API, so that it
// works the same against a shop started elsewhere.
type benchCatalog struct {
	products   []string
	categories []string
	// oneSKU are the products sold without variants, whose cart line
	// names no SKU: the mix's cart updates set their lines.
	oneSKU []string
	// inStock are those of oneSKU listed in_stock (more than a few
	// units): the mix's checkouts buy those, so that none is refused out
	// of stock (the flash sale measures that apart).
	inStock []string
	// page is the product page the comparisons load (benchProduct when
	// the shop has it), productBody its JSON and productType its
	// Content-Type, which the baseline serves.
	page        string
	productBody []byte
	productType string
}

// discover lists the categories and up to 100 products of each.
func (c benchClient) discover(ctx context.Context) (benchCatalog, error) {
	var cat benchCatalog
	cats, err := call(ctx, func() (*client.ListCategoriesResponse, error) {
		return c.api.ListCategoriesWithResponse(ctx)
	})
	if err != nil {
		return cat, fmt.Errorf("categories: %w", err)
	}
	// The comparisons load a full page: benchProduct, or the most
	// reviewed product listed.
	mostReviewed, most := "", 0
	limit := 100
	for _, ct := range cats.JSON200.Items {
		page, err := call(ctx, func() (*client.ListCategoryProductsResponse, error) {
			return c.api.ListCategoryProductsWithResponse(ctx, ct.ID, &client.ListCategoryProductsParams{Limit: &limit})
		})
		if err != nil {
			return cat, fmt.Errorf("category %s: %w", ct.ID, err)
		}
		if len(page.JSON200.Items) > 0 {
			cat.categories = append(cat.categories, ct.ID)
		}
		// A summary whose attribute array is not empty is a product sold
		// in variants (domain.Product.Facets), whose cart line must name
		// a SKU; the generated client does not carry the array, so it is
		// read from the body.
		var listed struct {
			Items []struct {
				ID         string   `json:"id"`
				Attributes []string `json:"attributes"`
			} `json:"items"`
		}
		if err := json.Unmarshal(page.Body, &listed); err != nil {
			return cat, fmt.Errorf("category %s: %w", ct.ID, err)
		}
		variants := map[string]bool{}
		for _, p := range listed.Items {
			variants[p.ID] = len(p.Attributes) > 0
		}
		for _, p := range page.JSON200.Items {
			cat.products = append(cat.products, p.ID)
			if p.ReviewCount > most {
				mostReviewed, most = p.ID, p.ReviewCount
			}
			if variants[p.ID] {
				continue
			}
			cat.oneSKU = append(cat.oneSKU, p.ID)
			if p.Availability.Status == client.AvailabilityStatusInStock {
				cat.inStock = append(cat.inStock, p.ID)
			}
		}
	}
	if len(cat.products) == 0 || len(cat.oneSKU) == 0 {
		return cat, fmt.Errorf("the shop at %s lists no products, or none sold without variants", c.base)
	}
	cat.page = cat.products[0]
	if slices.Contains(cat.products, benchProduct) {
		cat.page = benchProduct
	} else if mostReviewed != "" {
		cat.page = mostReviewed
	}
	product, err := call(ctx, func() (*client.GetProductResponse, error) {
		return c.api.GetProductWithResponse(ctx, cat.page)
	})
	if err != nil {
		return cat, fmt.Errorf("product %s: %w", cat.page, err)
	}
	cat.productBody, cat.productType = product.Body, product.HTTPResponse.Header.Get("Content-Type")
	return cat, nil
}

// token gets a bearer token from the dev token endpoint: the shop under
// test must run in dev mode (the in-process one does).
func (c benchClient) token(ctx context.Context, userID string) (string, error) {
	return c.devToken(ctx, userID, false)
}

// adminToken is a dev token with the admin role, for the admin routes
// (feeds, throughput, stock).
func (c benchClient) adminToken(ctx context.Context) (string, error) {
	return c.devToken(ctx, "bench-admin", true)
}

func (c benchClient) devToken(ctx context.Context, userID string, admin bool) (string, error) {
	email := userID + "@example.com"
	r, err := call(ctx, func() (*client.DevTokenResponse, error) {
		return c.api.DevTokenWithResponse(ctx, client.DevTokenRequest{UserID: userID, Name: &userID, Email: &email, Admin: &admin})
	})
	if err != nil {
		return "", fmt.Errorf("dev token (is the shop in dev mode?): %w", err)
	}
	return r.JSON200.Token, nil
}

// putCartLine sets the quantity of one line of the token's user's cart.
func (c benchClient) putCartLine(ctx context.Context, token, productID string, quantity int) error {
	_, err := call(ctx, func() (*client.PutCartItemResponse, error) {
		return c.api.PutCartItemWithResponse(ctx, productID, nil, client.CartItemRequest{Quantity: quantity}, client.Bearer(token))
	})
	if err != nil {
		return fmt.Errorf("cart line %s: %w", productID, err)
	}
	return nil
}
