package loadbench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
)

func cacheText(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// hottestText names the hottest partition and what it spent of its share.
func hottestText(p partitionUsage) string {
	if p.Container == "" {
		return "-"
	}
	return fmt.Sprintf("%s %s: %.1f of %.0f RU/s", p.Container, p.Partition, p.RUPerSecond, p.Provisioned)
}

// beforeText is what the partition that was the hottest of the same load
// with the cache off spent in run x (with the cache on).
func beforeText(r hotspotsReport, x hotspotRun) string {
	for _, off := range r.Runs {
		if !off.Cache && off.Load == x.Load && off.Hottest.Container != "" {
			p := x.spent(off.Hottest.Container, off.Hottest.Partition)
			return fmt.Sprintf("%.1f RU/s", p.RUPerSecond)
		}
	}
	return "-"
}

// writeHotspotsMarkdown prints the report as the hot spots section of
// docs/scale.md.
func writeHotspotsMarkdown(out io.Writer, r hotspotsReport) {
	fmt.Fprintf(out, "### Read hot spots before and after the read cache, measured\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- target: %s; started twice, with `SHOP_CACHE=false` (before) and `SHOP_CACHE=true` (after)\n", r.Target)
	fmt.Fprintf(out, "- load: `%s`, each load for %s after a pause of %s (the budgets refill); the script counts each status and the 503s that carry Retry-After\n", r.Load, r.Duration, hotspotPause)
	fmt.Fprintf(out, "- hottest partition: the physical partition that spent the most RU/s during the load, from GET /v1/admin/throughput before and after it, against its share of the container's %d RU/s (%d partitions); a partition may spend a little over its share, as a call admitted with budget left is charged in full and the next seconds owe the excess (store/embedded/throughput.go); the last column is what the partition that was the hottest without the cache spent with it\n", r.Throughput, r.Partitions)
	fmt.Fprintf(out, "- machine: %s; wrk and the shop share these CPUs\n\n", r.Machine)
	fmt.Fprintln(out, "| load | cache | requests/s | success | 503 (with Retry-After) | p99 | hottest partition | the partition hottest without the cache |")
	fmt.Fprintln(out, "|---|---|--:|--:|--:|--:|---|--:|")
	for _, x := range r.Runs {
		fmt.Fprintf(out, "| %s `%s` | %s | %.0f | %.2f%% | %d (%d) | %.2f ms | %s | %s |\n", x.Load, x.Path, cacheText(x.Cache),
			x.RPS, x.successRate(), x.Throttled, x.RetryAfter, x.P99Millis, hottestText(x.Hottest), beforeText(r, x))
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| goal | target | measured | |")
	fmt.Fprintln(out, "|---|---|--:|---|")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "| %s | %s | %.2f %s | %s |\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}

// writeHotspotsText prints the report for a terminal.
func writeHotspotsText(out io.Writer, r hotspotsReport) {
	fmt.Fprintf(out, "%s\n%s\nload: %s, each for %s\n\n", r.Command, r.Target, r.Load, r.Duration)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "load\tcache\treq/s\tsuccess\t503 (Retry-After)\tp99\thottest partition\tthe one hottest without the cache")
	for _, x := range r.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2f%%\t%d (%d)\t%.2f ms\t%s\t%s\n", x.Load, cacheText(x.Cache),
			x.RPS, x.successRate(), x.Throttled, x.RetryAfter, x.P99Millis, hottestText(x.Hottest), beforeText(r, x))
	}
	tw.Flush()
	fmt.Fprintln(out)
	for _, g := range r.Goals {
		fmt.Fprintf(out, "%s: want %s, got %.2f %s: %s\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}
