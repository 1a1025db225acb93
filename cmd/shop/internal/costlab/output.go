package costlab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"shop/cmd/shop/internal/report"
)

// ruLabel says what the Request Unit figures are.
func ruLabel(r costReport) string {
	if r.Estimate {
		return "Request Units are ESTIMATES (store/embedded/charge.go, from Microsoft's published figures), not a Cosmos bill"
	}
	return "Request Units are the charges Cosmos returned"
}

func micros(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

func mixText(mix []mixShare) string {
	parts := make([]string, len(mix))
	for i, m := range mix {
		parts[i] = fmt.Sprintf("%.0f%% %s", m.Share*100, m.Screen)
	}
	return strings.Join(parts, ", ")
}

// loadFormula renders one design's line of the workload template.
func loadFormula(w workloadResult, l designLoad) (reads, writes string) {
	reads = fmt.Sprintf("%g × %.2f = %.0f", w.ReadRPS, l.ReadRU, l.ReadRUs)
	if l.PropagationRU > 0 {
		writes = fmt.Sprintf("%g × (%.2f + %.2f propagation) = %.0f", w.WriteRPS, l.WriteRU, l.PropagationRU, l.WriteRUs)
	} else {
		writes = fmt.Sprintf("%g × %.2f = %.0f", w.WriteRPS, l.WriteRU, l.WriteRUs)
	}
	return reads, writes
}

func verdict(w workloadResult) string {
	s := fmt.Sprintf("cheaper: %s, by %.2f×", w.Cheaper, w.Factor)
	if w.BreakEvenWriteRPS > 0 {
		s += fmt.Sprintf("; at %g reads/s the designs cost the same at %.0f writes/s", w.ReadRPS, w.BreakEvenWriteRPS)
	}
	return s
}

// writeCostText prints the report as aligned tables for a terminal.
func writeCostText(out io.Writer, r costReport) {
	fmt.Fprintf(out, "shop cost: %s\n%s\n", r.Store, ruLabel(r))
	fmt.Fprintf(out, "data: %s (built in %s)\nmachine: %s\n", r.DataSet, r.BuildTime, r.Machine)
	fmt.Fprintf(out, "each screen rendered %d times per design, alternating; RU and ops are means, latency the median\n\n", r.Repetitions)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "screen\tdesign\tstore ops\tRU\tmedian latency\tratio (normalized RU / denormalized RU)\t")
	for _, s := range r.Screens {
		fmt.Fprintf(tw, "%s\t%s: %s\t%.4g\t%.2f\t%s\t\t\n", s.Screen, s.Denormalized.Design, s.Denormalized.Reads,
			s.Denormalized.StoreOps, s.Denormalized.RequestUnits, micros(s.Denormalized.MedianMicros))
		fmt.Fprintf(tw, "\t%s: %s\t%.4g\t%.2f\t%s\t%.2f×\t\n", s.Normalized.Design, s.Normalized.Reads,
			s.Normalized.StoreOps, s.Normalized.RequestUnits, micros(s.Normalized.MedianMicros), s.Ratio)
	}
	tw.Flush()
	w := r.Workload
	fmt.Fprintf(out, "\nworkload (model-denormalize-reads template): %g reads/s (%s), %g writes/s (%s)\n",
		w.ReadRPS, mixText(w.ReadMix), w.WriteRPS, w.Write)
	fmt.Fprintf(out, "propagation of one price change, measured: %.4g store ops (the feed read, then the shop's products feed handler: current product, view summary refresh, the product's fan-out record, cross-partition cart query, one If-Match replace per cart, the fan-out record written back)\n",
		w.Denormalized.PropagateOps)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "design\treads: rps × RU = RU/s\twrites: rps × RU = RU/s\ttotal RU/s\t")
	for _, d := range []struct {
		name string
		l    designLoad
	}{{"denormalized", w.Denormalized}, {"normalized", w.Normalized}} {
		reads, writes := loadFormula(w, d.l)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t\n", d.name, reads, writes, d.l.TotalRUs)
	}
	tw.Flush()
	fmt.Fprintln(out, verdict(w))
	fmt.Fprintln(out, "\ngoals:")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "  %s %s: %.2f%s, %s\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}

// writeCostMarkdown prints the report as the cost section of
// docs/performance.md.
func writeCostMarkdown(out io.Writer, r costReport) {
	fmt.Fprintf(out, "## Cost lab: denormalized vs normalized, screen by screen\n\n")
	fmt.Fprintf(out, "Reproduce: `%s`\n\n", r.Command)
	fmt.Fprintf(out, "- store: %s. **%s.**\n", r.Store, ruLabel(r))
	fmt.Fprintf(out, "- machine: %s\n", r.Machine)
	fmt.Fprintf(out, "- data: %s (built in %s)\n", r.DataSet, r.BuildTime)
	fmt.Fprintf(out, "- each screen rendered %d times per design, the two designs alternating on the same data; store ops and RU are means per render, latency the median (store calls and decoding, in process)\n\n", r.Repetitions)
	fmt.Fprintln(out, "| screen | design | store ops | RU | median latency | ratio (normalized RU / denormalized RU) |")
	fmt.Fprintln(out, "|---|---|--:|--:|--:|--:|")
	for _, s := range r.Screens {
		fmt.Fprintf(out, "| %s | %s: %s | %.4g | %.2f | %s | |\n", s.Screen, s.Denormalized.Design, s.Denormalized.Reads,
			s.Denormalized.StoreOps, s.Denormalized.RequestUnits, micros(s.Denormalized.MedianMicros))
		fmt.Fprintf(out, "| | %s: %s | %.4g | %.2f | %s | **%.2f×** |\n", s.Normalized.Design, s.Normalized.Reads,
			s.Normalized.StoreOps, s.Normalized.RequestUnits, micros(s.Normalized.MedianMicros), s.Ratio)
	}
	w := r.Workload
	fmt.Fprintf(out, "\n### Workload template (model-denormalize-reads)\n\n")
	fmt.Fprintf(out, "%g reads/s (%s) and %g writes/s, each a %s. ", w.ReadRPS, mixText(w.ReadMix), w.WriteRPS, w.Write)
	fmt.Fprintf(out, "The propagation is measured, not assumed: the lab changes the price, reads the products change feed and runs the shop's own products feed handler on it (feedworkers.Handlers.Products), which reads the current product, refreshes the productsByCategory summary, checks the product's fan-out record, runs the cross-partition query for the carts holding the product, replaces each with If-Match and records what it pushed (%.4g store ops per change).\n\n", w.Denormalized.PropagateOps)
	fmt.Fprintln(out, "| design | reads: rps × RU = RU/s | writes: rps × RU = RU/s | total RU/s |")
	fmt.Fprintln(out, "|---|--:|--:|--:|")
	for _, d := range []struct {
		name string
		l    designLoad
	}{{"denormalized", w.Denormalized}, {"normalized", w.Normalized}} {
		reads, writes := loadFormula(w, d.l)
		fmt.Fprintf(out, "| %s | %s | %s | %.0f |\n", d.name, reads, writes, d.l.TotalRUs)
	}
	fmt.Fprintf(out, "\n%s.\n\n", strings.ToUpper(verdict(w)[:1])+verdict(w)[1:])
	fmt.Fprintln(out, "| goal | target | measured | |")
	fmt.Fprintln(out, "|---|--:|--:|---|")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "| %s | %s | %.2f%s | %s |\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}
