package loadbench

import (
	"fmt"
	"io"
	"strconv"
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

// stolenText is the CPU stolen during each round, in percent.
func stolenText(rounds []float64) string {
	parts := make([]string, len(rounds))
	for i, x := range rounds {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, ", ")
}

// stolenRoundsText is the CPU stolen during each round of the shop, then
// of the bare handler, in percent.
func stolenRoundsText(s screenResult) string {
	return stolenText(s.Shop.StolenRounds) + " / " + stolenText(s.Bare.StolenRounds)
}

// revisionBytesText is the size of a revision's answer, said to differ
// when it is not byte for byte this build's (which the bare handler
// serves).
func revisionBytesText(rs revisionScreen) string {
	if rs.SameBody {
		return strconv.Itoa(rs.Bytes)
	}
	return fmt.Sprintf("%d (differs)", rs.Bytes)
}

// screenRows are the cells of a screen's rows: this build's, then each
// revision's, with a build column after the request when withBuild; md
// formats them for markdown, else for a terminal (with an errors column).
// A revision's row has its own figures, its ratio to the same bare
// handler, and no p99 (measured of this build only).
func screenRows(s screenResult, withBuild, md bool) [][]string {
	request, ratio, micros := "GET "+s.Path+signedInText(s), "%.2f", microsText
	if md {
		request, ratio, micros = "`GET "+s.Path+"`"+signedInText(s), "**%.2f**", microsUnit
	}
	row := func(name, request, build, bytes string, ops int, ru float64, shop wrkResult, bare, r, p99 string, errors int, stolen string) []string {
		cells := []string{name, request}
		if withBuild {
			cells = append(cells, build)
		}
		cells = append(cells, bytes, fmt.Sprintf("%d, %.2f", ops, ru), medianRoundsText(shop), bare, r, micros(shop.CPUMicrosPerRequest), p99)
		if !md {
			cells = append(cells, strconv.Itoa(errors))
		}
		return append(cells, stolen)
	}
	rows := [][]string{row(s.Name, request, "this build", strconv.Itoa(s.Bytes), s.StoreOps, s.RequestCharge, s.Shop,
		medianRoundsText(s.Bare), fmt.Sprintf(ratio, s.Ratio), atRateText(s.AtRate), s.Errors, stolenRoundsText(s))}
	for _, rs := range s.Revisions {
		rows = append(rows, row("", "", "revision "+rs.Rev, revisionBytesText(rs), rs.StoreOps, rs.RequestCharge, rs.Shop,
			"", fmt.Sprintf(ratio, rs.Ratio), "-", rs.Shop.Errors, stolenText(rs.Shop.StolenRounds)))
	}
	return rows
}

// withBuild says whether the tables name the build of each row: with
// revisions only.
func (r screensReport) withBuild() bool { return len(r.Revisions) > 0 }

// screensHeader is the tables' header cells (screenRows' columns).
func screensHeader(r screensReport, md bool) []string {
	cells := []string{"screen", "request"}
	if r.withBuild() {
		cells = append(cells, "build")
	}
	if !md {
		return append(cells, "bytes", "ops, RU", "shop req/s (rounds)", "bare req/s (rounds)", "ratio", "shop CPU µs/req",
			fmt.Sprintf("p99 at %d/s (success)", r.Rate), "errors", "stolen % shop / bare")
	}
	return append(cells, "body bytes", "store ops, RU", "shop req/s: median (rounds)", "bare req/s: median (rounds)", "ratio",
		"shop CPU per request", fmt.Sprintf("p99 at %d/s (success)", r.Rate), "CPU stolen % per round, shop / bare")
}

// markdownRow writes cells as a row of a markdown table.
func markdownRow(out io.Writer, cells []string) {
	fmt.Fprintf(out, "| %s |\n", strings.Join(cells, " | "))
}

// atRateText is the p99 of the constant-rate run and its success.
func atRateText(r runResult) string {
	return fmt.Sprintf("%.2f ms (%.4f)", r.P99Ms, r.Success)
}

// screensErrors counts the errors of every round of every server.
func screensErrors(r screensReport) int {
	n := 0
	for _, s := range r.Screens {
		n += s.Errors
		for _, rs := range s.Revisions {
			n += rs.Shop.Errors
		}
	}
	return n
}

// writeScreensMarkdown prints the report as the screens section of
// docs/performance.md.
func writeScreensMarkdown(out io.Writer, r screensReport) {
	fmt.Fprintf(out, "## Every one-read screen against a bare handler\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- target: %s; the read cache off, as `shop serve` has it on the embedded store\n", r.Target)
	for _, rev := range r.Revisions {
		fmt.Fprintf(out, "- revision %s (%s): built from this repository's history and run as a shop of its own with the same settings, for the before and after\n", rev.Rev, rev.Subject)
	}
	fmt.Fprintf(out, "- data: %s; then the bench's own users: `%s` with %d lines in the cart, `%s` who placed %d orders (a checkout each, carried out by the feed workers before the next), `%s` with none, set up through a shop of this build, which is then stopped; every shop measured starts on a copy of the data it left, the same documents, order ids and tokens (set up in %s; the whole run took %s)\n",
		r.DataSet, screensCartUser, screensCartLines, screensBuyer, screensOrders, screensNewcomerUser, r.SetupTime, r.TotalTime)
	servers := "the shop, the bare handler"
	if r.withBuild() {
		servers = "this build's shop, each revision's, the bare handler"
	}
	fmt.Fprintf(out, "- throughput: `%s` from another process (with `-H 'Authorization: Bearer …'` on a signed-in screen, to every server), %d rounds of each server (%s), alternating, screen after screen; the ratio is a shop's median round over the bare handler's median round; %d answers in all that were not 2xx or failed (wrk's count)\n",
		r.Load, r.Rounds, servers, screensErrors(r))
	fmt.Fprintln(out, "- bare handler: a bare net/http handler in the bench's process writing this build's answer to the screen, fetched once (a 200): the same body and the same Content-Type, none of the shop's other headers")
	if r.withBuild() {
		fmt.Fprintln(out, "- a revision's answer is fetched once too: its body bytes are marked (differs) when they are not byte for byte this build's, and its ratio is then to a bare handler serving other bytes than its own")
	}
	fmt.Fprintln(out, "- shop CPU: the shop process's user and system time (/proc) over the requests wrk completed in its rounds; store ops and RU: what the fetched answer said it cost (X-Store-Operations, X-Request-Charge)")
	fmt.Fprintf(out, "- p99: this build's shop alone at a constant %d requests/s for %s (vegeta, in the bench's process), and the share answered 200\n", r.Rate, r.Duration)
	fmt.Fprintln(out, "- CPU stolen: the share of the machine's CPU time its hypervisor took during each round (steal, /proc/stat), the shop's rounds / the bare handler's: a round with much stolen measured the host")
	idle := ""
	if r.withBuild() {
		idle = " (the revisions' shops idle through this build's constant-rate run and profile)"
	}
	fmt.Fprintf(out, "- machine: %s, %s at the end; wrk, the bare handler and the shops share these CPUs%s, and whatever else runs on the machine weighs on every figure but the shops' CPU per request\n\n", r.Machine, r.LoadAfter, idle)
	header := screensHeader(r, true)
	markdownRow(out, header)
	// The screen, the request and the build read left to right; the
	// figures align right.
	labels := 2
	if r.withBuild() {
		labels = 3
	}
	fmt.Fprintln(out, "|"+strings.Repeat("---|", labels)+strings.Repeat("--:|", len(header)-labels))
	for _, s := range r.Screens {
		for _, row := range screenRows(s, r.withBuild(), true) {
			markdownRow(out, row)
		}
	}
	fmt.Fprintln(out)
	if profiled := screenBreakdowns(r); len(profiled) > 0 {
		fmt.Fprintf(out, "### Where each screen's CPU goes\n\n")
		saved := ""
		if r.Profiles != "" {
			saved = ", saved in " + r.Profiles + " as SCREEN.pb.gz (`go tool pprof`)"
		}
		fmt.Fprintf(out, "A CPU profile of this build's shop (its SHOP_PPROF_ADDR listener) during one more wrk round of each screen, not counted above%s. Each sample goes to the part of its innermost frame that names one (cmd/shop/internal/loadbench/profile.go). µs per request = share × the screen's CPU per request above.\n\n", saved)
		writeBreakdownTable(out, profiled)
	}
	fmt.Fprintln(out, "| goal (this build) | target | measured | |")
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
	fmt.Fprintf(out, "shop bench --screens: %s\n", r.Target)
	for _, rev := range r.Revisions {
		fmt.Fprintf(out, "revision %s: %s\n", rev.Rev, rev.Subject)
	}
	fmt.Fprintf(out, "data: %s (set up in %s, whole run %s)\nthroughput: %s, %d rounds each, alternating; ratio of the medians\nmachine: %s, %s at the end\n\n",
		r.DataSet, r.SetupTime, r.TotalTime, r.Load, r.Rounds, r.Machine, r.LoadAfter)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(screensHeader(r, false), "\t"))
	for _, s := range r.Screens {
		for _, row := range screenRows(s, r.withBuild(), false) {
			fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
		}
	}
	tw.Flush()
	writeBreakdownText(out, screenBreakdowns(r))
	fmt.Fprintln(out, "\ngoals (this build):")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "  %s %s: %.2f%s, %s\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}
