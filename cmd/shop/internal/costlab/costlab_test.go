package costlab

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
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
	if got, want := len(rep.SearchWrites), 4; got != want {
		t.Fatalf("search writes = %d, want %d", got, want)
	}
	for _, s := range rep.SearchWrites[:2] {
		if s.TermDocs < 4 || s.StoreOps <= s.TermDocs || s.RequestUnits <= s.ProductRU {
			t.Errorf("%s: %v term documents, %v ops, %v RU (product %v RU); want at least 4 documents, more ops than documents (the guard's reads) and more RU than the product write", s.Change, s.TermDocs, s.StoreOps, s.RequestUnits, s.ProductRU)
		}
	}
	// A review that leaves the stars writes nothing: the ledger's read and
	// the last entry's are the index step. Over all reviews, those that
	// moved the stars add their entries.
	kept, all := rep.SearchWrites[2], rep.SearchWrites[3]
	if rv := rep.Reviews; rv.Reviews != 5 || rv.MovedStars > rv.Reviews {
		t.Errorf("reviews %+v, want 5 (the repetitions)", rv)
	}
	if rep.Reviews.MovedStars < rep.Reviews.Reviews && (kept.StoreOps != 2 || kept.TermDocs != 0) {
		t.Errorf("%s: %v ops, %v term documents; want 2 (the ledger's read, the last entry's) and none", kept.Change, kept.StoreOps, kept.TermDocs)
	}
	if moved := rep.Reviews.MovedStars > 0; moved != (all.TermDocs > 0) || all.StoreOps < kept.StoreOps {
		t.Errorf("%s: %v ops, %v term documents after %d moves of the stars", all.Change, all.StoreOps, all.TermDocs, rep.Reviews.MovedStars)
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
	if got, want := len(rep.Goals), len(costGoals)+1; got != want {
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

	checkWorkflow(t, inv)

	var md bytes.Buffer
	writeCostMarkdown(&md, rep)
	for _, want := range []string{"Ceiling of one product", "A refused checkout", "The checkout before and after payments", "The checkout move by move", "Where a transition could be cheaper"} {
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

// checkWorkflow checks the workflow section against the figures it was
// made from: the before figures are the ones measured on commit 88688ba,
// the after ones the inventory table's, and the transitions of the
// checkout add up to the checkout measured whole.
func checkWorkflow(t *testing.T, inv inventoryResult) {
	t.Helper()
	wf := inv.Workflow
	before := map[int]checkoutBefore{1: {7, 49.30}, 3: {11, 74.00}, 10: {25, 161.98}}
	if got, want := len(wf.Payments), len(checkoutLines); got != want {
		t.Fatalf("payments rows = %d, want %d", got, want)
	}
	for i, p := range wf.Payments {
		c := inv.Checkouts[i]
		if p.Lines != c.Lines || p.Before != before[p.Lines] {
			t.Errorf("%d lines: before payments %+v, want %+v (commit 88688ba)", p.Lines, p.Before, before[p.Lines])
		}
		if p.After.RequestUnits != c.Tracked.RequestUnits || p.After.StoreOps != c.Tracked.StoreOps {
			t.Errorf("%d lines: after %+v, want the tracked checkout %+v", p.Lines, p.After, c.Tracked)
		}
		if p.AddedRU != report.Round2(p.After.RequestUnits-p.Before.RequestUnits) || p.AddedOps != report.Round2(p.After.StoreOps-p.Before.StoreOps) {
			t.Errorf("%d lines: payments add %v ops, %v RU; want after − before", p.Lines, p.AddedOps, p.AddedRU)
		}
	}

	want := []string{"claim", "open", "reserve", "authorize", "place", "placed's effects", shipMove, cancelShipped, cancelPlaced, feedPass}
	if len(wf.Transitions) != len(want) {
		t.Fatalf("transitions = %d, want %d", len(wf.Transitions), len(want))
	}
	var ops, ru float64
	in := 0
	for i, tr := range wf.Transitions {
		if tr.Name != want[i] {
			t.Errorf("transition %d = %q, want %q", i, tr.Name, want[i])
		}
		// Every transition writes or reads something; authorize's
		// provider call is not a store call, its move is.
		if tr.StoreOps <= 0 || tr.RequestUnits <= 0 {
			t.Errorf("%s: %v ops, %v RU; want both > 0", tr.Name, tr.StoreOps, tr.RequestUnits)
		}
		var callRU float64
		for _, c := range tr.Calls {
			callRU += c.RequestUnits
		}
		if math.Abs(callRU-tr.RequestUnits) > 0.01*float64(len(tr.Calls)) {
			t.Errorf("%s: its calls cost %v RU, the transition %v", tr.Name, callRU, tr.RequestUnits)
		}
		if tr.InCheckout {
			ops, ru, in = ops+tr.StoreOps, ru+tr.RequestUnits, in+1
		}
	}
	if tr := wf.transition("authorize"); tr.StoreOps != 1 {
		t.Errorf("authorize: %v store ops, want 1 (its move; the provider costs no Request Unit)", tr.StoreOps)
	}
	// Each transition's mean is rounded to 2 decimals: the sum may be off
	// by half a cent per transition.
	if tol := 0.005 * float64(in+1); math.Abs(ru-wf.Checkout.RequestUnits) > tol || math.Abs(ops-wf.Checkout.StoreOps) > tol {
		t.Errorf("the checkout's transitions add up to %v ops, %v RU; measured whole %v ops, %v RU", ops, ru, wf.Checkout.StoreOps, wf.Checkout.RequestUnits)
	}
	// The same checkout as the inventory table's (3 tracked lines), run
	// again: its documents are the same size, so its charge is too.
	for _, c := range inv.Checkouts {
		if c.Lines == wf.Lines && math.Abs(c.Tracked.RequestUnits-ru) > 0.01*c.Tracked.RequestUnits {
			t.Errorf("the transitions add up to %v RU, the inventory table's %d-line checkout %v RU", ru, c.Lines, c.Tracked.RequestUnits)
		}
	}
	if wf.MovePatch.StoreOps != 1 || wf.MovePatch.RequestUnits <= 0 || wf.MovePatchSent <= 0 {
		t.Errorf("the move as a patch: %+v, %v bytes; want one charged call", wf.MovePatch, wf.MovePatchSent)
	}
	if len(wf.Cheaper) != 4 {
		t.Errorf("cheaper = %d notes, want 4", len(wf.Cheaper))
	}
}

// TestSplitCheckout: the calls go to the move whose closing write they
// precede, and a checkout that never reached placed is an error, not a
// misattribution.
func TestSplitCheckout(t *testing.T) {
	order := func(status string) call {
		return call{Container: store.OrdersContainer, Op: "batch", RU: 10, Status: status}
	}
	calls := []call{
		{Container: store.OrdersContainer, Op: "read", RU: 1, Code: domain.ENOTFOUND},
		{Container: store.CartsContainer, Op: "read", RU: 1},
		{Container: store.CartsContainer, Op: "replace", RU: 5},
		order(domain.StatusPending),
		{Container: store.InventoryContainer, Op: "batch", RU: 11},
		order(domain.StatusReserved),
		order(domain.StatusAuthorized),
		{Container: store.OrdersContainer, Op: "read", RU: 1},
		order(domain.StatusPlaced),
		{Container: store.InventoryContainer, Op: "patch", RU: 6},
	}
	parts, err := splitCheckout(calls)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{3, 1, 2, 1, 2, 1} {
		if len(parts[i]) != want {
			t.Errorf("%s: %d calls, want %d", checkoutMoves[i].name, len(parts[i]), want)
		}
	}
	if _, err := splitCheckout(calls[:7]); err == nil {
		t.Errorf("a checkout that never reached placed split without an error")
	}
}

// TestOrderStatus: the status of an order write is read from an order
// item or a patch of /status, and from nothing else.
func TestOrderStatus(t *testing.T) {
	for item, want := range map[string]string{
		`{"id":"o1","type":"order","status":"reserved"}`:         domain.StatusReserved,
		`{"id":"idem","type":"idempotency","status":"whatever"}`: "",
		`[{"op":"set","path":"/status","value":"shipped"}]`:      domain.StatusShipped,
		`[{"op":"set","path":"/state","value":"committed"}]`:     "",
	} {
		if got := orderStatus([]byte(item)); got != want {
			t.Errorf("orderStatus(%s) = %q, want %q", item, got, want)
		}
	}
}
