package loadbench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"shop/cmd/shop/internal/report"
)

// statusText renders a status histogram, e.g. "200×4999 201×250".
func statusText(st map[string]int) string {
	codes := make([]string, 0, len(st))
	for c := range st {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		if c == "0" {
			parts[i] = fmt.Sprintf("no answer×%d", st[c])
		} else {
			parts[i] = fmt.Sprintf("%s×%d", c, st[c])
		}
	}
	return strings.Join(parts, " ")
}

func loadText(r runResult) string {
	if r.Rate == 0 && r.Clients == 0 {
		return "its share of the mix"
	}
	if r.Rate == 0 {
		return fmt.Sprintf("closed loop, %d clients", r.Clients)
	}
	return fmt.Sprintf("%d/s", r.Rate)
}

func costText(r runResult) string {
	if r.OpsPerRequest == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ops, %.2f RU", r.OpsPerRequest, r.RUPerRequest)
}

// benchRows are the report's runs in the order they are shown.
func benchRows(r benchReport) [][]runResult {
	mix := []runResult{r.Mix}
	for _, k := range r.MixByKind {
		k.Name = "  mix: " + k.Name
		mix = append(mix, k)
	}
	return [][]runResult{mix, {r.ProductPage, r.Baseline}, {r.ProductClosed, r.BaselineClosed}}
}

// writeBenchText prints the report as aligned tables for a terminal.
func writeBenchText(out io.Writer, r benchReport) {
	fmt.Fprintf(out, "shop bench: %s\ndata: %s (set up in %s)\nmachine: %s\n\n", r.Target, r.DataSet, r.SetupTime, r.Machine)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tload\trequests\tsent/s\tok/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tsuccess\tstatus\tstore cost/request\t")
	for _, group := range benchRows(r) {
		for _, x := range group {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.4f\t%s\t%s\t\n", x.Name, loadText(x), x.Requests,
				x.SentRate, x.Throughput, x.P50Ms, x.P90Ms, x.P99Ms, x.MaxMs, x.Success, statusText(x.Status), costText(x))
		}
	}
	tw.Flush()
	fmt.Fprintf(out, "\nthroughput ratio, product page / baseline (closed loop, in process): %.2f\n", r.ThroughputRatio)
	if e := r.External; e != nil {
		fmt.Fprintf(out, "%s\n", externalText(*e))
	} else {
		fmt.Fprintln(out, "wrk is not on PATH: no measurement from another process")
	}
	fmt.Fprintf(out, "product page ramp (steps of %s, until p99 > 10 ms or an error):\n", rampStepText(r))
	for _, s := range r.Ramp {
		fmt.Fprintf(out, "  %6d/s  sent %.0f/s  p50 %.2f ms  p99 %.2f ms  max %.2f ms  success %.4f\n", s.Rate, s.SentRate, s.P50Ms, s.P99Ms, s.MaxMs, s.Success)
	}
	fmt.Fprintf(out, "max sustainable rate: %s (stopped: %s)\n", sustainedText(r), r.RampStopped)
	if f := r.FlashSale; f != nil {
		fmt.Fprintf(out, "flash sale: %s\n", flashText(*f))
	}
	fmt.Fprintf(out, "memory: %s\n", memoryText(r.Memory))
	for _, x := range append([]runResult{r.Mix}, r.MixByKind...) {
		for _, e := range x.Errors {
			fmt.Fprintf(out, "error in %s: %s\n", x.Name, e)
		}
	}
	fmt.Fprintln(out, "\ngoals:")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "  %s %s: %.2f%s, %s\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}

func sustainedText(r benchReport) string {
	if r.MaxSustainableRate == 0 && len(r.Ramp) > 0 {
		return fmt.Sprintf("below %d/s, the ramp's first step", r.Ramp[0].Rate)
	}
	return fmt.Sprintf("%d/s", r.MaxSustainableRate)
}

func rampStepText(r benchReport) string {
	if len(r.Ramp) == 0 {
		return "-"
	}
	return r.Ramp[0].Duration
}

func memoryText(m memoryReport) string {
	if !m.InProcess {
		return m.Note
	}
	return fmt.Sprintf("%.1f MB resident once %d products and %d open carts were loaded, %.1f MB at the peak while serving (%s)",
		m.LoadedMB, m.Products, m.Users, m.PeakServingMB, m.Note)
}

// writeBenchMarkdown prints the report as the bench section of
// docs/performance.md.
func writeBenchMarkdown(out io.Writer, r benchReport) {
	fmt.Fprintf(out, "## Load benchmark: the HTTP path against a bare handler\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- target: %s; load from the vegeta library in the same process, on loopback, at a constant rate (a slow answer does not slow the sender, so tail latency is not hidden)\n", r.Target)
	fmt.Fprintf(out, "- machine: %s; the load generator and the shop share these CPUs\n", r.Machine)
	fmt.Fprintf(out, "- data: %s (set up in %s)\n", r.DataSet, r.SetupTime)
	fmt.Fprintf(out, "- mix: 70%% product page, 15%% category page, 10%% cart update (PUT /v1/cart/items/{id}, spread over at least %d users so each updates their cart about twice), 5%% checkout (each by a distinct new user with one line in the cart, a product listed in_stock, with an Idempotency-Key)\n", minCartUsers)
	fmt.Fprintf(out, "- baseline: a bare net/http handler writing the same product JSON bytes\n")
	if r.External != nil {
		fmt.Fprintf(out, "- throughput goal: measured by wrk in another process (below the tables), which does not share the shop's runtime; the in-process closed loop is shown beside it\n\n")
	} else {
		fmt.Fprintf(out, "- throughput goal: the in-process closed loop (wrk, the generator in another process, was not on PATH)\n\n")
	}
	fmt.Fprintln(out, "| run | load | requests | sent/s | ok/s | p50 ms | p90 ms | p99 ms | max ms | success | status | store cost/request |")
	fmt.Fprintln(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|")
	for _, group := range benchRows(r) {
		for _, x := range group {
			fmt.Fprintf(out, "| %s | %s | %d | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.4f | %s | %s |\n", strings.TrimSpace(x.Name), loadText(x), x.Requests,
				x.SentRate, x.Throughput, x.P50Ms, x.P90Ms, x.P99Ms, x.MaxMs, x.Success, statusText(x.Status), costText(x))
		}
	}
	fmt.Fprintf(out, "\nThroughput ratio, product page / baseline (closed loop, same run, in-process generator): **%.2f**.\n\n", r.ThroughputRatio)
	if e := r.External; e != nil {
		fmt.Fprintf(out, "Load from %s.\n\n", externalText(*e))
	} else {
		fmt.Fprintf(out, "wrk was not on PATH: no measurement from another process.\n\n")
	}
	fmt.Fprintf(out, "Product page ramp, %s per step, until p99 > 10 ms or an error:\n\n", rampStepText(r))
	fmt.Fprintln(out, "| rate | sent/s | p50 ms | p99 ms | max ms | success |")
	fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|")
	for _, s := range r.Ramp {
		fmt.Fprintf(out, "| %d/s | %.0f | %.2f | %.2f | %.2f | %.4f |\n", s.Rate, s.SentRate, s.P50Ms, s.P99Ms, s.MaxMs, s.Success)
	}
	fmt.Fprintf(out, "\nMax sustainable rate of the product page: **%s** (stopped: %s).\n\n", sustainedText(r), r.RampStopped)
	if f := r.FlashSale; f != nil {
		fmt.Fprintf(out, "### Flash sale: %d buyers, %d units of one product\n\n", f.Buyers, f.Units)
		fmt.Fprintf(out, "Generator: %s. Each buyer is a distinct user with one unit in the cart (prepared before the burst); each checkout has its own Idempotency-Key and is sent once.\n\n", f.Generator)
		fmt.Fprintln(out, "| buyers | units | 201 | 409 out-of-stock | other | burst | checkouts/s | conflict rate | p50 ms | p99 ms | max ms | per sale | per refusal | available after |")
		fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|--:|")
		fmt.Fprintf(out, "| %d | %d | %d | %d | %d | %.0f ms | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f ops, %.2f RU | %.2f ops, %.2f RU | %d |\n\n",
			f.Buyers, f.Units, f.Created, f.Refused, f.Other, f.DurationMs, f.Throughput, f.ConflictRate, f.P50Ms, f.P99Ms, f.MaxMs,
			f.OpsPerSale, f.RUPerSale, f.OpsPerRefusal, f.RUPerRefusal, f.AvailableAfter)
	}
	fmt.Fprintf(out, "Memory: %s.\n\n", memoryText(r.Memory))
	fmt.Fprintln(out, "| goal | target | measured | |")
	fmt.Fprintln(out, "|---|--:|--:|---|")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "| %s | %s | %.2f%s | %s |\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}

// flashText is the flash sale in one line.
func flashText(f flashResult) string {
	return fmt.Sprintf("%d buyers for %d units: %d × 201, %d × 409 out-of-stock, %d other in %.0f ms: %.0f checkouts/s, conflict rate %.2f, p50 %.2f ms, p99 %.2f ms; %.2f RU per sale, %.2f RU per refusal; %d available after (generator: %s)",
		f.Buyers, f.Units, f.Created, f.Refused, f.Other, f.DurationMs, f.Throughput, f.ConflictRate, f.P50Ms, f.P99Ms, f.RUPerSale, f.RUPerRefusal, f.AvailableAfter, f.Generator)
}

// externalText is the comparison through wrk in one line.
func externalText(e externalResult) string {
	return fmt.Sprintf("%s, `%s`, %d rounds each side alternating: product page %.0f req/s %v, baseline %.0f req/s %v, ratio %.2f, %d errors",
		e.Generator, e.Command, len(e.ProductRounds), e.Product, roundsText(e.ProductRounds), e.Baseline, roundsText(e.BaselineRounds), e.Ratio, e.Errors)
}

func roundsText(rps []float64) string {
	parts := make([]string, len(rps))
	for i, x := range rps {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
