package scale

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/reference-shop/shop/api"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// ThrottleOptions are the load of the status view's before and after:
// checkouts at Rate per second for Duration against an embedded store
// whose ordersByStatus is provisioned Throughput RU/s and every other
// container Others RU/s (each split evenly over Partitions physical
// partitions: Cosmos provisions each container apart), once with each
// number of Buckets.
type ThrottleOptions struct {
	Throughput int           `json:"throughput"`
	Others     int           `json:"othersThroughput"`
	Partitions int           `json:"partitions"`
	Rate       int           `json:"checkoutsPerSecond"`
	Duration   time.Duration `json:"-"`
	Buckets    []int         `json:"buckets"`
}

// ThrottleRun is what one number of buckets did under the load.
type ThrottleRun struct {
	Buckets   int `json:"buckets"`
	Checkouts int `json:"checkouts"`
	// Created are the 201s, Unavailable the 503s (a throttled container
	// the API gave up on), Other any other answer.
	Created     int     `json:"created"`
	Unavailable int     `json:"unavailable"`
	Other       int     `json:"other"`
	SuccessRate float64 `json:"successRate"`
	P99Millis   float64 `json:"p99Millis"`
	// HottestRUs is the RU/s the busiest physical partition of
	// ordersByStatus spent during the load (its budget: Throughput ÷
	// Partitions), Throttled the calls on ordersByStatus refused (429).
	HottestRUs float64 `json:"hottestRuPerSecond"`
	Budget     float64 `json:"partitionBudget"`
	Throttled  int64   `json:"throttled"`
	// MaxLag is the most changes the orders feed was behind during the
	// load; DrainSeconds how long after the load it took to catch up
	// (the last summary written).
	MaxLag       int64   `json:"maxLag"`
	DrainSeconds float64 `json:"drainSeconds"`
}

// runThrottle runs the load once per number of buckets.
func runThrottle(ctx context.Context, o ThrottleOptions) ([]ThrottleRun, error) {
	var runs []ThrottleRun
	for _, n := range o.Buckets {
		r, err := throttleRound(ctx, o, n)
		if err != nil {
			return nil, fmt.Errorf("%d buckets: %w", n, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// throttleRound starts a shop (API and feed workers in process, a fresh
// embedded store) with n status buckets, prepares one buyer per
// checkout, provisions the throughput, and sends the checkouts.
func throttleRound(ctx context.Context, o ThrottleOptions, n int) (ThrottleRun, error) {
	run := ThrottleRun{Buckets: n, Budget: float64(o.Throughput) / float64(o.Partitions)}
	dir, err := os.MkdirTemp("", "shop-scale-")
	if err != nil {
		return run, err
	}
	defer os.RemoveAll(dir)
	es, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{PhysicalPartitions: o.Partitions, NoSync: true})
	if err != nil {
		return run, err
	}
	defer es.Close()
	if err := migrations.Apply(ctx, es, io.Discard); err != nil {
		return run, err
	}
	if _, err := sample.Load(ctx, es, sample.Options{Products: 80, Reviews: 1, Categories: 4}); err != nil {
		return run, err
	}
	pay, err := payembedded.Open("")
	if err != nil {
		return run, err
	}
	defer pay.Close()
	wk, err := feedworkers.Start(ctx, es, writes.New(repo.New(store.Metered(es), n), pay, nil), feedworkers.Config{
		Sweeper:   feedworkers.Sweeper{Every: time.Hour},
		Processor: changefeed.Config{StartFromNow: true, PollEvery: 50 * time.Millisecond}})
	if err != nil {
		return run, err
	}
	defer func() { _ = wk.Stop(context.WithoutCancel(ctx)) }()
	secret := []byte("shop scale: a measurement's own key!")
	l := &lab{wk: wk, secret: secret, h: api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(es), n), pay, time.Now), Store: es, Secret: secret, Now: time.Now})}

	// One buyer per checkout, each with one line, spread over the
	// products so that no stock document is the hot spot here.
	products, err := stockUp(ctx, l, es)
	if err != nil {
		return run, err
	}
	total := int(float64(o.Rate) * o.Duration.Seconds())
	buyers := make([]string, total)
	stamp := time.Now().UnixNano()
	for i := range buyers {
		buyers[i] = l.token(fmt.Sprintf("throttle-%d-%05d", stamp, i), false)
		if err := l.call(http.MethodPut, "/v1/cart/items/"+products[i%len(products)], buyers[i], `{"quantity":1}`, nil, http.StatusOK); err != nil {
			return run, err
		}
	}
	if err := waitCaughtUp(ctx, l, time.Minute); err != nil {
		return run, err
	}

	es.SetThroughput(float64(o.Others))
	es.SetContainerThroughput(store.OrdersByStatusContainer, float64(o.Throughput))
	before := statusPartitions(es)
	lagDone := make(chan int64)
	stopLag := make(chan struct{})
	go func() { lagDone <- sampleLag(ctx, wk, stopLag) }()
	start := time.Now()
	latencies := make([]time.Duration, total)
	codes := make([]int, total)
	var wg sync.WaitGroup
	for i := range total {
		at := start.Add(time.Duration(float64(i) / float64(o.Rate) * float64(time.Second)))
		select {
		case <-ctx.Done():
			return run, ctx.Err()
		case <-time.After(time.Until(at)):
		}
		wg.Go(func() {
			t := time.Now()
			codes[i] = l.status(http.MethodPost, "/v1/checkout", buyers[i], checkoutBody, map[string]string{"Idempotency-Key": fmt.Sprintf("throttle-%d-%05d", stamp, i)})
			latencies[i] = time.Since(t)
		})
	}
	wg.Wait()
	loadTime := time.Since(start)
	after := statusPartitions(es)
	end := time.Now()
	if err := waitCaughtUp(ctx, l, 2*time.Minute); err != nil {
		return run, err
	}
	run.DrainSeconds = time.Since(end).Seconds()
	close(stopLag)
	run.MaxLag = <-lagDone

	run.Checkouts = total
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			run.Created++
		case http.StatusServiceUnavailable:
			run.Unavailable++
		default:
			run.Other++
		}
	}
	run.SuccessRate = float64(run.Created) / float64(total)
	slices.Sort(latencies)
	run.P99Millis = float64(latencies[min(len(latencies)-1, len(latencies)*99/100)].Microseconds()) / 1000
	for key, a := range after {
		b := before[key]
		run.HottestRUs = max(run.HottestRUs, (a.RequestCharge-b.RequestCharge)/loadTime.Seconds())
		run.Throttled += a.Throttled - b.Throttled
	}
	return run, nil
}

// stockUp gives the first products of the catalog sold without variants
// plenty of stock and returns their ids.
func stockUp(ctx context.Context, l *lab, s store.Store) ([]string, error) {
	cats, err := repo.New(s, 0).Products.Categories(ctx)
	if err != nil {
		return nil, err
	}
	admin := l.token("throttle-admin", true)
	var ids []string
	for _, c := range cats.Items {
		raw, err := repo.New(s, 0).ProductSummaries.Page(ctx, c.ID, repo.SortByName, nil, store.DefaultPageSize, "")
		if err != nil {
			return nil, err
		}
		page, err := raw.Decode()
		if err != nil {
			return nil, err
		}
		for _, p := range page {
			if len(p.Attributes) > 0 {
				continue // sold in variants: its stock and lines name a SKU
			}
			if err := l.call(http.MethodPut, "/v1/admin/products/"+p.ID+"/stock", admin, `{"available":1000000}`, nil, http.StatusOK); err != nil {
				return nil, err
			}
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("the sample catalog lists no product")
	}
	return ids, nil
}

// statusPartitions is what each physical partition of ordersByStatus has
// spent and refused so far, by feed range.
func statusPartitions(es *embedded.Store) map[string]store.PartitionThroughput {
	out := map[string]store.PartitionThroughput{}
	for _, p := range es.Throughput() {
		if p.Container == store.OrdersByStatusContainer {
			out[fmt.Sprint(p.Partition)] = p
		}
	}
	return out
}

// sampleLag returns the most changes the orders feed was behind, looked
// at every 100 ms until stop closes.
func sampleLag(ctx context.Context, wk *feedworkers.Workers, stop <-chan struct{}) int64 {
	var most int64
	for {
		select {
		case <-stop:
			return most
		case <-ctx.Done():
			return most
		case <-time.After(100 * time.Millisecond):
		}
		ps, err := wk.FeedStatus(ctx)
		if err != nil {
			continue
		}
		for _, p := range ps {
			if p.Processor != feedworkers.OrdersProcessor {
				continue
			}
			var lag int64
			for _, ls := range p.Leases {
				lag += max(ls.LagEstimate, 0)
			}
			most = max(most, lag)
		}
	}
}

// waitCaughtUp waits until every lease has read its feed to the end, seen
// twice a poll apart.
func waitCaughtUp(ctx context.Context, l *lab, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for seen := 0; seen < 2; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(60 * time.Millisecond):
		}
		ok, err := l.caughtUp(ctx)
		if err != nil {
			return err
		}
		if ok {
			seen++
		} else {
			seen = 0
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the feed workers did not catch up in %s", limit)
		}
	}
	return nil
}
