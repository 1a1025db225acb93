package loadbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

func seconds(ms float64) string { return fmt.Sprintf("%.1f s", ms/1000) }

// caughtUpText is the run's convergence time and, after a kill, the steps
// of the restart.
func caughtUpText(r convergenceRun) string {
	if r.NotCaughtUp != "" {
		return r.NotCaughtUp
	}
	if !r.Killed {
		return seconds(r.ConvergenceMillis) + " after the last write"
	}
	return fmt.Sprintf("%s after the restart (listening after %.2f s, the killed process's leases taken over after %s)",
		seconds(r.ConvergenceMillis), r.ListenMillis/1000, seconds(r.TakeoverMillis))
}

func answeredText(r convergenceRun) string {
	if r.Killed {
		return fmt.Sprintf("%d of %d before the kill (%d requests)", r.Answered, r.Writes, r.Sent)
	}
	return fmt.Sprintf("%d of %d (%d requests)", r.Answered, r.Writes, r.Sent)
}

func auditText(a auditResult) string {
	if a.Differences == 0 {
		return "0"
	}
	return fmt.Sprintf("**%d** (%s)", a.Differences, copiesText(a.ByCopy))
}

// burstText describes the burst.
func burstText(r convergenceReport) string {
	p := r.Plan
	return fmt.Sprintf("the category `%s` (%d products) renamed from %q to %q; %d products of other categories moved into it, half before the rename and half after; "+
		"the price of %d products changed, each put into %d open carts besides the sample's own (`seedHotCarts`, in the file before the shops start); "+
		"%d admin writes in all, %d at a time, each 503 sent again after its Retry-After",
		p.Category, p.CategoryProducts, p.OldName, p.NewName, len(p.Moves), len(p.Prices), r.HotCarts,
		len(p.Moves)+1+len(p.Prices), burstSenders)
}

// example is a difference the audit found, and the run it found it in.
type example struct{ situation, text string }

// examples returns the first difference of each kind of copy over the
// runs (a kind is the text up to its first space: the copy's name).
func examples(runs []convergenceRun) []example {
	var out []example
	seen := map[string]bool{}
	for _, x := range runs {
		for _, e := range x.Audit.Examples {
			kind, _, _ := strings.Cut(e, " ")
			if !seen[kind] {
				seen[kind] = true
				out = append(out, example{x.Situation, e})
			}
		}
	}
	return out
}

// writeConvergenceMarkdown prints the report as the convergence section of
// docs/reliability.md.
func writeConvergenceMarkdown(out io.Writer, r convergenceReport) {
	fmt.Fprintf(out, "### How long the copies take to catch up, measured\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- target: %s, one per situation, each on a copy of the same data\n", r.Target)
	fmt.Fprintf(out, "- data: %s\n", r.DataSet)
	fmt.Fprintf(out, "- burst: %s\n", burstText(r))
	fmt.Fprintf(out, "- caught up: `GET /v1/admin/feeds` every %s until every processor says `caughtUp` in %d answers in a row; the time is to the first of them. A 503 (throttled) counts as not caught up\n", convergencePoll, convergenceStreak)
	fmt.Fprintf(out, "- kill: `kill -9` once half the writes were answered, then `shop serve` again on the same directory. The killed process's leases stay its own until their heartbeat is older than the lease expiry (%s, changefeed's default, which `shop serve` keeps), so the time runs from the restart and an answer counts only once no lease is held by the killed process\n", r.LeaseExpiry)
	fmt.Fprintln(out, "- audit: once caught up the shop is stopped (SIGTERM) and the convergence audit (`feedworkers.Handlers.Audit`, read only) opens its file, derives every copy from its sources as they are and counts each stored copy that differs")
	fmt.Fprintf(out, "- machine: %s; the bench and the shop share these CPUs\n\n", r.Machine)
	fmt.Fprintln(out, "| situation | writes answered (requests) | burst | caught up | peak backlog | oldest change pending, at most | feed status answers (failed) | copies differing | audit |")
	fmt.Fprintln(out, "|---|--:|--:|---|--:|--:|--:|--:|---|")
	for _, x := range r.Runs {
		fmt.Fprintf(out, "| %s | %s | %s | **%s** | %d changes | %.0f s | %d (%d) | %s | %d documents, %d operations, %.0f RU, %s |\n",
			x.Situation, answeredText(x), seconds(x.BurstMillis), caughtUpText(x), x.PeakLag, x.PeakPendingSeconds,
			x.Polls, x.FailedPolls, auditText(x.Audit), x.Audit.Documents, x.Audit.Operations, x.Audit.RequestUnits, seconds(x.Audit.Millis))
	}
	if ex := examples(r.Runs); len(ex) > 0 {
		fmt.Fprintf(out, "\nThe first difference of each kind the audit found:\n\n")
		for _, e := range ex {
			fmt.Fprintf(out, "- %s: `%s`\n", e.situation, e.text)
		}
	}
	fmt.Fprint(out, "\n| goal | target | measured | |\n|---|---|--:|---|\n")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "| %s | %s | %.0f | %s |\n", g.Name, g.Want, g.Got, report.MetText(g.Met))
	}
}

// writeConvergenceText prints the report for a terminal.
func writeConvergenceText(out io.Writer, r convergenceReport) {
	fmt.Fprintf(out, "%s\n%s\ndata: %s\nburst: %s\n\n", r.Command, r.Target, r.DataSet, burstText(r))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "situation\twrites\tburst\tcaught up\tpeak backlog\toldest pending\tanswers (failed)\tcopies differing\taudit RU")
	for _, x := range r.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.0f s\t%d (%d)\t%s\t%.0f\n", x.Situation, answeredText(x), seconds(x.BurstMillis),
			caughtUpText(x), x.PeakLag, x.PeakPendingSeconds, x.Polls, x.FailedPolls, strings.ReplaceAll(auditText(x.Audit), "**", ""), x.Audit.RequestUnits)
	}
	tw.Flush()
	for _, e := range examples(r.Runs) {
		fmt.Fprintf(out, "%s: %s\n", e.situation, e.text)
	}
	fmt.Fprintln(out)
	for _, g := range r.Goals {
		fmt.Fprintf(out, "%s: want %s, got %.0f: %s\n", g.Name, g.Want, g.Got, report.MetText(g.Met))
	}
}
