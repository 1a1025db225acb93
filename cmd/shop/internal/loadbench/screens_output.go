package loadbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

// signedInText says who a screen is signed in as ("" for a public one).
func signedInText(s screenResult) string {
	if s.User == "" {
		return ""
	}
	return ", signed in as " + s.User
}

// medianRoundsText is a target's median requests/s and its rounds.
func medianRoundsText(t wrkResult) string {
	return fmt.Sprintf("%.0f %s", t.Median, roundsText(t.Rounds))
}

// stolenRoundsText is the CPU stolen during each round of the shop, then
// of the bare handler, in percent.
func stolenRoundsText(s screenResult) string {
	pct := func(xs []float64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = fmt.Sprintf("%.1f", x)
		}
		return strings.Join(parts, ", ")
	}
	return pct(s.Shop.StolenRounds) + " / " + pct(s.Bare.StolenRounds)
}

// atRateText is the p99 of the constant-rate run and its success.
func atRateText(r runResult) string {
	return fmt.Sprintf("%.2f ms (%.4f)", r.P99Ms, r.Success)
}

func screensErrors(r screensReport) int {
	n := 0
	for _, s := range r.Screens {
		n += s.Errors
	}
	return n
}

// writeScreensMarkdown prints the report as the screens section of
// docs/performance.md.
func writeScreensMarkdown(out io.Writer, r screensReport) {
	fmt.Fprintf(out, "## Every one-read screen against a bare handler\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- target: %s; the read cache off, as `shop serve` has it on the embedded store\n", r.Target)
	fmt.Fprintf(out, "- data: %s; then the bench's own users: `%s` with %d lines in the cart, `%s` who placed %d orders (a checkout each, carried out by the feed workers before the next), `%s` with none (set up in %s; the whole run took %s)\n",
		r.DataSet, screensCartUser, screensCartLines, screensBuyer, screensOrders, screensNewcomerUser, r.SetupTime, r.TotalTime)
	fmt.Fprintf(out, "- throughput: `%s` from another process (with `-H 'Authorization: Bearer …'` on a signed-in screen, to both servers), %d rounds of the shop and %d of the bare handler, alternating, screen after screen; the ratio is the shop's median round over the bare handler's median round; %d answers in all that were not 2xx or failed (wrk's count)\n",
		r.Load, r.Rounds, r.Rounds, screensErrors(r))
	fmt.Fprintln(out, "- bare handler: a bare net/http handler in the bench's process writing the shop's answer to the screen, fetched once (a 200): the same body and the same Content-Type, none of the shop's other headers")
	fmt.Fprintln(out, "- shop CPU: the shop process's user and system time (/proc) over the requests wrk completed in its rounds; store ops and RU: what the fetched answer said it cost (X-Store-Operations, X-Request-Charge)")
	fmt.Fprintf(out, "- p99: the shop alone at a constant %d requests/s for %s (vegeta, in the bench's process), and the share answered 200\n", r.Rate, r.Duration)
	fmt.Fprintln(out, "- CPU stolen: the share of the machine's CPU time its hypervisor took during each round (steal, /proc/stat), the shop's rounds / the bare handler's: a round with much stolen measured the host")
	fmt.Fprintf(out, "- machine: %s, %s at the end; wrk, the bare handler and the shop share these CPUs, and whatever else runs on the machine weighs on every figure but the shop's CPU per request\n\n", r.Machine, r.LoadAfter)
	fmt.Fprintf(out, "| screen | request | body bytes | store ops, RU | shop req/s: median (rounds) | bare req/s: median (rounds) | ratio | shop CPU per request | p99 at %d/s (success) | CPU stolen %% per round, shop / bare |\n", r.Rate)
	fmt.Fprintln(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range r.Screens {
		fmt.Fprintf(out, "| %s | %s | %d | %d, %.2f | %s | %s | **%.2f** | %s | %s | %s |\n", s.Name, "`GET "+s.Path+"`"+signedInText(s), s.Bytes, s.StoreOps, s.RequestCharge,
			medianRoundsText(s.Shop), medianRoundsText(s.Bare), s.Ratio, microsUnit(s.Shop.CPUMicrosPerRequest), atRateText(s.AtRate), stolenRoundsText(s))
	}
	fmt.Fprintln(out)
	if profiled := screenBreakdowns(r); len(profiled) > 0 {
		fmt.Fprintf(out, "### Where each screen's CPU goes\n\n")
		fmt.Fprintf(out, "A CPU profile of the shop (its SHOP_PPROF_ADDR listener) during one more wrk round of each screen, not counted above, saved in %s as SCREEN.pb.gz (`go tool pprof`). Each sample goes to the part of its innermost frame that names one (cmd/shop/internal/loadbench/profile.go). µs per request = share × the screen's CPU per request above.\n\n", r.Profiles)
		writeBreakdownTable(out, profiled)
	}
	fmt.Fprintln(out, "| goal | target | measured | |")
	fmt.Fprintln(out, "|---|--:|--:|---|")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "| %s | %s | %.2f%s | %s |\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}

// screenBreakdowns are the profiled screens' shop results, each named by
// its screen's id (a column of the breakdown table).
func screenBreakdowns(r screensReport) []wrkResult {
	var profiled []wrkResult
	for _, s := range r.Screens {
		if s.Shop.Breakdown != nil {
			t := s.Shop
			t.Name = s.ID
			profiled = append(profiled, t)
		}
	}
	return profiled
}

// writeScreensText prints the report for a terminal.
func writeScreensText(out io.Writer, r screensReport) {
	fmt.Fprintf(out, "shop bench --screens: %s\ndata: %s (set up in %s, whole run %s)\nthroughput: %s, %d rounds each, alternating; ratio of the medians\nmachine: %s, %s at the end\n\n",
		r.Target, r.DataSet, r.SetupTime, r.TotalTime, r.Load, r.Rounds, r.Machine, r.LoadAfter)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "screen\trequest\tbytes\tops, RU\tshop req/s (rounds)\tbare req/s (rounds)\tratio\tshop CPU µs/req\tp99 at %d/s (success)\terrors\tstolen %% shop / bare\t\n", r.Rate)
	for _, s := range r.Screens {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d, %.2f\t%s\t%s\t%.2f\t%s\t%s\t%d\t%s\t\n", s.Name, "GET "+s.Path+signedInText(s), s.Bytes, s.StoreOps, s.RequestCharge,
			medianRoundsText(s.Shop), medianRoundsText(s.Bare), s.Ratio, microsText(s.Shop.CPUMicrosPerRequest), atRateText(s.AtRate), s.Errors, stolenRoundsText(s))
	}
	tw.Flush()
	writeBreakdownText(out, screenBreakdowns(r))
	fmt.Fprintln(out, "\ngoals:")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "  %s %s: %.2f%s, %s\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}
