package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The order is the checkout's workflow record. Its status is one of the
// States below, and it moves only along Moves: each move is ONE
// conditional write of the order (If-Match on the version read) from
// exactly one named state to the next, so of two workers carrying the
// same order on, one moves it and the other reads it again. What a state
// asks of the stock and of the money is written beside it; whoever moves
// an order into a state brings stock and money in line with it, and the
// orders feed does it again, at least once, for every order it delivers:
// each of those effects is idempotent (a reservation's state guards its
// release, a payment's idempotency key guards its capture, void and
// refund). This table is the one source: store/writes follows it, the
// audit and the money invariants check against it, and
// docs/architecture.md prints it (TestArchitectureShowsTheWorkflow).

// Order statuses.
const (
	StatusPending    = "pending"
	StatusReserved   = "reserved"
	StatusAuthorized = "authorized"
	StatusPlaced     = "placed"
	StatusShipped    = "shipped"
	StatusDelivered  = "delivered"
	StatusCancelled  = "cancelled"
	StatusRejected   = "rejected"
	StatusExpired    = "expired"
)

// What a state asks of the order's units in stock.
const (
	StockTaking   = "taking"   // some lines may be taken (reservations held)
	StockHeld     = "held"     // every line taken, reservations held
	StockSold     = "sold"     // every line taken, reservations committed
	StockReturned = "returned" // no line taken: every reservation released
)

// What a state asks of the order's money (payments.Payment states).
const (
	MoneyNone     = "none"       // nothing asked of the provider yet
	MoneyHeld     = "authorized" // one live authorization of the total
	MoneyCharged  = "captured"   // one capture of the total
	MoneyReturned = "returned"   // nothing live: voided, refunded, declined or never asked
)

// State is one order status and what holds while an order rests in it.
type State struct {
	Name  string
	Stock string
	Money string
	// InProgress: the checkout is still moving it on (or a sweeper will,
	// Sweep); its cart keeps the checkout's marker meanwhile.
	InProgress bool
	// Final: no move leaves it.
	Final bool
	// Counted: the order counts in its user's customerSummary.
	Counted bool
	Doc     string
}

// States is every order status, in the order of a checkout's life.
var States = []State{
	{StatusPending, StockTaking, MoneyNone, true, false, false, "the order is written from the cart, its cart marked; its lines' units are being taken"},
	{StatusReserved, StockHeld, MoneyNone, true, false, false, "every line's units are held; the payment is being authorized"},
	{StatusAuthorized, StockHeld, MoneyHeld, true, false, false, "the total is authorized on the card; the order is being placed"},
	{StatusPlaced, StockSold, MoneyHeld, false, false, true, "the order stands: counted in the customer's summary, the paid lines out of the cart"},
	{StatusShipped, StockSold, MoneyCharged, false, false, true, "shipping captured the authorization"},
	{StatusDelivered, StockSold, MoneyCharged, false, true, true, "delivered; nothing moves it any more"},
	{StatusCancelled, StockReturned, MoneyReturned, false, true, false, "cancelled: the units are back in stock, the authorization voided or the capture refunded"},
	{StatusRejected, StockReturned, MoneyReturned, false, true, false, "refused: a line out of stock, or the card declined"},
	{StatusExpired, StockReturned, MoneyReturned, false, true, false, "still in progress past CheckoutExpiry: the sweeper ended it"},
}

// Move is one allowed transition.
type Move struct {
	Name     string
	From, To string
	// By says who makes it.
	By string
	// Decides names the effect made BEFORE the move, whose outcome
	// decides it (the take of the units, the authorization); every other
	// effect follows the move (the state moved to says what).
	Decides string
}

// Who makes a move.
const (
	ByCheckout = "checkout or sweeper"
	BySweeper  = "sweeper"
	ByAdmin    = "admin"
	ByOwner    = "owner or admin"
)

// Moves is the workflow: every transition an order can make.
var Moves = []Move{
	{"reserve", StatusPending, StatusReserved, ByCheckout, "take every line's units"},
	{"refuse", StatusPending, StatusRejected, ByCheckout, "take every line's units (one is short)"},
	{"authorize", StatusReserved, StatusAuthorized, ByCheckout, "authorize the total"},
	{"decline", StatusReserved, StatusRejected, ByCheckout, "authorize the total (declined)"},
	{"place", StatusAuthorized, StatusPlaced, ByCheckout, ""},
	{"expire", StatusPending, StatusExpired, BySweeper, ""},
	{"expire", StatusReserved, StatusExpired, BySweeper, ""},
	{"expire", StatusAuthorized, StatusExpired, BySweeper, ""},
	{"ship", StatusPlaced, StatusShipped, ByAdmin, ""},
	{"deliver", StatusShipped, StatusDelivered, ByAdmin, ""},
	{"cancel", StatusPlaced, StatusCancelled, ByOwner, ""},
	{"cancel", StatusShipped, StatusCancelled, ByOwner, ""},
}

// StateOf returns the state named status.
func StateOf(status string) (State, bool) {
	i := slices.IndexFunc(States, func(s State) bool { return s.Name == status })
	if i < 0 {
		return State{}, false
	}
	return States[i], true
}

// ValidStatus reports whether s is an order status.
func ValidStatus(s string) bool {
	_, ok := StateOf(s)
	return ok
}

// MoveOf returns the move from → to, if the workflow has one.
func MoveOf(from, to string) (Move, bool) {
	i := slices.IndexFunc(Moves, func(m Move) bool { return m.From == from && m.To == to })
	if i < 0 {
		return Move{}, false
	}
	return Moves[i], true
}

// next is where an order in status from can move to.
func next(from string) []string {
	var to []string
	for _, m := range Moves {
		if m.From == from {
			to = append(to, m.To)
		}
	}
	return to
}

// RestingBefore lists the states that rest (not in progress) from which
// the workflow can reach status: where an order now in status can have
// rested before.
func RestingBefore(status string) []string {
	var out []string
	for _, s := range States {
		if !s.InProgress && s.Name != status && reaches(s.Name, status) {
			out = append(out, s.Name)
		}
	}
	return out
}

// reaches reports whether some path of moves leads from from to to.
func reaches(from, to string) bool {
	seen := map[string]bool{from: true}
	for frontier := []string{from}; len(frontier) > 0; {
		cur := frontier[0]
		frontier = frontier[1:]
		for _, m := range Moves {
			if m.From == cur && !seen[m.To] {
				if m.To == to {
					return true
				}
				seen[m.To] = true
				frontier = append(frontier, m.To)
			}
		}
	}
	return false
}

// Step is one move the order made, kept on the order: its timeline.
type Step struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

// Passed reports whether the order was ever in status s.
func (o *Order) Passed(s string) bool {
	if o.Status == s {
		return true
	}
	return slices.ContainsFunc(o.History, func(st Step) bool { return st.From == s || st.To == s })
}

// Move moves the order to status to along the workflow; a move the
// workflow does not have is a conflict naming both statuses. The caller
// writes the order with If-Match on the version it read.
func (o *Order) Move(to string, now time.Time) error {
	if !ValidStatus(to) {
		return Errorf(EINVALID, "unknown order status %q", to)
	}
	if _, ok := MoveOf(o.Status, to); !ok {
		return Errorf(ECONFLICT, "%s", transitionRefusal(o.ID, o.Status, to))
	}
	now = now.UTC()
	o.History = append(o.History, Step{From: o.Status, To: to, At: now})
	o.Status = to
	o.LastUpdated = now
	o.Version++
	return nil
}

// SetStatus is Move, for the moves a person makes (ship, deliver,
// cancel): the checkout's own moves are not theirs to make.
func (o *Order) SetStatus(to string, now time.Time) error {
	if m, ok := MoveOf(o.Status, to); ok && (m.By == ByCheckout || m.By == BySweeper) {
		return Errorf(ECONFLICT, "order %s is %s: the checkout moves it to %s, not a person", o.ID, o.Status, to)
	}
	return o.Move(to, now)
}

// InProgress reports whether the checkout is still moving the order on.
func (o *Order) InProgress() bool {
	s, _ := StateOf(o.Status)
	return s.InProgress
}

// transitionRefusal says in words why an order cannot move from status
// from to status to, and where it can go instead.
func transitionRefusal(id, from, to string) string {
	nx := next(from)
	switch {
	case from == to:
		return fmt.Sprintf("order %s is already %s", id, from)
	case len(nx) == 0:
		return fmt.Sprintf("order %s is %s, which is final: it can no longer be %s", id, from, to)
	}
	return fmt.Sprintf("order %s is %s, so it can be %s next, not %s", id, from, strings.Join(nx, " or "), to)
}

// Rejection says why an order was rejected.
type Rejection struct {
	// Reason is RejectedOutOfStock or RejectedDeclined.
	Reason string `json:"reason"`
	// Shortages names the short lines of an out-of-stock rejection.
	Shortages []Shortage `json:"shortages,omitempty"`
	// DeclineCode and Message are the provider's, for a declined card.
	DeclineCode string `json:"declineCode,omitempty"`
	Message     string `json:"message,omitempty"`
}

// Rejection reasons.
const (
	RejectedOutOfStock = "out_of_stock"
	RejectedDeclined   = "card_declined"
)

// Err is the refusal the checkout answers for the rejection: the
// out-of-stock conflict naming the short lines, or the declined payment.
func (r Rejection) Err() *Error {
	if r.Reason == RejectedOutOfStock {
		return OutOfStock(r.Shortages)
	}
	return &Error{Code: EDECLINED, Message: fmt.Sprintf("the card was declined: %s", r.Message), DeclineCode: r.DeclineCode}
}

// OrderPayment is the order's payment as the workflow knows it: the
// provider's id, set when the authorization is recorded.
type OrderPayment struct {
	ID          string `json:"id,omitempty"`
	AmountCents int64  `json:"amountCents"`
	Currency    string `json:"currency"`
}

// PaymentStatus is what the order's state says of its money, in the
// provider's words: "authorized", "captured", "voided", "refunded",
// "declined", or "" while nothing was asked.
func (o *Order) PaymentStatus() string {
	s, _ := StateOf(o.Status)
	switch {
	case s.Money == MoneyHeld:
		return "authorized"
	case s.Money == MoneyCharged:
		return "captured"
	case o.Rejection != nil && o.Rejection.Reason == RejectedDeclined:
		return "declined"
	case s.Money == MoneyReturned && o.Passed(StatusShipped):
		return "refunded"
	case s.Money == MoneyReturned && o.Payment != nil && o.Payment.ID != "":
		return "voided"
	}
	return ""
}

// The sweeper's bounds (feedworkers.Sweeper): an order still in progress
// CheckoutStall after it was created is carried on by the sweeper, and
// one still in progress CheckoutExpiry after is expired. The cart of an
// order in progress stays claimed meanwhile, so the expiry bounds how
// long a cart can be held by a checkout that cannot finish (a payment
// provider that keeps failing).
const (
	CheckoutStall  = 30 * time.Second
	CheckoutExpiry = 10 * time.Minute
)

// CheckoutBound is how long a checkout request carries its order on
// before it answers 202 Accepted with the order as it is: the workflow
// goes on without it (the sweeper), and the client polls the order.
const CheckoutBound = 2 * time.Second
