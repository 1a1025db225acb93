package costlab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writePathNote says how the write path and its limit were measured.
func writePathNote(r writePathReport) string {
	return fmt.Sprintf("each operation run %d times one after the other (after one warm-up), through the shop's own write path (store/writes, the repositories, the store's meter) on the embedded store with fsync on every commit, as shop serve runs it, and the embedded payment provider in memory as the cost lab uses it (shop serve's provider commits its own file too, which is not counted here). Commits are the store's (embedded.Store.Commits): each is a bbolt commit and its two fdatasyncs (the pages, then the meta page). The limit: after each operation, a bare bbolt file on the same file system, fsync on, makes as many commits, one after the other (but no commit of nothing: at most one per item written), writing the same items: each under its partition key and id after a header of the store's size, and a change-feed entry that moves to the feed's end (writepathbare.go); it leaves out the order indexes, the charge and the checks. Wall time is the median and p90; CPU the process's user and system time (getrusage) around each operation, its mean; \"in the provider\" the mean wall time of the payment provider's calls within the shop's, which the limit has no counterpart for; the ratios are the shop's over the limit's", r.Repetitions)
}

// writeWritePathText prints the report for a terminal.
func writeWritePathText(out io.Writer, r writePathReport) {
	fmt.Fprintf(out, "shop cost --writepath: %s, %s\nmachine: %s\n", r.Store, r.FileSystem, r.Machine)
	fmt.Fprintf(out, "%s\none bare commit of one small item: %s (median)\n\n", writePathNote(r), micros(r.CommitMicros))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\tcommits\tstore ops\tRU\twrites\tbytes\tshop median\tp90\tCPU\tprovider\tlimit median\tp90\tCPU\tshop/limit median\tp90\tCPU\t")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.2f\t%.4g\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Op, o.Commits, o.StoreOps, o.RequestUnits, o.Writes, o.Bytes,
			micros(o.Shop.MedianMicros), micros(o.Shop.P90Micros), micros(o.Shop.CPUMicros), micros(o.ProviderMicros),
			micros(o.Limit.MedianMicros), micros(o.Limit.P90Micros), micros(o.Limit.CPUMicros), times(o.Ratio), times(o.RatioP90), times(o.RatioCPU))
	}
	tw.Flush()
	if len(r.Before) > 0 {
		fmt.Fprintf(out, "\nbefore (%s):\n", writePathBeforeNote)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "operation\tcommits\tstore ops\tshop median\tp90\tCPU\tprovider\tshop/limit median\tCPU\t")
		for _, b := range r.Before {
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%s\t%s\t%s\t%s\t%s\t%s\t\n", b.Op, b.Commits, b.StoreOps,
				micros(b.Shop.MedianMicros), micros(b.Shop.P90Micros), micros(b.Shop.CPUMicros), micros(b.ProviderMicros), times(b.Ratio), times(b.RatioCPU))
		}
		tw.Flush()
	}
}

// writeWritePathMarkdown prints the report as its section of
// docs/performance.md.
func writeWritePathMarkdown(out io.Writer, r writePathReport) {
	fmt.Fprintf(out, "## The write path against the embedded store's physical limit\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- store: %s; file system %s\n", r.Store, r.FileSystem)
	fmt.Fprintf(out, "- machine: %s\n", r.Machine)
	fmt.Fprintf(out, "- one bare commit of one small item takes %s (median): the price of a commit here, whatever it writes\n", micros(r.CommitMicros))
	fmt.Fprintf(out, "- %s\n\n", strings.ToUpper(writePathNote(r)[:1])+writePathNote(r)[1:])
	fmt.Fprintln(out, "| operation | commits | store ops | RU | writes | bytes | shop: median | p90 | CPU | in the provider | limit: median | p90 | CPU | shop / limit: median | p90 | CPU |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, o := range r.Ops {
		fmt.Fprintf(out, "| %s | %.4g | %.4g | %.2f | %.4g | %.0f | %s | %s | %s | %s | %s | %s | %s | **%s** | %s | %s |\n", o.Op, o.Commits, o.StoreOps, o.RequestUnits, o.Writes, o.Bytes,
			micros(o.Shop.MedianMicros), micros(o.Shop.P90Micros), micros(o.Shop.CPUMicros), micros(o.ProviderMicros),
			micros(o.Limit.MedianMicros), micros(o.Limit.P90Micros), micros(o.Limit.CPUMicros), times(o.Ratio), times(o.RatioP90), times(o.RatioCPU))
	}
	fmt.Fprintln(out)
	for _, o := range r.Ops {
		fmt.Fprintf(out, "- %s: %s\n", o.Op, o.What)
	}
	fmt.Fprintf(out, "\nThe distance left, median against median (the CPU figures are means; a checkout's CPU partly overlaps its fsyncs, so the CPU above the limit's is what explains the distance, not a part to add to it):\n\n")
	for _, d := range distanceText(r) {
		fmt.Fprintf(out, "- %s\n", d)
	}
	if len(r.Before) > 0 {
		fmt.Fprintf(out, "\nBefore: %s.\n\n", writePathBeforeNote)
		fmt.Fprintln(out, "| operation | commits | store ops | shop: median | p90 | CPU | in the provider | shop / limit: median | CPU |")
		fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|")
		for _, b := range r.Before {
			fmt.Fprintf(out, "| %s | %.4g | %.4g | %s | %s | %s | %s | %s | %s |\n", b.Op, b.Commits, b.StoreOps,
				micros(b.Shop.MedianMicros), micros(b.Shop.P90Micros), micros(b.Shop.CPUMicros), micros(b.ProviderMicros), times(b.Ratio), times(b.RatioCPU))
		}
	}
}

// times is a ratio, or a dash where the limit is nothing (no commit).
func times(ratio float64) string {
	if ratio == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", ratio)
}

// writePathBeforeNote says what the before figures are.
var writePathBeforeNote = "the same command on the write path of commit " + writePathBeforeCommit + " (as on main), run on this machine just before the one above (writePathBefore): the embedded payment provider's lone call waited its batch delay (MaxBatchDelay) for company, a sold order's cart was settled only after its reservations' commits, in a commit of its own, and a write refused by its condition made a commit (an fsync) of nothing"

// distanceText says, for each operation with a limit, how far its
// median is from the limit's and how much of that the CPU beyond the
// limit's and the provider's time are.
func distanceText(r writePathReport) []string {
	var out []string
	for _, o := range r.Ops {
		if o.Limit.MedianMicros == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s above the limit's median, the commits the same (%.4g); the shop's CPU is %s above the limit's, the payment provider's calls take %s",
			o.Op, micros(o.Shop.MedianMicros-o.Limit.MedianMicros), o.Commits, micros(o.Shop.CPUMicros-o.Limit.CPUMicros), micros(o.ProviderMicros)))
	}
	return out
}
