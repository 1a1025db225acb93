package costlab

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
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
	fmt.Fprintf(out, "\nsearch index writes (%s), means per product:\n", searchWritesNote)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "change\tproduct write RU\tterm documents\tindex store ops\tindex RU\tbefore (d2aeb27): index store ops\tindex RU\t")
	for _, s := range r.SearchWrites {
		ops, ru := beforeText(s.Before)
		fmt.Fprintf(tw, "%s\t%.2f\t%.4g\t%.4g\t%.2f\t%s\t%s\t\n", s.Change, s.ProductRU, s.TermDocs, s.StoreOps, s.RequestUnits, ops, ru)
	}
	tw.Flush()
	fmt.Fprintln(out, reviewsText(r.Reviews))
	writeVariantsText(out, r)
	w := r.Workload
	fmt.Fprintf(out, "\nworkload (model-denormalize-reads template): %g reads/s (%s), %g writes/s (%s)\n",
		w.ReadRPS, mixText(w.ReadMix), w.WriteRPS, w.Write)
	fmt.Fprintf(out, "propagation of one price change, measured: %.4g store ops (the feed read, then the shop's products feed handler: current product, view summary refresh, the search ledger read and claimed, the product read again, the entry under each of the product's terms rewritten (the price is in them), the product's fan-out record, cross-partition cart query, one If-Match replace per cart, the fan-out record written back)\n",
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
	if w.Before != nil {
		fmt.Fprintln(out, workloadBeforeText(w))
	}
	writeInventoryText(out, r)
	writeWorkflowText(out, r)
	writeShardsText(out, r)
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
	fmt.Fprintln(out)
	writeSearchIndexMarkdown(out, r)
	fmt.Fprintln(out)
	writeVariantsMarkdown(out, r)
	writeInventoryMarkdown(out, r)
	writeWorkflowMarkdown(out, r)
	writeShardsMarkdown(out, r)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| goal | target | measured | |")
	fmt.Fprintln(out, "|---|--:|--:|---|")
	for _, g := range r.Goals {
		fmt.Fprintf(out, "| %s | %s | %.2f%s | %s |\n", g.Name, g.Want, g.Got, g.Unit, report.MetText(g.Met))
	}
}

// writeSearchIndexMarkdown prints what the search index costs a product
// write and the workload template's break-even, each beside its before:
// a part of the cost section, and the part module 05 of the workshop
// shows (searchIndexPart).
func writeSearchIndexMarkdown(out io.Writer, r costReport) {
	fmt.Fprintf(out, "### Search index: what a product write costs\n\n%s. Means per product:\n\n", strings.ToUpper(searchWritesNote[:1])+searchWritesNote[1:])
	fmt.Fprintln(out, "| change | product write RU | term documents | index store ops | index RU | before (d2aeb27): index store ops | index RU |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|")
	for _, s := range r.SearchWrites {
		ops, ru := beforeText(s.Before)
		fmt.Fprintf(out, "| %s | %.2f | %.4g | %.4g | **%.2f** | %s | %s |\n", s.Change, s.ProductRU, s.TermDocs, s.StoreOps, s.RequestUnits, ops, ru)
	}
	fmt.Fprintf(out, "\n%s. %s.\n", strings.ToUpper(reviewsText(r.Reviews)[:1])+reviewsText(r.Reviews)[1:], searchBeforeNote)
	w := r.Workload
	fmt.Fprintf(out, "\n### Workload template (model-denormalize-reads)\n\n")
	fmt.Fprintf(out, "%g reads/s (%s) and %g writes/s, each a %s. ", w.ReadRPS, mixText(w.ReadMix), w.WriteRPS, w.Write)
	fmt.Fprintf(out, "The propagation is measured, not assumed: the lab changes the price, reads the products change feed and runs the shop's own products feed handler on it (feedworkers.Handlers.Products), which reads the current product, refreshes the productsByCategory summary, reads and claims the product's search ledger, reads the product again, rewrites its entry under each of its terms (the price is in them), checks the product's fan-out record, runs the cross-partition query for the carts holding the product, replaces each with If-Match and records what it pushed (%.4g store ops per change).\n\n", w.Denormalized.PropagateOps)
	fmt.Fprintln(out, "| design | reads: rps × RU = RU/s | writes: rps × RU = RU/s | total RU/s |")
	fmt.Fprintln(out, "|---|--:|--:|--:|")
	for _, d := range []struct {
		name string
		l    designLoad
	}{{"denormalized", w.Denormalized}, {"normalized", w.Normalized}} {
		reads, writes := loadFormula(w, d.l)
		fmt.Fprintf(out, "| %s | %s | %s | %.0f |\n", d.name, reads, writes, d.l.TotalRUs)
	}
	fmt.Fprintf(out, "\n%s.\n", strings.ToUpper(verdict(w)[:1])+verdict(w)[1:])
	if w.Before != nil {
		fmt.Fprintf(out, "\n%s\n", workloadBeforeText(w))
	}
}

// searchIndexPart is the docs section of writeSearchIndexMarkdown alone,
// with the command that wrote it.
const searchIndexPart = "cost search index"

func writeSearchIndexPart(out io.Writer, r costReport) {
	fmt.Fprintf(out, "Written by `%s` (the search index and the break-even of its cost section in docs/performance.md):\n\n", r.Command)
	writeSearchIndexMarkdown(out, r)
}

// searchWritesNote says what the search write rows measure.
const searchWritesNote = "the products feed's index step (feedworkers.Handlers.ProductToSearch) after a product write: the product's ledger read; when the ledger's claim is what the product shows (its card: name, category, price, picture, availability, the rating in half stars; and its terms), the entry under its last term read, and when that claim's writes are done, nothing more. Otherwise the ledger claimed for the version (a write with If-Match on that read), the product read again (the version must still be current), one tombstone per term dropped, one entry per term, and the ledger settled (a write with If-Match on the claim) when terms were dropped; each entry and tombstone is a guarded write (a point read, then the write). A review changes the product's review stats only: the review rows add reviews to a copy of the sample catalog (migrations/sample), each to a product drawn in proportion to its reviews plus one, its rating one of the product's earlier ratings drawn at random (costlab.measureReviewWrites)"

// searchBeforeNote says where the before columns come from.
const searchBeforeNote = "The before columns are the index step on commit d2aeb27, whose entries copied the category page's whole summary (the exact average and the review count among it), so that every version, every review included, rewrote them all: that commit's `shop cost`, and for the review rows this lab's review measure run on it, the same reviews (costlab.searchBefore)"

// beforeText prints a before figure, or a dash where this run measured
// other writes than the before did.
func beforeText(b *indexCost) (ops, ru string) {
	if b == nil {
		return "—", "—"
	}
	return fmt.Sprintf("%.4g", b.StoreOps), fmt.Sprintf("%.2f", b.RequestUnits)
}

// reviewsText says what the review rows' reviews did to the stars.
func reviewsText(rw reviewWrites) string {
	pct := func(k int) float64 { return 100 * float64(k) / float64(max(rw.Reviews, 1)) }
	return fmt.Sprintf("of the %d reviews, %d (%.0f%%) moved the rating a search result shows (half stars) and rewrote the product's entries; %d (%.0f%%) moved the average's first decimal, on which a result showing one decimal would have rewritten them",
		rw.Reviews, rw.MovedStars, pct(rw.MovedStars), rw.MovedDecimal, pct(rw.MovedDecimal))
}

// workloadBeforeText compares the price change with the one measured on
// commit d2aeb27.
func workloadBeforeText(w workloadResult) string {
	b := w.Before
	return fmt.Sprintf("Before (commit d2aeb27, the same options; entries copying the whole summary): %.2f RU of propagation per price change (%.4g store ops), the designs costing the same at %.0f writes/s; now %.2f RU (%.4g store ops), at %.0f writes/s.",
		b.PropagationRU, b.PropagateOps, b.BreakEvenWriteRPS, w.Denormalized.PropagationRU, w.Denormalized.PropagateOps, w.BreakEvenWriteRPS)
}

// inventoryBefore says what the "before" figures of the checkouts are.
const inventoryBefore = "before: the same checkout of products without a stock document, which the protocol treats as untracked (sold without a limit): its stock step still reads each line's stock document, which is missing (a 404, charged as a read), and takes nothing; without the step is that figure less the measured reads: the same checkout with no stock step at all. After: products with stock, one read of the stock per line before anything is written, then one take per line (the reads, then the takes, each line's concurrently). Each figure is what the checkout's answer counts (its X-Request-Charge), the placed order's effects in it (a commit per tracked line, the cart's settle: a read and a replace): the move that places the order carries them out before the checkout answers (writes.CarryOut)"

// refusalNote says what the refused checkouts are.
const refusalNote = "each refused out of stock: one unit of a sold-out product and one unit of each other line, in stock; each try has its own Idempotency-Key, as a buyer pressing \"Place order\" again sends; the figures are what the refusal's answer counts (its X-Request-Charge), and the reservations are those it wrote, each holding units from other buyers until it was returned"

// refusalBeforeNote says what the before figures of the refusals are.
const refusalBeforeNote = "before: the checkout took every line's units (one batch each), and when one line was short returned them all (a read and a batch each), and took its marker off the cart; as this lab measured it on commit 54f3385, the last with that protocol (refusalsBefore). After: it reads each line's stock first (one point read each) and refuses, with nothing written, when a line is short by those reads; one more read of the cart confirms the refusal (store/writes: checkStock, refuse)"

// ceilingText states the arithmetic of one product's sales ceiling.
func ceilingText(r inventoryResult) string {
	return fmt.Sprintf("one product's stock document lives in one logical partition, which lives on one physical partition, which Cosmos serves at most %d RU/s: ceiling = %d RU/s ÷ (%.2f RU per read + %.2f RU per take) = %.0f sales of one line per second of one product; if every take were released again (%.2f RU), %d ÷ (%.2f + %.2f + %.2f) = %.0f per second",
		r.PartitionRUs, r.PartitionRUs, r.StockRead.RequestUnits, r.Take.RequestUnits, r.CeilingPerSecond, r.Release.RequestUnits,
		r.PartitionRUs, r.StockRead.RequestUnits, r.Take.RequestUnits, r.Release.RequestUnits, r.CeilingWithRelease)
}

// writeInventoryText prints the inventory section for a terminal.
func writeInventoryText(out io.Writer, r costReport) {
	inv := r.Inventory
	fmt.Fprintf(out, "\ninventory: checkouts before and after (%s)\n", inventoryBefore)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lines\tbefore: untracked ops\tRU\twithout the step: ops\tRU\tafter: tracked ops\tRU\tmedian latency (untracked / tracked)\tinventory adds\t")
	for _, c := range inv.Checkouts {
		fmt.Fprintf(tw, "%d\t%.4g\t%.2f\t%.4g\t%.2f\t%.4g\t%.2f\t%s / %s\t%+.2f RU\t\n", c.Lines, c.Untracked.StoreOps, c.Untracked.RequestUnits,
			c.WithoutStepOps, c.WithoutStepRU, c.Tracked.StoreOps, c.Tracked.RequestUnits,
			micros(c.Untracked.MedianMicros), micros(c.Tracked.MedianMicros), c.ExtraRU)
	}
	tw.Flush()
	for _, d := range []designResult{inv.StockRead, inv.MissingStockRead, inv.Take, inv.FailedTake, inv.Release} {
		fmt.Fprintf(out, "%s: %.4g ops, %.2f RU, median %s (%s)\n", d.Design, d.StoreOps, d.RequestUnits, micros(d.MedianMicros), d.Reads)
	}
	fmt.Fprintf(out, "%s\n", ceilingText(inv))
	fmt.Fprintf(out, "\nrefused checkouts (%s; %s)\n", refusalNote, refusalBeforeNote)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cart\tbefore: store ops\tRU\treservations\tafter: store ops\tRU\treservations\tmedian latency\t")
	for _, c := range inv.Refusals {
		fmt.Fprintf(tw, "%s\t%.4g\t%.2f\t%.4g\t%.4g\t%.2f\t%.4g\t%s\t\n", c.Refusal.Design, c.Before.StoreOps, c.Before.RequestUnits, c.Before.Taken,
			c.Refusal.StoreOps, c.Refusal.RequestUnits, c.Taken, micros(c.Refusal.MedianMicros))
	}
	tw.Flush()
}

// writeInventoryMarkdown prints the inventory section of the cost report.
func writeInventoryMarkdown(out io.Writer, r costReport) {
	inv := r.Inventory
	fmt.Fprintf(out, "\n### Inventory: what stock costs a checkout\n\n")
	fmt.Fprintf(out, "Each figure is the mean of %d checkouts by new users through the shop's own write path (store/writes.Checkout) on the same store, one unit per line. %s.\n\n", r.Repetitions, strings.ToUpper(inventoryBefore[:1])+inventoryBefore[1:])
	fmt.Fprintln(out, "| lines | before: untracked, ops | RU | without the step, ops | RU | after: tracked, ops | RU | median latency, untracked / tracked | inventory adds |")
	fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, c := range inv.Checkouts {
		fmt.Fprintf(out, "| %d | %.4g | %.2f | %.4g | %.2f | %.4g | %.2f | %s / %s | **%+.2f RU** |\n", c.Lines, c.Untracked.StoreOps, c.Untracked.RequestUnits,
			c.WithoutStepOps, c.WithoutStepRU, c.Tracked.StoreOps, c.Tracked.RequestUnits,
			micros(c.Untracked.MedianMicros), micros(c.Tracked.MedianMicros), c.ExtraRU)
	}
	fmt.Fprintln(out, "\n| operation | what it is | store ops | RU | median latency |")
	fmt.Fprintln(out, "|---|---|--:|--:|--:|")
	for _, d := range []designResult{inv.StockRead, inv.MissingStockRead, inv.Take, inv.FailedTake, inv.Release} {
		fmt.Fprintf(out, "| %s | %s | %.4g | %.2f | %s |\n", d.Design, d.Reads, d.StoreOps, d.RequestUnits, micros(d.MedianMicros))
	}
	fmt.Fprintf(out, "\nCeiling of one product: %s.\n", ceilingText(inv))
	fmt.Fprintf(out, "\n### A refused checkout: what it costs\n\n")
	fmt.Fprintf(out, "Each figure is the mean of %d checkouts of one unchanged cart, %s. %s.\n\n", r.Repetitions, refusalNote, strings.ToUpper(refusalBeforeNote[:1])+refusalBeforeNote[1:])
	fmt.Fprintln(out, "| cart | before: store ops | RU | reservations taken and returned | after: store ops | RU | reservations taken and returned | median latency |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, c := range inv.Refusals {
		fmt.Fprintf(out, "| %s | %.4g | %.2f | %.4g | %.4g | **%.2f** | %.4g | %s |\n", c.Refusal.Design, c.Before.StoreOps, c.Before.RequestUnits, c.Before.Taken,
			c.Refusal.StoreOps, c.Refusal.RequestUnits, c.Taken, micros(c.Refusal.MedianMicros))
	}
}
