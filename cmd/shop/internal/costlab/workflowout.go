package costlab

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// paymentsNote says what the before and after of payments are.
const paymentsNote = "before: the checkout of tracked lines as this lab measured it on commit 88688ba, the last before payments (checkoutsBeforePayments): the key's record and the cart read, each line's stock read, the cart's marker, one take per line, then the summary read and ONE batch writing the order placed with the customerSummary; the cart's settle came after the answer and was not counted. After: the workflow, the tracked figures of the inventory table: the order opened pending, moved to reserved after the takes, to authorized after the provider (no Request Unit), to placed with the summary (the moves to authorized and placed each with its event, the outbox's), and the placed order's effects (a commit per line, the cart's settle: a read and a replace), all before the answer"

// workflowNote says how the transitions were measured.
func workflowNote(w workflowResult) string {
	return fmt.Sprintf("means over %d checkouts of %d tracked lines (one unit each) by new users, through store/writes on a store that records every call: a call belongs to the move whose closing write it precedes (claim: up to the cart's write; open, reserve, authorize, place: up to the write of the order in pending, reserved, authorized, placed; placed's effects: the rest of the checkout). Then, on that order, the orders feed's pass (feedworkers.Handlers.OrdersCarryOut), its ship and its cancel, each with its effects; and the cancel of a second order, placed", w.Repetitions, w.Lines)
}

// callsText lists a transition's calls: "orders read ×1 1.00".
func callsText(t transitionCost) string {
	parts := make([]string, len(t.Calls))
	for i, c := range t.Calls {
		parts[i] = fmt.Sprintf("%s ×%.4g %.2f", c.Call, c.Count, c.RequestUnits)
	}
	return strings.Join(parts, "; ")
}

// checkoutSum adds up the transitions of the checkout.
func checkoutSum(w workflowResult) (ops, ru float64) {
	for _, t := range w.Transitions {
		if t.InCheckout {
			ops += t.StoreOps
			ru += t.RequestUnits
		}
	}
	return ops, ru
}

func sumText(w workflowResult) string {
	ops, ru := checkoutSum(w)
	return fmt.Sprintf("the checkout's transitions add up to %.4g ops, %.2f RU; the same checkouts measured whole: %.4g ops, %.2f RU", ops, ru, w.Checkout.StoreOps, w.Checkout.RequestUnits)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no, after"
}

// writeWorkflowText prints the workflow section for a terminal.
func writeWorkflowText(out io.Writer, r costReport) {
	w := r.Inventory.Workflow
	fmt.Fprintf(out, "\ncheckouts before and after payments (%s)\n", paymentsNote)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "lines\tbefore: ops\tRU\tafter: ops\tRU\tpayments add: ops\tRU\t")
	for _, p := range w.Payments {
		fmt.Fprintf(tw, "%d\t%.4g\t%.2f\t%.4g\t%.2f\t%+.4g\t%+.2f\t\n", p.Lines, p.Before.StoreOps, p.Before.RequestUnits,
			p.After.StoreOps, p.After.RequestUnits, p.AddedOps, p.AddedRU)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nthe checkout move by move (%s)\n", workflowNote(w))
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "transition\tin the checkout\tstore ops\tRU\tcalls: count, RU\t")
	for _, t := range w.Transitions {
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.2f\t%s\t\n", t.Name, yesNo(t.InCheckout), t.StoreOps, t.RequestUnits, callsText(t))
	}
	tw.Flush()
	for _, t := range w.Transitions {
		fmt.Fprintf(out, "  %s: %s\n", t.Name, t.Note)
	}
	fmt.Fprintf(out, "%s\n", sumText(w))
	fmt.Fprintf(out, "\nwhere a transition could be cheaper:\n")
	for _, c := range w.Cheaper {
		fmt.Fprintf(out, "  - %s\n", c)
	}
	fmt.Fprintf(out, "\nthe outbox's events (%s)\n", eventsNote(w))
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "work\tevents\twith: ops\tRU\twithout: ops\tRU\tevents add: ops\tRU\tper event\tpayload indexed: RU\t")
	for _, e := range w.Events {
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%.2f\t%.4g\t%.2f\t%+.4g\t%+.2f\t%.2f\t%+.2f\t\n", e.Work, e.Events, e.With.StoreOps, e.With.RequestUnits,
			e.Without.StoreOps, e.Without.RequestUnits, e.AddedOps, e.AddedRU, e.PerEventRU, e.IndexedAddedRU)
	}
	tw.Flush()
}

// eventsNote says how the events' cost was measured.
func eventsNote(w workflowResult) string {
	return fmt.Sprintf("means over %d of each, by new users, through store/writes with the outbox on and off (repo.NewWithoutEvents, the lab's alone): an event is one more create in a batch the move writes anyway, so it adds Request Units and no store operation. Payload indexed: what the events added before the orders container excluded their payload (/order/*) from its index, as this lab measured it on commit 9d93e0a (eventsIndexed): the payload's terms cost more than the event's create itself, and grew with the lines. A checkout that places its order writes two (order.authorized, order.placed), each move one; a move's figure includes its effects (the capture, the releases, the cart's settle)", w.Repetitions)
}

// writeWorkflowMarkdown prints the workflow section of the cost report.
func writeWorkflowMarkdown(out io.Writer, r costReport) {
	w := r.Inventory.Workflow
	fmt.Fprintf(out, "\n### The checkout before and after payments\n\n")
	fmt.Fprintf(out, "%s.\n\n", strings.ToUpper(paymentsNote[:1])+paymentsNote[1:])
	fmt.Fprintln(out, "| lines | before: store ops | RU | after: store ops | RU | payments add: ops | RU |")
	fmt.Fprintln(out, "|--:|--:|--:|--:|--:|--:|--:|")
	for _, p := range w.Payments {
		fmt.Fprintf(out, "| %d | %.4g | %.2f | %.4g | %.2f | %+.4g | **%+.2f** |\n", p.Lines, p.Before.StoreOps, p.Before.RequestUnits,
			p.After.StoreOps, p.After.RequestUnits, p.AddedOps, p.AddedRU)
	}
	fmt.Fprintf(out, "\n### The checkout move by move\n\n")
	fmt.Fprintf(out, "The figures are %s. Calls are named container, operation, the status an order write moved to, and the code of a call that failed (still charged); each with its count and RU per transition.\n\n", workflowNote(w))
	fmt.Fprintln(out, "| transition | in the checkout | what it does | store ops | RU | calls: count, RU |")
	fmt.Fprintln(out, "|---|---|---|--:|--:|---|")
	for _, t := range w.Transitions {
		fmt.Fprintf(out, "| %s | %s | %s | %.4g | **%.2f** | %s |\n", t.Name, yesNo(t.InCheckout), t.Note, t.StoreOps, t.RequestUnits, callsText(t))
	}
	fmt.Fprintf(out, "\n%s.\n", strings.ToUpper(sumText(w)[:1])+sumText(w)[1:])
	fmt.Fprintf(out, "\nWhere a transition could be cheaper, from these figures:\n\n")
	for _, c := range w.Cheaper {
		fmt.Fprintf(out, "- %s\n", c)
	}
	writeEventsMarkdown(out, w)
}

// writeEventsMarkdown prints what the outbox's events add to the work
// that writes them: a part of the cost section, and the part module 11
// of the workshop shows (outboxPart).
func writeEventsMarkdown(out io.Writer, w workflowResult) {
	fmt.Fprintf(out, "\n### The outbox's events\n\n")
	fmt.Fprintf(out, "%s.\n\n", strings.ToUpper(eventsNote(w)[:1])+eventsNote(w)[1:])
	fmt.Fprintln(out, "| work | events | with: store ops | RU | without: store ops | RU | events add: ops | RU | per event | payload indexed: events added RU |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, e := range w.Events {
		fmt.Fprintf(out, "| %s | %d | %.4g | %.2f | %.4g | %.2f | %+.4g | **%+.2f** | %.2f | %+.2f |\n", e.Work, e.Events, e.With.StoreOps, e.With.RequestUnits,
			e.Without.StoreOps, e.Without.RequestUnits, e.AddedOps, e.AddedRU, e.PerEventRU, e.IndexedAddedRU)
	}
}

// outboxPart is the docs section of writeEventsMarkdown alone, with the
// command that wrote it.
const outboxPart = "cost outbox"

func writeOutboxPart(out io.Writer, r costReport) {
	fmt.Fprintf(out, "Written by `%s` (the outbox's events of its cost section in docs/performance.md):\n", r.Command)
	writeEventsMarkdown(out, r.Inventory.Workflow)
}

// find sums the calls of the transition named name that match: how
// many, their RU and the bytes they sent (means per transition).
func (w workflowResult) find(name string, match func(call string) bool) (count, ru, sent float64) {
	for _, t := range w.Transitions {
		if t.Name != name {
			continue
		}
		for _, c := range t.Calls {
			if match(c.Call) {
				count, ru, sent = count+c.Count, ru+c.RequestUnits, sent+c.BytesSent
			}
		}
	}
	return count, ru, sent
}

func (w workflowResult) transition(name string) transitionCost {
	for _, t := range w.Transitions {
		if t.Name == name {
			return t
		}
	}
	return transitionCost{}
}

func is(call string) func(string) bool { return func(c string) bool { return c == call } }

// cheaperNotes says where a transition could cost less, each from the
// figures measured: what the transition pays, and what the change would
// save and cost in the same figures.
func cheaperNotes(w workflowResult) []string {
	var out []string
	_, reserved, orderBytes := w.find("reserve", is("orders batch → reserved"))
	_, authorized, _ := w.find("authorize", is("orders batch → authorized"))
	_, placed, _ := w.find("place", is("orders batch → placed"))
	_, shipped, _ := w.find(shipMove, is("orders batch → shipped"))
	verdict := "a patch would send less but save no Request Unit (the store bills a patch as the write it makes)"
	if saved := shipped - w.MovePatch.RequestUnits; saved >= 0.5 {
		verdict = fmt.Sprintf("a patch would save about %.2f RU a move", saved)
	}
	out = append(out, fmt.Sprintf("The happy path writes the whole order three times after opening it: the moves to reserved (%.2f RU), authorized (%.2f RU) and placed (%.2f RU, the summary in the same batch), each a replace of the order with If-Match (%.0f bytes sent for the move to reserved). The same change as a patch under a condition on status sends %.0f bytes: the ship move sent that way to a copy of a placed order cost %.2f RU against %.2f RU for the replace the shop sends: %s.",
		reserved, authorized, placed, orderBytes, w.MovePatchSent, w.MovePatch.RequestUnits, shipped, verdict))

	reserve := w.transition("reserve")
	out = append(out, fmt.Sprintf("Two of those moves are writes of their own: the move to reserved (%.2f RU of the reserve's %.2f) could ride in the open batch if the takes came first, the order created reserved, at the price of units taken before any order records them (a checkout that died between the two would leave units held that no order gives back); the move to authorized (%.2f RU) only records the payment id and writes order.authorized, which the place batch could carry with order.placed, the authorization's key answering the same payment if it is asked again. Each would save a checkout one write of the order: one store op, about the %.2f RU of a replace.",
		reserved, reserve.RequestUnits, authorized, reserved))

	pass := w.transition(feedPass)
	_, orderRead, _ := w.find(feedPass, is("orders read"))
	refused, refusedRU, _ := w.find(feedPass, func(c string) bool { return strings.HasPrefix(c, "inventory patch (") })
	// A refused commit reads its reservation, for a marker to follow
	// (store/repo Inventory.Commit: a split stock's chain).
	followed, followedRU, _ := w.find(feedPass, is("inventory read"))
	refusedRU += followedRU
	refusedText := fmt.Sprintf("%.4g commit patches refused because they were done (%.2f RU)", refused, refusedRU)
	if followed > 0 {
		refusedText = fmt.Sprintf("%.4g commit patches refused because they were done, each then reading its reservation for a marker to follow, as on a split stock (%.4g ops, %.2f RU)", refused, refused+followed, refusedRU)
	}
	_, cartRead, _ := w.find(feedPass, is("carts read"))
	_, shipRefusedRU, _ := w.find(shipMove, func(c string) bool { return strings.HasPrefix(c, "inventory patch (") })
	_, shipFollowedRU, _ := w.find(shipMove, is("inventory read"))
	shipRefusedRU += shipFollowedRU
	_, shipCartRU, _ := w.find(shipMove, is("carts read"))
	spared, mark := pass.RequestUnits-orderRead, w.MovePatch.RequestUnits
	mind := "it pays on the first pass it spares"
	if perLine := refusedRU / float64(max(w.Lines, 1)); spared < mark && perLine > 0 && spared > 0 {
		fixed := spared - refusedRU
		mind = fmt.Sprintf("at %d lines what one pass spares (%.2f RU) is less than that write, so it pays from about %d lines, or once it spares %.0f such passes, shipping's included",
			w.Lines, spared, int((mark-fixed)/perLine)+1, math.Ceil(mark/spared))
	}
	out = append(out, fmt.Sprintf("The orders feed's second pass over a placed order costs %.2f RU (%.4g ops) and changes nothing: the order read (%.2f RU), %s, the cart read with nothing left to settle (%.2f RU); shipping pays the same refused commits and cart read again (%.2f RU). A mark on the order that its stock and cart are settled would spare all but the order read, at one more write of the order (as a patch, %.2f RU above) that is itself a change the feed delivers: %s.",
		pass.RequestUnits, pass.StoreOps, orderRead, refusedText, cartRead, shipRefusedRU+shipCartRU, mark, mind))

	cancel := w.transition(cancelShipped)
	reads, readRU, _ := w.find(cancelShipped, is("inventory read"))
	out = append(out, fmt.Sprintf("Each release reads its reservation before its batch (%.4g reads, %.2f RU of the %.2f a cancel costs): the order's line holds the quantity, so one batch under the condition state != released could do without the read whenever the reservation exists, a missing one still failing the batch and leading to the tombstone.",
		reads, readRU, cancel.RequestUnits))
	return out
}
