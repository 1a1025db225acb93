package loadbench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// flashGenerator names the load of the flash sale: not vegeta's constant
// rate, but a burst.
const flashGenerator = "one goroutine per buyer sending its checkout through the generated Go client (api/client, on net/http), all released at once by one closed channel (a closed burst: every buyer sends its checkout the moment the sale opens, once)"

// flashResult is the flash sale: Buyers distinct users, each with one
// unit of one product of Units units in the cart, check out at once.
type flashResult struct {
	Generator string `json:"generator"`
	Buyers    int    `json:"buyers"`
	Units     int    `json:"units"`
	Created   int    `json:"created"`
	// Refused answered 409 out-of-stock; Other anything else.
	Refused int            `json:"refused"`
	Other   int            `json:"other"`
	Status  map[string]int `json:"status"`
	// Throughput is the checkouts answered per second of the burst, from
	// its start to its last answer; ConflictRate is Refused / Buyers.
	DurationMs   float64 `json:"durationMs"`
	Throughput   float64 `json:"checkoutsPerSecond"`
	ConflictRate float64 `json:"conflictRate"`
	P50Ms        float64 `json:"p50Ms"`
	P99Ms        float64 `json:"p99Ms"`
	MaxMs        float64 `json:"maxMs"`
	// RU and store operations per answer (X-Request-Charge,
	// X-Store-Operations), sold and refused apart.
	RUPerSale     float64 `json:"ruPerSale"`
	OpsPerSale    float64 `json:"storeOpsPerSale"`
	RUPerRefusal  float64 `json:"ruPerRefusal"`
	OpsPerRefusal float64 `json:"storeOpsPerRefusal"`
	// AvailableAfter is the admin's count once the burst is answered.
	AvailableAfter int64 `json:"availableAfter"`
}

type flashAnswer struct {
	code     int
	outStock bool
	ru, ops  float64
	latency  time.Duration
	err      error
}

// runFlashSale prepares the product (through the admin API: a dev admin
// token), the buyers' tokens and carts, then releases the burst.
func runFlashSale(ctx context.Context, c benchClient, cat benchCatalog, buyers, units int, runID string) (flashResult, error) {
	r := flashResult{Generator: flashGenerator, Buyers: buyers, Units: units, Status: map[string]int{}}
	admin, err := c.devToken(ctx, "bench-"+runID+"-admin", true)
	if err != nil {
		return r, err
	}
	if len(cat.categories) == 0 {
		return r, fmt.Errorf("no category to put the flash sale's product in")
	}
	product := "flash-" + runID
	if _, err := call(ctx, func() (*client.CreateProductResponse, error) {
		return c.api.CreateProductWithResponse(ctx, client.ProductCreate{
			ProductID: &product, Name: "Flash sale " + runID, PriceCents: 1999, CategoryID: cat.categories[0], Stock: &units,
		}, client.Bearer(admin))
	}); err != nil {
		return r, fmt.Errorf("flash sale product: %w", err)
	}
	tokens := make([]string, buyers)
	if err := parallel(buyers, func(i int) (err error) {
		if tokens[i], err = c.token(ctx, fmt.Sprintf("bench-%s-flash-%05d", runID, i)); err != nil {
			return err
		}
		return c.putCartLine(ctx, tokens[i], product, 1)
	}); err != nil {
		return r, err
	}

	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: buyers, MaxConnsPerHost: 0}}
	defer hc.CloseIdleConnections()
	burst, err := client.NewClientWithResponses(c.base, client.WithHTTPClient(hc))
	if err != nil {
		return r, err
	}
	answers := make([]flashAnswer, buyers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() {
			<-start
			answers[i] = flashCheckout(ctx, burst, tokens[i], fmt.Sprintf("flash-%s-%05d", runID, i))
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)

	var lat []time.Duration
	var saleRU, saleOps, refRU, refOps float64
	for _, a := range answers {
		switch {
		case a.err != nil:
			r.Other++
			r.Status["0"]++
			continue
		case a.code == http.StatusCreated:
			r.Created++
			saleRU, saleOps = saleRU+a.ru, saleOps+a.ops
		case a.code == http.StatusConflict && a.outStock:
			r.Refused++
			refRU, refOps = refRU+a.ru, refOps+a.ops
		default:
			r.Other++
		}
		r.Status[strconv.Itoa(a.code)]++
		lat = append(lat, a.latency)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return ms(lat[min(len(lat)-1, int(p*float64(len(lat))))])
	}
	r.DurationMs = ms(elapsed)
	r.Throughput = report.Round2(float64(buyers) / elapsed.Seconds())
	r.ConflictRate = report.Round2(float64(r.Refused) / float64(buyers))
	r.P50Ms, r.P99Ms, r.MaxMs = pct(0.5), pct(0.99), pct(1)
	if r.Created > 0 {
		r.RUPerSale, r.OpsPerSale = report.Round2(saleRU/float64(r.Created)), report.Round2(saleOps/float64(r.Created))
	}
	if r.Refused > 0 {
		r.RUPerRefusal, r.OpsPerRefusal = report.Round2(refRU/float64(r.Refused)), report.Round2(refOps/float64(r.Refused))
	}
	stock, err := call(ctx, func() (*client.GetStockResponse, error) {
		return c.api.GetStockWithResponse(ctx, product, nil, client.Bearer(admin))
	})
	if err != nil {
		return r, fmt.Errorf("flash sale stock: %w", err)
	}
	r.AvailableAfter = int64(stock.JSON200.Available)
	return r, nil
}

// flashCheckout sends one buyer's checkout.
func flashCheckout(ctx context.Context, c *client.ClientWithResponses, token, key string) flashAnswer {
	t := time.Now()
	r, err := c.CheckoutWithResponse(ctx, &client.CheckoutParams{IdempotencyKey: key}, client.CheckoutRequest{ShippingAddress: benchAddress, PaymentMethod: "pm_card_visa"}, client.Bearer(token))
	if err != nil {
		return flashAnswer{err: err}
	}
	a := flashAnswer{code: r.StatusCode(), latency: time.Since(t)}
	if cost, err := client.CostOf(r.HTTPResponse); err == nil {
		a.ru, a.ops = cost.RequestUnits, float64(cost.Operations)
	}
	a.outStock = r.ApplicationProblemJSON409 != nil && r.ApplicationProblemJSON409.Type == client.ProblemOutOfStock
	return a
}
