package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
)

// StatusViewReport is what `shop scale --status-view` prints (--json).
type StatusViewReport struct {
	Machine  report.Machine  `json:"machine"`
	Command  string          `json:"command"`
	Options  ThrottleOptions `json:"options"`
	Duration string          `json:"duration"`
	Runs     []ThrottleRun   `json:"runs"`
}

// maxThrottleDuration keeps a run of every bucket count within minutes.
const maxThrottleDuration = 30 * time.Second

// parseBuckets reads --buckets and checks the load's settings.
func (o *ThrottleOptions) parseBuckets(list string) error {
	o.Buckets = nil
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > domain.MaxStatusBuckets {
			return fmt.Errorf("buckets: want numbers from 1 to %d, got %q", domain.MaxStatusBuckets, f)
		}
		o.Buckets = append(o.Buckets, n)
	}
	switch {
	case len(o.Buckets) > 4:
		return errors.New("buckets: at most 4 numbers")
	case o.Throughput < 100 || o.Throughput > 10000*o.Partitions || o.Others < 100 || o.Others > 10000*o.Partitions:
		return fmt.Errorf("throughput, others: want 100 to %d RU/s (10,000 per partition)", 10000*o.Partitions)
	case o.Rate < 1 || o.Rate > 1000:
		return errors.New("rate: want 1 to 1000 checkouts per second")
	case o.Duration < time.Second || o.Duration > maxThrottleDuration:
		return fmt.Errorf("duration: want 1s to %s", maxThrottleDuration)
	case o.Partitions < 1 || o.Partitions > 64:
		return errors.New("partitions: want 1 to 64")
	}
	return nil
}

// runStatusView runs the load with each number of buckets and reports.
func runStatusView(ctx context.Context, o ThrottleOptions, command string, out report.Output, stdout io.Writer) error {
	rep := StatusViewReport{Machine: report.ThisMachine(), Command: command, Options: o, Duration: o.Duration.String()}
	var err error
	if rep.Runs, err = runThrottle(ctx, o); err != nil {
		return err
	}
	return report.Write(stdout, rep, out, "scale status view",
		func(w io.Writer) { writeStatusViewMarkdown(w, rep) }, func(w io.Writer) { writeStatusViewMarkdown(w, rep) })
}

func writeStatusViewMarkdown(w io.Writer, rep StatusViewReport) {
	o := rep.Options
	fmt.Fprintf(w, "Written by `%s` on %s. The shop in process (API and feed workers) over a fresh embedded store with %d simulated physical partitions; ordersByStatus provisioned %d RU/s (%s RU/s per physical partition), every other container %d RU/s; %d checkouts/s for %s, each a different buyer with one line, spread over 80 products; the throughput is set after the buyers are prepared.\n\n",
		rep.Command, rep.Machine, o.Partitions, o.Throughput, count(float64(o.Throughput)/float64(o.Partitions)), o.Others, o.Rate, rep.Duration)
	fmt.Fprintln(w, "| status buckets | checkouts | success rate | 503s | p99 (ms) | RU/s of the hottest ordersByStatus partition (budget) | ordersByStatus calls throttled | orders feed: most changes behind | caught up after the load (s) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "| %d | %d | %s | %d | %.1f | %s (%s) | %d | %d | %.1f |\n", r.Buckets, r.Checkouts, percent(r.SuccessRate), r.Unavailable,
			r.P99Millis, count(r.HottestRUs), count(r.Budget), r.Throttled, r.MaxLag, r.DrainSeconds)
	}
}

// percent prints a rate as a percentage with one decimal.
func percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }
