package loadbench

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// runResult is one load run.
type runResult struct {
	Name string `json:"name"`
	// Rate is the requested constant rate; 0 for a closed-loop run, where
	// Clients concurrent clients send as fast as answers come back.
	Rate     int    `json:"rate"`
	Clients  int    `json:"clients,omitempty"`
	Duration string `json:"duration"`
	Requests uint64 `json:"requests"`
	// SentRate is the rate requests went out at; Throughput the rate of
	// successful answers.
	SentRate   float64        `json:"sentRate"`
	Throughput float64        `json:"throughput"`
	P50Ms      float64        `json:"p50Ms"`
	P90Ms      float64        `json:"p90Ms"`
	P99Ms      float64        `json:"p99Ms"`
	MaxMs      float64        `json:"maxMs"`
	Success    float64        `json:"success"`
	Status     map[string]int `json:"status"`
	Errors     []string       `json:"errors,omitempty"`
	// RUPerRequest and OpsPerRequest are the means of the shop's
	// X-Request-Charge and X-Store-Operations headers (0 for the baseline).
	RUPerRequest  float64 `json:"ruPerRequest,omitempty"`
	OpsPerRequest float64 `json:"storeOpsPerRequest,omitempty"`
	// StolenPercent is the share of the machine's CPU time the hypervisor
	// took while the run lasted (steal in /proc/stat; cpuClock).
	StolenPercent float64 `json:"stolenPercent"`
}

func (r runResult) p99() time.Duration { return time.Duration(r.P99Ms * float64(time.Millisecond)) }

// collector accumulates the results of one run (or of one kind of request
// within it).
type collector struct {
	m       vegeta.Metrics
	ru, ops float64
	costed  int
}

func (c *collector) add(r *vegeta.Result) {
	c.m.Add(r)
	if r.Headers == nil {
		return
	}
	ru, err1 := strconv.ParseFloat(r.Headers.Get("X-Request-Charge"), 64)
	ops, err2 := strconv.ParseFloat(r.Headers.Get("X-Store-Operations"), 64)
	if err1 == nil && err2 == nil {
		c.ru += ru
		c.ops += ops
		c.costed++
	}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000 }

func (c *collector) result(name string, rate, clients int, d time.Duration) runResult {
	c.m.Close()
	r := runResult{
		Name: name, Rate: rate, Clients: clients, Duration: d.String(),
		Requests:   c.m.Requests,
		SentRate:   report.Round2(c.m.Rate),
		Throughput: report.Round2(c.m.Throughput),
		P50Ms:      ms(c.m.Latencies.P50),
		P90Ms:      ms(c.m.Latencies.P90),
		P99Ms:      ms(c.m.Latencies.P99),
		MaxMs:      ms(c.m.Latencies.Max),
		Success:    math.Round(c.m.Success*10000) / 10000,
		Status:     c.m.StatusCodes,
		Errors:     c.m.Errors[:min(len(c.m.Errors), 5)],
	}
	if c.costed > 0 {
		r.RUPerRequest = report.Round2(c.ru / float64(c.costed))
		r.OpsPerRequest = report.Round2(c.ops / float64(c.costed))
	}
	return r
}

// load is one run's shape: a constant rate, or (rate 0) a closed loop of
// clients.
type load struct {
	name     string
	rate     int
	clients  int
	duration time.Duration
}

// hitAll runs tr under the load and hands every result to sink.
func hitAll(ctx context.Context, l load, tr vegeta.Targeter, sink func(*vegeta.Result)) {
	// A transport of the run's own, closed at its end: the idle
	// connections of one run must not stay open through the next ones
	// (the baseline lives in this process, so each costs two descriptors
	// here, and a bench of many runs would run out of them).
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 10000,
	}
	defer transport.CloseIdleConnections()
	opts := []func(*vegeta.Attacker){vegeta.Client(&http.Client{Transport: transport}), vegeta.Timeout(5 * time.Second), vegeta.KeepAlive(true), vegeta.MaxWorkers(2000)}
	pacer := vegeta.Pacer(vegeta.Rate{Freq: l.rate, Per: time.Second})
	if l.rate == 0 {
		// Closed loop: a fixed set of clients, each sending its next
		// request when the previous answer is in.
		opts = append(opts, vegeta.Workers(uint64(l.clients)), vegeta.MaxWorkers(uint64(l.clients)))
		pacer = vegeta.ConstantPacer{}
	}
	a := vegeta.NewAttacker(opts...)
	stop := context.AfterFunc(ctx, func() { a.Stop() })
	defer stop()
	for res := range a.Attack(tr, pacer, l.duration, l.name) {
		sink(res)
		// The body was read (so the connection is reused); it is not kept.
		res.Body = nil
	}
}

// attack runs tr under the load and returns the run's result and, when
// kind is set, one result per kind of request.
func attack(ctx context.Context, l load, tr vegeta.Targeter, kind func(method, url string) string) (runResult, []runResult) {
	var all collector
	byKind := map[string]*collector{}
	start := readCPUClock()
	hitAll(ctx, l, tr, func(res *vegeta.Result) {
		all.add(res)
		if kind != nil {
			k := kind(res.Method, res.URL)
			if byKind[k] == nil {
				byKind[k] = &collector{}
			}
			byKind[k].add(res)
		}
	})
	stolen := report.Round2(readCPUClock().sub(start).stolenPercent())
	var kinds []runResult
	for k, c := range byKind {
		r := c.result(k, 0, 0, l.duration)
		r.StolenPercent = stolen
		kinds = append(kinds, r)
	}
	slices.SortFunc(kinds, func(a, b runResult) int { return int(b.Requests) - int(a.Requests) })
	r := all.result(l.name, l.rate, l.clients, l.duration)
	r.StolenPercent = stolen
	return r, kinds
}

// alternate runs the two loads in turns, each split into segments slices
// (a, b, a, b, ...), so that whatever else the machine does weighs on both
// alike: a comparison "in the same run" that a burst of other work cannot
// tilt. Rates are over each side's own active time.
func alternate(ctx context.Context, segments int, la, lb load, ta, tb vegeta.Targeter) (runResult, runResult) {
	loads, trs := [2]load{la, lb}, [2]vegeta.Targeter{ta, tb}
	var cs [2]collector
	var active [2]time.Duration
	var clocks [2]cpuClock
	for i := range 2 * segments {
		k := i % 2
		seg := loads[k]
		seg.duration = max(loads[k].duration/time.Duration(segments), 100*time.Millisecond)
		start, clock := time.Now(), readCPUClock()
		hitAll(ctx, seg, trs[k], cs[k].add)
		active[k] += time.Since(start)
		clocks[k] = clocks[k].add(readCPUClock().sub(clock))
	}
	var out [2]runResult
	for k := range out {
		out[k] = cs[k].result(loads[k].name, loads[k].rate, loads[k].clients, loads[k].duration)
		out[k].StolenPercent = report.Round2(clocks[k].stolenPercent())
		if secs := active[k].Seconds(); secs > 0 {
			out[k].SentRate = report.Round2(float64(out[k].Requests) / secs)
			out[k].Throughput = report.Round2(float64(out[k].Requests) * out[k].Success / secs)
		}
	}
	return out[0], out[1]
}

// ramp raises the rate of tr from o.rampFrom, doubling, until the 99th
// percentile passes rampP99Limit, a request fails, the sender cannot keep
// the rate, or o.rampMax is passed. It returns the steps, the highest rate
// sustained and why it stopped.
func ramp(ctx context.Context, o benchOptions, name string, tr func() vegeta.Targeter) ([]runResult, int, string) {
	var steps []runResult
	best := 0
	for rate := o.rampFrom; rate <= o.rampMax; rate *= 2 {
		r, _ := attack(ctx, load{name: fmt.Sprintf("%s at %d/s", name, rate), rate: rate, duration: o.rampStep}, tr(), nil)
		steps = append(steps, r)
		switch {
		case ctx.Err() != nil:
			return steps, best, "interrupted"
		case r.Success < 1:
			return steps, best, fmt.Sprintf("errors at %d/s (success %.4f)", rate, r.Success)
		case r.p99() > rampP99Limit:
			return steps, best, fmt.Sprintf("p99 %.2f ms > %s at %d/s", r.P99Ms, rampP99Limit, rate)
		case r.SentRate < 0.95*float64(rate):
			return steps, best, fmt.Sprintf("the load generator sent only %.0f/s of %d/s (it shares the CPUs with the shop)", r.SentRate, rate)
		}
		best = rate
	}
	return steps, best, fmt.Sprintf("reached --ramp-max %d/s", o.rampMax)
}
