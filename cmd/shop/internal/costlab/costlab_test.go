package costlab

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"shop/cmd/shop/internal/report"
)

func noEnv(string) string { return "" }

// TestCostLab runs `shop cost --json` on a tiny data set and checks the
// measured figures, not fixed ones: for every screen the denormalized
// design needs fewer store operations and fewer Request Units.
func TestCostLab(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--json", "--products", "30", "--categories", "2", "--reviews", "6",
		"--users", "4", "--orders", "11", "--price-changes", "2", "--carts-per-product", "3", "--reps", "5",
		"--read-rps", "100", "--write-rps", "1"}
	if err := Run(context.Background(), args, noEnv, &out); err != nil {
		t.Fatalf("shop cost: %v", err)
	}
	var rep costReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, out.String())
	}
	if !rep.Estimate {
		t.Errorf("estimate = false on the embedded store, want true")
	}
	if got, want := len(rep.Screens), 7; got != want {
		t.Fatalf("screens = %d, want %d", got, want)
	}
	for _, s := range rep.Screens {
		t.Run(s.Screen, func(t *testing.T) {
			if s.Denormalized.StoreOps >= s.Normalized.StoreOps {
				t.Errorf("store ops: denormalized %v, normalized %v; want fewer denormalized", s.Denormalized.StoreOps, s.Normalized.StoreOps)
			}
			if s.Denormalized.RequestUnits <= 0 {
				t.Errorf("denormalized RU = %v, want > 0", s.Denormalized.RequestUnits)
			}
			if s.Ratio <= 1 {
				t.Errorf("ratio = %v (RU %v vs %v), want > 1", s.Ratio, s.Normalized.RequestUnits, s.Denormalized.RequestUnits)
			}
			if s.Denormalized.MedianMicros <= 0 || s.Normalized.MedianMicros <= 0 {
				t.Errorf("median latency %v / %v µs, want both > 0", s.Denormalized.MedianMicros, s.Normalized.MedianMicros)
			}
		})
	}

	// Search: one read of the index; each product write adds one entry
	// per term (and a rename a tombstone per dropped term).
	for _, s := range rep.Screens {
		if strings.HasPrefix(s.Screen, "search") && s.Denormalized.StoreOps != 1 {
			t.Errorf("%s: %v store ops from the index, want 1", s.Screen, s.Denormalized.StoreOps)
		}
	}
	if got, want := len(rep.SearchWrites), 2; got != want {
		t.Fatalf("search writes = %d, want %d", got, want)
	}
	for _, s := range rep.SearchWrites {
		if s.TermDocs < 4 || s.StoreOps <= s.TermDocs || s.RequestUnits <= s.ProductRU {
			t.Errorf("%s: %v term documents, %v ops, %v RU (product %v RU); want at least 4 documents, more ops than documents (the guard's reads) and more RU than the product write", s.Change, s.TermDocs, s.StoreOps, s.RequestUnits, s.ProductRU)
		}
	}

	w := rep.Workload
	// One replace per cart holding the product, plus at least the feed
	// read and the cross-partition query that found them.
	if min := float64(w.CartsPerProduct + 2); w.Denormalized.PropagateOps < min {
		t.Errorf("propagation store ops = %v, want at least %v", w.Denormalized.PropagateOps, min)
	}
	if w.Normalized.PropagationRU != 0 {
		t.Errorf("normalized propagation = %v RU, want 0 (no copies)", w.Normalized.PropagationRU)
	}
	if w.Denormalized.ReadRU >= w.Normalized.ReadRU {
		t.Errorf("RU per read: denormalized %v, normalized %v; want denormalized lower", w.Denormalized.ReadRU, w.Normalized.ReadRU)
	}
	for name, l := range map[string]designLoad{"denormalized": w.Denormalized, "normalized": w.Normalized} {
		if got, want := l.TotalRUs, report.Round2(l.ReadRUs+l.WriteRUs); got != want {
			t.Errorf("%s total = %v RU/s, want reads + writes = %v", name, got, want)
		}
	}
	if got, want := len(rep.Goals), len(costGoals); got != want {
		t.Errorf("goals = %d, want %d", got, want)
	}

	inv := rep.Inventory
	if got, want := len(inv.Checkouts), len(checkoutLines); got != want {
		t.Fatalf("inventory checkouts = %d, want %d", got, want)
	}
	if inv.Take.RequestUnits <= 0 || inv.Take.StoreOps != 1 || inv.Release.RequestUnits <= 0 || inv.StockRead.StoreOps != 1 {
		t.Errorf("stock read %+v, take %+v, release %+v: want one read, one batch for a take, all charged", inv.StockRead, inv.Take, inv.Release)
	}
	sale := inv.StockRead.RequestUnits + inv.Take.RequestUnits
	if want := report.Round2(partitionRUs / sale); inv.CeilingPerSecond != want {
		t.Errorf("ceiling = %v, want %d / (%v + %v) = %v", inv.CeilingPerSecond, partitionRUs, inv.StockRead.RequestUnits, inv.Take.RequestUnits, want)
	}
	for _, c := range inv.Checkouts {
		// One read, one take and one commit (the placed order's effect)
		// per line, the rest of the workflow the same: what inventory
		// adds is the lines' reads and takes, and commits, each a patch
		// cheaper than a take.
		if low, high := float64(c.Lines)*sale, float64(c.Lines)*(sale+inv.Take.RequestUnits); c.ExtraRU < low*0.9 || c.ExtraRU > high {
			t.Errorf("%d lines: inventory adds %v RU, want between %d reads and takes (%v) and that plus a take a line (%v)", c.Lines, c.ExtraRU, c.Lines, low, high)
		}
		if c.Tracked.StoreOps != c.WithoutStepOps+3*float64(c.Lines) {
			t.Errorf("%d lines: %v ops tracked, %v without the step; want three more per line", c.Lines, c.Tracked.StoreOps, c.WithoutStepOps)
		}
	}

	if got, want := len(inv.Refusals), len(refusalLines); got != want {
		t.Fatalf("refused checkouts measured = %d, want %d", got, want)
	}
	for _, c := range inv.Refusals {
		// The reads show the sold-out line: nothing is taken, and the
		// refusal costs a read per line, the key's record and the cart's
		// two reads (checkStock, refuse).
		if c.Taken != 0 {
			t.Errorf("%s: %v reservations taken per refusal, want 0", c.Refusal.Design, c.Taken)
		}
		if want := float64(c.Lines + 3); c.Refusal.StoreOps != want {
			t.Errorf("%s: %v ops, want %v", c.Refusal.Design, c.Refusal.StoreOps, want)
		}
	}

	var md bytes.Buffer
	writeCostMarkdown(&md, rep)
	for _, want := range []string{"Ceiling of one product", "A refused checkout"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown has no %q", want)
		}
	}
	for _, s := range rep.Screens {
		if !strings.Contains(md.String(), "| "+s.Screen+" |") {
			t.Errorf("markdown has no row for %q", s.Screen)
		}
	}
}
