package loadbench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"shop/cmd/shop/internal/report"
)

// externalResult is the product page against the bare handler measured by
// wrk, a load generator in another process: the in-process generator
// shares the shop's CPUs and its runtime (scheduler, GC), which flatters
// neither side equally. Rounds alternate, product page first.
type externalResult struct {
	Generator   string `json:"generator"`
	Command     string `json:"command"`
	Connections int    `json:"connections"`
	Round       string `json:"round"`
	// ProductRounds and BaselineRounds are each round's requests/s.
	ProductRounds  []float64 `json:"productRounds"`
	BaselineRounds []float64 `json:"baselineRounds"`
	// Product and Baseline are the mean requests/s over the rounds.
	Product  float64 `json:"product"`
	Baseline float64 `json:"baseline"`
	Ratio    float64 `json:"ratio"`
	// Errors counts socket errors and non-2xx answers over all rounds.
	Errors int `json:"errors"`
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

// runExternal alternates wrk runs on productURL and baseURL, rounds each,
// the whole of d split between them.
func runExternal(ctx context.Context, wrk, productURL, baseURL string, conns, rounds int, d time.Duration) (externalResult, error) {
	conns = max(conns, wrkThreads)
	round := max(d/time.Duration(rounds), time.Second).Round(time.Second)
	res := externalResult{
		Generator:   "wrk in another process",
		Command:     fmt.Sprintf("wrk -t%d -c%d -d%s URL", wrkThreads, conns, round),
		Connections: conns, Round: round.String(),
	}
	var sums [2]float64
	for i := range 2 * rounds {
		url := productURL
		if i%2 == 1 {
			url = baseURL
		}
		rps, errs, err := wrkRun(ctx, wrk, url, conns, round)
		if err != nil {
			return res, err
		}
		res.Errors += errs
		sums[i%2] += rps
		if i%2 == 0 {
			res.ProductRounds = append(res.ProductRounds, rps)
		} else {
			res.BaselineRounds = append(res.BaselineRounds, rps)
		}
	}
	res.Product = report.Round2(sums[0] / float64(rounds))
	res.Baseline = report.Round2(sums[1] / float64(rounds))
	if res.Baseline > 0 {
		res.Ratio = report.Round2(res.Product / res.Baseline)
	}
	return res, nil
}

var (
	wrkRate    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// wrkRun runs wrk once on url and returns its requests/s and its errors.
func wrkRun(ctx context.Context, wrk, url string, conns int, d time.Duration) (float64, int, error) {
	cmd := exec.CommandContext(ctx, wrk, "-t"+strconv.Itoa(wrkThreads), "-c"+strconv.Itoa(conns),
		"-d"+strconv.Itoa(int(d.Seconds()))+"s", url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("wrk: %w: %s", err, out.String())
	}
	return parseWrk(out.String())
}

// parseWrk reads the requests/s and the errors out of wrk's report.
func parseWrk(out string) (float64, int, error) {
	m := wrkRate.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("wrk: no Requests/sec in %q", out)
	}
	rps, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, 0, fmt.Errorf("wrk: %w", err)
	}
	errs := 0
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		errs += n
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			errs += n
		}
	}
	return rps, errs, nil
}
