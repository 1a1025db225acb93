package costlab

import (
	"context"
	"fmt"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// This file measures the checkout move by move (domain.Moves): a
// checkout of workflowLines tracked lines runs on a store that records
// every call (recording), and the calls are attributed to the moves by
// the writes that close them. Then, apart, the moves a person or the
// orders feed makes on the order afterwards.

// workflowLines is the cart size of the move-by-move measure.
const workflowLines = 3

// checkoutBefore is what one checkout cost, per checkout.
type checkoutBefore struct {
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
}

// checkoutsBeforePayments are the checkouts of 1, 3 and 10 tracked lines
// as this lab measured them on commit 88688ba (go run ./cmd/shop cost,
// 200 checkouts each), the last commit before payments: the checkout
// marked the cart, took each line's units and wrote the order placed in
// ONE batch with the customerSummary. That protocol is gone from the
// code, so its figures are kept here, not measured again.
var checkoutsBeforePayments = map[int]checkoutBefore{
	1:  {StoreOps: 7, RequestUnits: 49.30},
	3:  {StoreOps: 11, RequestUnits: 74.00},
	10: {StoreOps: 25, RequestUnits: 161.98},
}

// paymentsChange is one cart size's checkout before payments and now.
type paymentsChange struct {
	Lines  int            `json:"lines"`
	Before checkoutBefore `json:"before"`
	// After is the tracked checkout of the inventory table.
	After    checkoutBefore `json:"after"`
	AddedOps float64        `json:"addedOps"`
	AddedRU  float64        `json:"addedRU"`
}

// callCost is one kind of call (call.key) within a transition: means per
// transition of how many were made, what they cost and sent in all.
type callCost struct {
	Call         string  `json:"call"`
	Count        float64 `json:"count"`
	RequestUnits float64 `json:"requestUnits"`
	BytesSent    float64 `json:"bytesSent"`
}

// transitionCost is what one move of the workflow cost, with its effects.
type transitionCost struct {
	Name string `json:"name"`
	// InCheckout: the move is part of the checkout's answer (claim to
	// placed's effects); the others are measured apart, afterwards.
	InCheckout   bool       `json:"inCheckout"`
	StoreOps     float64    `json:"storeOps"`
	RequestUnits float64    `json:"requestUnits"`
	Calls        []callCost `json:"calls"`
	Note         string     `json:"note"`
}

// workflowResult is the workflow section of the report.
type workflowResult struct {
	Lines       int              `json:"lines"`
	Repetitions int              `json:"repetitions"`
	Payments    []paymentsChange `json:"payments"`
	// Checkout is the measured checkout of Lines lines, whole (its Meter):
	// the transitions in it add up to it.
	Checkout    designResult     `json:"checkout"`
	Transitions []transitionCost `json:"transitions"`
	// MovePatch is the ship move sent as the shop does not send it: one
	// patch of the order under the condition status = placed, on a copy
	// of a placed order. BytesSent beside it is its operations'.
	MovePatch     designResult `json:"movePatch"`
	MovePatchSent float64      `json:"movePatchBytesSent"`
	// Cheaper says where a transition could cost less, from the figures.
	Cheaper []string `json:"cheaper"`
	// Events is what the outbox's events add: checkouts of each of
	// checkoutLines and a person's moves, with and without them.
	Events []eventCost `json:"events"`
}

// A move of the checkout: its calls run up to and including the first
// call that ends it (the last one takes what is left).
type checkoutMove struct {
	name, note string
	ends       func(call) bool
}

// movedTo ends a move at the write of the order in status to.
func movedTo(to string) func(call) bool {
	return func(c call) bool { return c.Container == store.OrdersContainer && c.Status == to && c.Code == "" }
}

var checkoutMoves = []checkoutMove{
	{"claim", "the key's record read (none yet: a 404), the cart read, each line's stock read, the cart's write with the checkout's marker (If-Match)",
		func(c call) bool { return c.Container == store.CartsContainer && c.write() && c.Code == "" }},
	{"open", "one batch in orders: the order, pending, and the Idempotency-Key's record", movedTo(domain.StatusPending)},
	{"reserve", "one take batch per line in inventory, then the move to reserved: the order replaced, If-Match", movedTo(domain.StatusReserved)},
	{"authorize", "the provider holds the total (no Request Unit), then the move to authorized: the order replaced with its payment id, its order.authorized event created in the same batch", movedTo(domain.StatusAuthorized)},
	{"place", "the customerSummary read (a new buyer has none: a 404), then one batch: the order replaced placed, the summary with it (If-Match), its order.placed event created", movedTo(domain.StatusPlaced)},
	{"placed's effects", "CarryOut: a conditional commit patch of each line's reservation (held → committed); the cart settled: read, marker and paid lines out (replace)", nil},
}

// The transitions measured apart, after the checkout.
const (
	feedPass      = "orders feed, second pass"
	shipMove      = "ship"
	cancelShipped = "cancel a shipped order"
	cancelPlaced  = "cancel a placed order"
)

var apartNotes = map[string]string{
	feedPass:      "feedworkers OrdersCarryOut on the placed order: the order read, then CarryOut again on work already done",
	shipMove:      "SetOrderStatus: the order read, the move to shipped with its order.shipped event (no summary change), then its effects: each line's commit, the capture at the provider (no RU), the cart's settle",
	cancelShipped: "SetOrderStatus: the order read, the summary read, one batch (order cancelled, summary without it, the order.cancelled event), each line's release (read + batch), the refund (no RU), the cart's settle",
	cancelPlaced:  "the same on a placed order: the releases, and the authorization voided (no RU)",
}

// splitCheckout attributes a checkout's calls to checkoutMoves.
func splitCheckout(calls []call) ([][]call, error) {
	parts := make([][]call, len(checkoutMoves))
	at := 0
	for _, c := range calls {
		parts[at] = append(parts[at], c)
		if end := checkoutMoves[at].ends; end != nil && end(c) {
			at++
		}
	}
	if at < len(checkoutMoves)-1 {
		return nil, fmt.Errorf("the checkout's %d calls never ended its %s move", len(calls), checkoutMoves[at].name)
	}
	return parts, nil
}

// tally sums the calls of one transition over the repetitions.
type tally struct {
	n, ops int
	ru     float64
	calls  map[string]*callCost
	order  []string
}

func (t *tally) add(calls []call) {
	if t.calls == nil {
		t.calls = map[string]*callCost{}
	}
	t.n++
	for _, c := range calls {
		t.ops++
		t.ru += c.RU
		k := c.key()
		cc := t.calls[k]
		if cc == nil {
			cc = &callCost{Call: k}
			t.calls[k] = cc
			t.order = append(t.order, k)
		}
		cc.Count++
		cc.RequestUnits += c.RU
		cc.BytesSent += float64(c.Sent)
	}
}

// result is the tally's means per transition.
func (t *tally) result(name, note string, inCheckout bool) transitionCost {
	n := float64(max(t.n, 1))
	r := transitionCost{Name: name, Note: note, InCheckout: inCheckout,
		StoreOps: report.Round2(float64(t.ops) / n), RequestUnits: report.Round2(t.ru / n)}
	for _, k := range t.order {
		cc := *t.calls[k]
		cc.Count, cc.RequestUnits, cc.BytesSent = report.Round2(cc.Count/n), report.Round2(cc.RequestUnits/n), report.Round2(cc.BytesSent/n)
		r.Calls = append(r.Calls, cc)
	}
	return r
}

// recordOnce runs fn once under a Meter and a callLog.
func recordOnce(ctx context.Context, fn func(context.Context) error) (sample, []call, error) {
	lctx, log := withCallLog(ctx)
	s, err := once(lctx, func(ctx context.Context, _ int) error { return fn(ctx) }, 0)
	return s, log.list(), err
}

// measureWorkflow runs reps checkouts of workflowLines tracked lines
// (after one warm-up) through the shop's write path on ms wrapped in
// the recorder, attributes each one's calls to its moves, and after
// each makes the moves that follow a placed order: the orders feed's
// pass over it, its ship, then its cancel; and the cancel of a second,
// placed order. checkouts are the inventory table's, for the before and
// after of payments.
func (l *inventoryLab) measureWorkflow(ctx context.Context, ms store.Store, reps int, checkouts []checkoutCost) (workflowResult, error) {
	r := workflowResult{Lines: workflowLines, Repetitions: reps}
	for _, c := range checkouts {
		before := checkoutsBeforePayments[c.Lines]
		r.Payments = append(r.Payments, paymentsChange{Lines: c.Lines, Before: before,
			After:    checkoutBefore{StoreOps: c.Tracked.StoreOps, RequestUnits: c.Tracked.RequestUnits},
			AddedOps: report.Round2(c.Tracked.StoreOps - before.StoreOps), AddedRU: report.Round2(c.Tracked.RequestUnits - before.RequestUnits)})
	}
	rec := recording(ms)
	w := writes.New(repo.New(rec, 0), l.pay, time.Now)
	feed := feedworkers.NewHandlers(rec, writes.New(repo.New(rec, 0), l.pay, nil), feedworkers.HandlersConfig{})
	products := l.tracked[:workflowLines]
	moves := make([]tally, len(checkoutMoves))
	apart := map[string]*tally{feedPass: {}, shipMove: {}, cancelShipped: {}, cancelPlaced: {}}
	var whole, patches []sample
	var patchSent float64
	for i := range reps + 1 {
		user, err := l.newBuyer(ctx, products)
		if err != nil {
			return r, err
		}
		var o domain.Order
		s, calls, err := recordOnce(ctx, func(ctx context.Context) error {
			var err error
			o, err = w.Checkout(ctx, labCheckout(user, user+"-key"))
			return err
		})
		if err == nil && o.Status != domain.StatusPlaced {
			err = fmt.Errorf("order %s is %s, want placed", o.ID, o.Status)
		}
		if err != nil {
			return r, fmt.Errorf("checkout: %w", err)
		}
		parts, err := splitCheckout(calls)
		if err != nil {
			return r, err
		}
		after := map[string][]call{}
		for _, step := range []struct {
			name string
			fn   func(context.Context) error
		}{
			{feedPass, func(ctx context.Context) error { return feed.OrdersCarryOut(ctx, []domain.Order{o}) }},
			{shipMove, l.setStatus(w, o, domain.StatusShipped)},
			{cancelShipped, l.setStatus(w, o, domain.StatusCancelled)},
		} {
			if _, after[step.name], err = recordOnce(ctx, step.fn); err != nil {
				return r, fmt.Errorf("%s: %w", step.name, err)
			}
		}
		// A second order, placed with nothing recorded, then cancelled.
		user2, err := l.newBuyer(ctx, products)
		if err != nil {
			return r, err
		}
		placed, err := w.Checkout(ctx, labCheckout(user2, user2+"-key"))
		if err != nil {
			return r, fmt.Errorf("checkout: %w", err)
		}
		patch, patchCalls, err := l.movePatch(ctx, rec, placed)
		if err != nil {
			return r, fmt.Errorf("the move as a patch: %w", err)
		}
		if _, after[cancelPlaced], err = recordOnce(ctx, l.setStatus(w, placed, domain.StatusCancelled)); err != nil {
			return r, fmt.Errorf("%s: %w", cancelPlaced, err)
		}
		if i == 0 {
			continue // the warm-up
		}
		whole, patches = append(whole, s), append(patches, patch)
		for _, c := range patchCalls {
			patchSent += float64(c.Sent)
		}
		for m, part := range parts {
			moves[m].add(part)
		}
		for name, calls := range after {
			apart[name].add(calls)
		}
	}
	r.Checkout = summarize(design{name: fmt.Sprintf("checkout of %d tracked lines", workflowLines)}, whole)
	r.MovePatch = summarize(design{name: "ship move as a patch"}, patches)
	r.MovePatchSent = report.Round2(patchSent / float64(max(len(patches), 1)))
	for m, mv := range checkoutMoves {
		r.Transitions = append(r.Transitions, moves[m].result(mv.name, mv.note, true))
	}
	for _, name := range []string{shipMove, cancelShipped, cancelPlaced, feedPass} {
		r.Transitions = append(r.Transitions, apart[name].result(name, apartNotes[name], false))
	}
	r.Cheaper = cheaperNotes(r)
	return r, nil
}

// setStatus is the admin's move of o to status to, with its effects.
func (l *inventoryLab) setStatus(w *writes.Writes, o domain.Order, to string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := w.SetOrderStatus(ctx, o.UserID, o.ID, "", to)
		return err
	}
}

// movePatch sends the ship move of the placed order o as one patch (the
// status, lastUpdated, version +1, the step appended to history) under
// the condition status = placed, to a copy of o written unrecorded: what
// the move would cost as a patch rather than the replace the shop sends.
// The copy stays in the scratch store, which is thrown away.
func (l *inventoryLab) movePatch(ctx context.Context, rec store.Store, o domain.Order) (sample, []call, error) {
	cp := o
	cp.ID, cp.ETag, cp.TS = o.ID+"-patch", "", 0
	if _, err := repo.CreateDoc(ctx, l.rawOrders, o.UserID, cp); err != nil {
		return sample{}, nil, err
	}
	now := time.Now().UTC()
	ops := []store.PatchOp{
		{Op: store.PatchSet, Path: "/status", Value: domain.StatusShipped},
		{Op: store.PatchSet, Path: "/lastUpdated", Value: now},
		{Op: store.PatchIncrement, Path: "/version", Value: int64(1)},
		{Op: store.PatchAdd, Path: "/history/-", Value: domain.Step{From: domain.StatusPlaced, To: domain.StatusShipped, At: now}},
	}
	return recordOnce(ctx, func(ctx context.Context) error {
		_, err := rec.Container(store.OrdersContainer).Patch(ctx, o.UserID, cp.ID, ops,
			&store.PatchOptions{Condition: store.Condition{{Path: "status", Op: store.OpEqual, Value: domain.StatusPlaced}}})
		return err
	})
}
