package loadbench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
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
	rows := [][]runResult{mix, {r.ProductPage, r.Baseline}}
	if r.ProductClosed != nil && r.BaselineClosed != nil {
		rows = append(rows, []runResult{*r.ProductClosed, *r.BaselineClosed})
	}
	return rows
}

// writeBenchText prints the report as aligned tables for a terminal.
func writeBenchText(out io.Writer, r benchReport) {
	fmt.Fprintf(out, "shop bench: %s\ndata: %s (set up in %s)\nmachine: %s\n\n", r.Target, r.DataSet, r.SetupTime, r.Machine)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tload\trequests\tsent/s\tok/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tsuccess\tstatus\tstore cost/request\tCPU stolen\t")
	for _, group := range benchRows(r) {
		for _, x := range group {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.4f\t%s\t%s\t%.1f%%\t\n", x.Name, loadText(x), x.Requests,
				x.SentRate, x.Throughput, x.P50Ms, x.P90Ms, x.P99Ms, x.MaxMs, x.Success, statusText(x.Status), costText(x), x.StolenPercent)
		}
	}
	tw.Flush()
	if r.Throughput > 0 {
		fmt.Fprintf(out, "\n%s:\n", partitionsTitle(r))
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  container\tpartition\tprovisioned RU/s\tRU/s\tthrottled\t")
		for _, p := range r.MixPartitions {
			fmt.Fprintf(tw, "  %s\t%s\t%.0f\t%.2f\t%d\t\n", p.Container, p.Partition, p.Provisioned, p.RUPerSecond, p.Throttled)
		}
		tw.Flush()
	}
	fmt.Fprintf(out, "\nthroughput of %s (%d bytes), %s:\n", r.Page, r.PageBytes, r.Generator)
	if e := r.External; e != nil {
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  server\treq/s\trounds\tratio\tshop CPU µs/request\tCPU stolen\t")
		for _, t := range e.Targets {
			fmt.Fprintf(tw, "  %s\t%.0f\t%s\t%.2f\t%s\t%.1f%%\t\n", t.Name, t.RPS, roundsText(t.Rounds), t.Ratio, microsText(t.CPUMicrosPerRequest), t.StolenPercent)
		}
		tw.Flush()
		writeBreakdownText(out, e.Targets)
	} else {
		fmt.Fprintf(out, "  ratio %.2f (wrk is not on PATH)\n", r.ThroughputRatio)
	}
	fmt.Fprintf(out, "product page ramp (steps of %s, until p99 > 10 ms or an error):\n", rampStepText(r))
	for _, s := range r.Ramp {
		fmt.Fprintf(out, "  %6d/s  sent %.0f/s  p50 %.2f ms  p99 %.2f ms  max %.2f ms  success %.4f  CPU stolen %.1f%%\n", s.Rate, s.SentRate, s.P50Ms, s.P99Ms, s.MaxMs, s.Success, s.StolenPercent)
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

// partitionsTitle introduces what the partitions spent during the mix.
func partitionsTitle(r benchReport) string {
	return fmt.Sprintf("Request Units per second and throttles (429) of each physical partition during the mix, at %d RU/s provisioned per container split evenly over its partitions", r.Throughput)
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
	if !m.Measured {
		return m.Note
	}
	return fmt.Sprintf("%.1f MB resident when ready with %d products and %d open carts (%.1f MB of it not bbolt's mapped file of %.1f MB); %.1f MB at the peak serving the goals' loads (at most %.1f MB of it not the file); %.1f MB at the peak over every run, the ramp past capacity and the flash sale included (at most %.1f MB not the file) (%s)",
		m.ReadyMB, m.Products, m.Users, m.ReadyAnonMB, m.FileMB, m.ServingMB, m.ServingAnonMB, m.PeakMB, m.PeakAnonMB, m.Note)
}

func microsText(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", us)
}

// writeBreakdownText prints where each profiled shop's CPU went.
func writeBreakdownText(out io.Writer, targets []wrkResult) {
	for _, t := range targets {
		if t.Breakdown == nil {
			continue
		}
		fmt.Fprintf(out, "  where the CPU of %s went (%.2f s sampled):\n", t.Name, t.Breakdown.Seconds)
		for _, p := range t.Breakdown.Parts {
			fmt.Fprintf(out, "    %5.1f%%  %5.1f µs/request  %s\n", p.Percent, p.MicrosPerRequest, p.Part)
		}
	}
}

// writeThroughputMarkdown is the wrk comparison and the CPU breakdown.
func writeThroughputMarkdown(out io.Writer, r benchReport) {
	e := r.External
	fmt.Fprintf(out, "### Throughput, measured from another process\n\n")
	fmt.Fprintf(out, "`%s` on `%s` (%d bytes), %d rounds of each server, alternating; %d errors. The shop's CPU per request is its process's user and system time (/proc) over the requests wrk completed in its rounds.\n\n",
		e.Command, r.Page, r.PageBytes, len(e.Targets[0].Rounds), e.Errors)
	fmt.Fprintln(out, "| server | req/s (rounds) | ratio to the bare handler | shop CPU per request | CPU stolen |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|")
	for _, t := range e.Targets {
		fmt.Fprintf(out, "| %s | %.0f %s | **%.2f** | %s | %.1f%% |\n", t.Name, t.RPS, roundsText(t.Rounds), t.Ratio, microsUnit(t.CPUMicrosPerRequest), t.StolenPercent)
	}
	var profiled []wrkResult
	for _, t := range e.Targets {
		if t.Breakdown != nil {
			profiled = append(profiled, t)
		}
	}
	if len(profiled) == 0 {
		fmt.Fprintln(out)
		return
	}
	fmt.Fprintf(out, "\n### Where a product page's CPU goes\n\n")
	fmt.Fprintf(out, "A CPU profile of each shop (its SHOP_PPROF_ADDR listener) during one more wrk round, not counted above. Each sample goes to the part of its innermost frame that names one (cmd/shop/internal/loadbench/profile.go): an allocation made by the telemetry is the allocator's, a write the handler makes is net/http's. µs per request = share × the CPU per request above.\n\n")
	writeBreakdownTable(out, profiled)
}

// writeBreakdownTable is the profiled targets' breakdowns side by side: a
// row per part, a column per target (its name), and the CPU per request.
func writeBreakdownTable(out io.Writer, profiled []wrkResult) {
	fmt.Fprint(out, "| part |")
	for _, t := range profiled {
		fmt.Fprintf(out, " %s |", t.Name)
	}
	fmt.Fprint(out, "\n|---|")
	for range profiled {
		fmt.Fprint(out, "--:|")
	}
	fmt.Fprintln(out)
	for i, p := range profiled[0].Breakdown.Parts {
		fmt.Fprintf(out, "| %s |", p.Part)
		for _, t := range profiled {
			q := t.Breakdown.Parts[i]
			fmt.Fprintf(out, " %.1f%% (%.1f µs) |", q.Percent, q.MicrosPerRequest)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprint(out, "| **total** |")
	for _, t := range profiled {
		fmt.Fprintf(out, " %s |", microsUnit(t.CPUMicrosPerRequest))
	}
	fmt.Fprint(out, "\n\n")
}

func microsUnit(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f µs", us)
}

// writeBenchMarkdown prints the report as the bench section of
// docs/performance.md.
func writeBenchMarkdown(out io.Writer, r benchReport) {
	fmt.Fprintf(out, "## Load benchmark: the HTTP path against a bare handler\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- target: %s\n", r.Target)
	fmt.Fprintf(out, "- load: the constant-rate runs, the ramp and the flash sale from the vegeta library in the bench's own process, which is not the shop's (a slow answer does not slow the sender, so tail latency is not hidden; the bench collects its garbage at GOGC=400, as the shop does, so that its own collections delay fewer sends and answers); the throughput comparison from %s\n", r.Generator)
	fmt.Fprintf(out, "- machine: %s; the load generators and the shop share these CPUs\n", r.Machine)
	fmt.Fprintf(out, "- data: %s (set up in %s)\n", r.DataSet, r.SetupTime)
	fmt.Fprintln(out, "- CPU stolen: the share of the machine's CPU time its hypervisor gave to other machines while a run lasted (steal, /proc/stat), when neither the shop nor the generator could run: a virtual machine on a busy host shows it as latency that no code explains")
	for _, rev := range r.Revisions {
		fmt.Fprintf(out, "- revision %s (%s): built from this repository's history and run as a shop of its own on a copy of the same data, for the before and after\n", rev.Rev, rev.Subject)
	}
	fmt.Fprintf(out, "- mix: 70%% product page, 15%% category page, 10%% cart update (PUT /v1/cart/items/{id}, spread over at least %d users so each updates their cart about twice), 5%% checkout (each by a distinct new user with one line in the cart, a product listed in_stock, with an Idempotency-Key)\n", minCartUsers)
	fmt.Fprintf(out, "- baseline: a bare net/http handler in the bench's process writing the same bytes as the product page `%s` (%d bytes)\n\n", r.Page, r.PageBytes)
	fmt.Fprintln(out, "| run | load | requests | sent/s | ok/s | p50 ms | p90 ms | p99 ms | max ms | success | status | store cost/request | CPU stolen |")
	fmt.Fprintln(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|--:|")
	for _, group := range benchRows(r) {
		for _, x := range group {
			fmt.Fprintf(out, "| %s | %s | %d | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.4f | %s | %s | %.1f%% |\n", strings.TrimSpace(x.Name), loadText(x), x.Requests,
				x.SentRate, x.Throughput, x.P50Ms, x.P90Ms, x.P99Ms, x.MaxMs, x.Success, statusText(x.Status), costText(x), x.StolenPercent)
		}
	}
	fmt.Fprintln(out)
	if r.Throughput > 0 {
		fmt.Fprintf(out, "%s (GET /v1/admin/throughput before and after it; the partitions that spent nothing are left out):\n\n", partitionsTitle(r))
		fmt.Fprintln(out, "| container | partition | provisioned RU/s | RU/s | throttled |")
		fmt.Fprintln(out, "|---|---|--:|--:|--:|")
		for _, p := range r.MixPartitions {
			fmt.Fprintf(out, "| %s | %s | %.0f | %.2f | %d |\n", p.Container, p.Partition, p.Provisioned, p.RUPerSecond, p.Throttled)
		}
		fmt.Fprintln(out)
	}
	if r.External != nil {
		writeThroughputMarkdown(out, r)
	} else {
		fmt.Fprintf(out, "Throughput ratio, product page / baseline (%s, wrk was not on PATH): **%.2f**.\n\n", r.Generator, r.ThroughputRatio)
	}
	fmt.Fprintf(out, "Product page ramp, %s per step, until p99 > 10 ms or an error:\n\n", rampStepText(r))
	fmt.Fprintln(out, "| rate | sent/s | p50 ms | p99 ms | max ms | success | CPU stolen |")
	fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range r.Ramp {
		fmt.Fprintf(out, "| %d/s | %.0f | %.2f | %.2f | %.2f | %.4f | %.1f%% |\n", s.Rate, s.SentRate, s.P50Ms, s.P99Ms, s.MaxMs, s.Success, s.StolenPercent)
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

func roundsText(rps []float64) string {
	parts := make([]string, len(rps))
	for i, x := range rps {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
