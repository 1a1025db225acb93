package loadbench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// wrkTarget is one server wrk loads in the throughput comparison: the
// shop, a shop at another revision, or the bare handler (no child).
type wrkTarget struct {
	name  string
	url   string
	child *childShop
	// headers are sent with every request ("Authorization: Bearer ..."
	// for a signed-in screen), to the bare handler as to the shop.
	headers []string
}

// externalResult is the product page of each shop against the bare
// handler, measured by wrk, a load generator in another process: the
// in-process generator shares the shop's runtime (scheduler, GC), which
// flatters neither side equally. Rounds alternate over the targets.
type externalResult struct {
	Generator   string `json:"generator"`
	Command     string `json:"command"`
	Connections int    `json:"connections"`
	Round       string `json:"round"`
	// Targets are the shops, then the baseline last.
	Targets []wrkResult `json:"targets"`
	// Errors counts socket errors and non-2xx answers over all rounds.
	Errors int `json:"errors"`
}

// wrkResult is one target's rounds.
type wrkResult struct {
	Name string `json:"name"`
	// Rounds are each round's requests/s, RPS their mean, Median their
	// median.
	Rounds []float64 `json:"rounds"`
	RPS    float64   `json:"rps"`
	Median float64   `json:"median"`
	// Ratio is RPS over the baseline's.
	Ratio float64 `json:"ratio"`
	// CPUMicrosPerRequest is the server's CPU time (user and system, from
	// /proc) over the requests wrk completed: what one request costs the
	// shop's process, whatever else the machine does (0 for the
	// baseline, which runs in this process).
	CPUMicrosPerRequest float64 `json:"cpuMicrosPerRequest,omitempty"`
	// Breakdown is where that CPU went (a shop with a profile listener).
	Breakdown *breakdown `json:"breakdown,omitempty"`
	// Errors are its answers that were not 2xx and the socket errors wrk
	// reported, over its rounds.
	Errors int `json:"errors,omitempty"`
	// StolenPercent is the share of the machine's CPU time the hypervisor
	// took during this target's rounds (cpuClock), StolenRounds the same
	// share during each round.
	StolenPercent float64   `json:"stolenPercent"`
	StolenRounds  []float64 `json:"stolenRounds"`
	requests      int64
	cpu           float64 // seconds
	clock         cpuClock
}

// wrkThreads is wrk's -t: one per core of a small machine.
const wrkThreads = 2

// findWrk is the path of wrk, or "" when it is not on PATH.
func findWrk() string {
	p, err := exec.LookPath("wrk")
	if err != nil {
		return ""
	}
	return p
}

// runExternal loads each target with wrk for rounds rounds of round,
// alternating (a, b, c, a, b, c, ...) so that whatever else the machine
// does weighs on all alike. The last target is the baseline.
func runExternal(ctx context.Context, wrk string, targets []wrkTarget, conns, rounds int, round time.Duration) (externalResult, error) {
	conns = max(conns, wrkThreads)
	round = max(round, time.Second).Round(time.Second)
	res := externalResult{
		Generator:   "wrk in another process",
		Command:     fmt.Sprintf("wrk -t%d -c%d -d%s URL", wrkThreads, conns, round),
		Connections: conns, Round: round.String(),
		Targets: make([]wrkResult, len(targets)),
	}
	for i, t := range targets {
		res.Targets[i].Name = t.name
	}
	for range rounds {
		for i, t := range targets {
			var before time.Duration
			if t.child != nil {
				var err error
				if before, err = t.child.cpuTime(); err != nil {
					return res, err
				}
			}
			clock := readCPUClock()
			run, err := wrkRun(ctx, wrk, t.url, conns, round, t.headers...)
			if err != nil {
				return res, err
			}
			r := &res.Targets[i]
			took := readCPUClock().sub(clock)
			r.clock = r.clock.add(took)
			r.StolenRounds = append(r.StolenRounds, report.Round2(took.stolenPercent()))
			if t.child != nil {
				after, err := t.child.cpuTime()
				if err != nil {
					return res, err
				}
				r.cpu += (after - before).Seconds()
			}
			res.Errors += run.errors
			r.Errors += run.errors
			r.Rounds = append(r.Rounds, report.Round2(run.rps))
			r.requests += run.requests
		}
	}
	base := &res.Targets[len(targets)-1]
	for i := range res.Targets {
		r := &res.Targets[i]
		var sum float64
		for _, x := range r.Rounds {
			sum += x
		}
		r.RPS = report.Round2(sum / float64(len(r.Rounds)))
		r.Median = report.Round2(median(r.Rounds))
		r.StolenPercent = report.Round2(r.clock.stolenPercent())
		if r.requests > 0 && r.cpu > 0 {
			r.CPUMicrosPerRequest = report.Round2(r.cpu / float64(r.requests) * 1e6)
		}
	}
	for i := range res.Targets {
		if base.RPS > 0 {
			res.Targets[i].Ratio = report.Round2(res.Targets[i].RPS / base.RPS)
		}
	}
	return res, nil
}

// profileTargets takes, for each shop that has a profile listener, a CPU
// profile during one more wrk round of round, and breaks it down. Those
// rounds are not counted in the throughput: the profiler costs the shop.
func profileTargets(ctx context.Context, wrk string, targets []wrkTarget, res *externalResult, conns int, round time.Duration) error {
	for i, t := range targets {
		if t.child == nil || t.child.pprof == "" {
			continue
		}
		p, err := profileDuring(ctx, wrk, t, conns, round)
		if err != nil {
			return err
		}
		b := breakDown(p, res.Targets[i].CPUMicrosPerRequest)
		res.Targets[i].Breakdown = &b
	}
	return nil
}

// profileDuring takes a CPU profile of t's shop (through its profile
// listener) during one wrk round of round on t.
func profileDuring(ctx context.Context, wrk string, t wrkTarget, conns int, round time.Duration) (*profile.Profile, error) {
	type taken struct {
		p   *profile.Profile
		err error
	}
	done := make(chan taken, 1)
	go func() {
		p, err := takeProfile(ctx, t.child.pprof, round)
		done <- taken{p, err}
	}()
	if _, err := wrkRun(ctx, wrk, t.url, conns, round, t.headers...); err != nil {
		return nil, err
	}
	got := <-done
	if got.err != nil {
		return nil, fmt.Errorf("profiling %s: %w", t.name, got.err)
	}
	return got.p, nil
}

var (
	wrkRate     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkRequests = regexp.MustCompile(`(\d+) requests in `)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr  = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// median is the middle of xs (the mean of the two middle ones when
// their number is even), 0 for none; xs is not reordered.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// wrkRun runs wrk once on url, each request with the headers given
// ("Name: value").
func wrkRun(ctx context.Context, wrk, url string, conns int, d time.Duration, headers ...string) (wrkOutput, error) {
	args := []string{"-t" + strconv.Itoa(wrkThreads), "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(int(d.Seconds())) + "s"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := exec.CommandContext(ctx, wrk, append(args, url)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return wrkOutput{}, fmt.Errorf("wrk: %w: %s", err, out.String())
	}
	return parseWrk(out.String())
}

// wrkOutput is what the bench reads of wrk's report.
type wrkOutput struct {
	rps      float64
	requests int64
	errors   int
}

// parseWrk reads the requests/s, the requests and the errors out of wrk's
// report.
func parseWrk(out string) (wrkOutput, error) {
	m := wrkRate.FindStringSubmatch(out)
	if m == nil {
		return wrkOutput{}, fmt.Errorf("wrk: no Requests/sec in %q", out)
	}
	rps, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return wrkOutput{}, fmt.Errorf("wrk: %w", err)
	}
	o := wrkOutput{rps: rps}
	if m := wrkRequests.FindStringSubmatch(out); m != nil {
		o.requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		o.errors += n
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			o.errors += n
		}
	}
	return o, nil
}
