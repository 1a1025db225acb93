package repo

import (
	"context"
	"errors"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Orders is the repository of `orders` (pk /userId). A user's orders, the
// idempotency records of their checkouts and their customerSummary share
// one logical partition, so a checkout commits all three in ONE
// transactional batch (transactions need a shared partition key). So do
// the order's events (domain.NewOrderEvent), the outbox: each move that
// writes one writes it in the move's own batch.
type Orders struct {
	c store.Container
	// noEvents leaves the events out of the batches: only the cost lab
	// sets it (NewWithoutEvents), to measure what the outbox costs.
	noEvents bool
}

// NewOrders returns the orders repository over s.
func NewOrders(s store.Store) *Orders { return &Orders{c: s.Container(store.OrdersContainer)} }

// IdempotencyTTL is how long a checkout's Idempotency-Key is remembered.
const IdempotencyTTL = 7 * 24 * 3600

// Get returns one of the user's orders: point read by (userId, orderId).
// Another user's order id is simply not in this partition: ENOTFOUND.
func (r *Orders) Get(ctx context.Context, userID, orderID string) (domain.Order, error) {
	o, err := ReadDoc[domain.Order](ctx, r.c, userID, orderID)
	if err == nil && !IsOrder(o) {
		err = domain.Errorf(domain.ENOTFOUND, "order %q not found", orderID)
	}
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.Order{}, domain.Errorf(domain.ENOTFOUND, "order %q not found", orderID)
	}
	return o, err
}

// Read is Get's one point read without the decoding: the document as
// stored and its ETag, for a screen that keeps what it rendered of each
// document's bytes (the order detail, api/renders.go), which must show
// it only if IsOrder. ENOTFOUND if missing.
func (r *Orders) Read(ctx context.Context, userID, orderID string) ([]byte, string, error) {
	it, err := r.c.Read(ctx, userID, orderID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return nil, "", domain.Errorf(domain.ENOTFOUND, "order %q not found", orderID)
	}
	return it.Item, it.ETag, err
}

// IsOrder reports whether o, a document of the orders container, is an
// order (the container also holds each user's customerSummary and the
// checkouts' idempotency records).
func IsOrder(o domain.Order) bool { return o.Type == domain.TypeOrder }

// OrderListItem is the projection the order history needs.
type OrderListItem struct {
	ID         string    `json:"id"`
	CreatedAt  time.Time `json:"createdAt"`
	Status     string    `json:"status"`
	ItemCount  int       `json:"itemCount"`
	TotalCents int64     `json:"totalCents"`
}

// Page returns one page of the user's order history, newest first: ONE
// single-partition query with a projection (only what the list shows is
// returned and charged for).
func (r *Orders) Page(ctx context.Context, userID string, limit int, continuation string) (Page[OrderListItem], error) {
	return rawPage[OrderListItem](ctx, r.c, store.Query{
		PartitionKey: userID,
		Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}},
		OrderBy:      "createdAt",
		Desc:         true,
		Limit:        limit,
		Select:       []string{"id", "createdAt", "status", "itemCount", "totalCents"},
		Continuation: continuation,
	})
}

// Summary returns the user's customerSummary (zeros for a new user): a
// point read of a pre-computed aggregate instead of a query over orders.
func (r *Orders) Summary(ctx context.Context, userID string) (domain.CustomerSummary, error) {
	s, err := ReadDoc[domain.CustomerSummary](ctx, r.c, userID, domain.CustomerSummaryID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return domain.NewCustomerSummary(userID), nil
	}
	return s, err
}

// ReadSummary is Summary's one point read without the decoding: the
// customerSummary as stored, or a new user's zeros as a document, for a
// screen that keeps what it rendered of each document's bytes (my
// account, api/renders.go).
func (r *Orders) ReadSummary(ctx context.Context, userID string) ([]byte, error) {
	it, err := r.c.Read(ctx, userID, domain.CustomerSummaryID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return encode(domain.NewCustomerSummary(userID))
	}
	return it.Item, err
}

// Idempotency returns the record of a checkout key, ENOTFOUND if unused.
func (r *Orders) Idempotency(ctx context.Context, userID, key string) (domain.Idempotency, error) {
	return ReadDoc[domain.Idempotency](ctx, r.c, userID, domain.IdempotencyID(key))
}

// VoidTTL is how long a voided order id stays taken: far longer than any
// batch can be in flight.
const VoidTTL = 24 * 3600

// Lookup says what stands at a checkout's order id: the committed order,
// its void (voided true), or nothing (ENOTFOUND): the batch has not
// committed, and may still.
func (r *Orders) Lookup(ctx context.Context, userID, orderID string) (o domain.Order, voided bool, err error) {
	o, err = ReadDoc[domain.Order](ctx, r.c, userID, orderID)
	switch {
	case err != nil:
		return domain.Order{}, false, err
	case o.Type == domain.TypeVoidedOrder:
		return domain.Order{}, true, nil
	case o.Type != domain.TypeOrder:
		return domain.Order{}, false, domain.Errorf(domain.EINTERNAL, "%s in %s's orders is a %s, not an order", orderID, userID, o.Type)
	}
	return o, false, nil
}

// Void takes a checkout's order id for good, so its batch can no longer
// commit (its Create of the order fails): one small create in the user's
// partition. ErrOrderExists when the order (or a void) is there first.
func (r *Orders) Void(ctx context.Context, userID, orderID string, now time.Time) error {
	ttl := VoidTTL
	doc, err := encode(domain.VoidedOrder{
		Meta:     domain.Meta{ID: orderID, Type: domain.TypeVoidedOrder, SchemaVersion: domain.SchemaVersion, TTL: &ttl},
		UserID:   userID,
		VoidedAt: now.UTC(),
	})
	if err != nil {
		return err
	}
	_, err = r.c.Create(ctx, userID, doc)
	if domain.IsCode(err, domain.ECONFLICT) {
		return ErrOrderExists
	}
	return err
}

// The two ways a checkout's opening batch is refused because its
// documents exist.
var (
	// ErrOrderExists: the new order's id is taken: a cart change found
	// the checkout's marker before its order and voided the id
	// (Orders.Void).
	ErrOrderExists = domain.Errorf(domain.ECONFLICT, "the cart changed while the checkout began; nothing was charged; try again")
	// ErrKeyUsed: the Idempotency-Key's record is committed.
	ErrKeyUsed = domain.Errorf(domain.ECONFLICT, "this Idempotency-Key was used by another request")
)

// Open writes a new order as ONE transactional batch in the user's
// partition: create the order, create the idempotency record (its id
// comes from the key), and, for an order in a counted state (one written
// placed, as the sample data and the tests do; a checkout's is pending),
// the customerSummary with If-Match. Nothing is half-written, ever. A
// taken order id is ErrOrderExists and a taken key ErrKeyUsed (the batch
// reports the first operation that failed, so the order's comes first);
// a summary changed by a concurrent checkout is re-read and the batch
// retried (Retry). An order written in a state with an event (placed)
// writes that event in the batch too, from no status (a checkout's
// pending order has none).
func (r *Orders) Open(ctx context.Context, o domain.Order, idem domain.Idempotency) (domain.Order, error) {
	ttl := IdempotencyTTL
	idem.Meta = domain.Meta{ID: domain.IdempotencyID(idem.Key), Type: domain.TypeIdempotency, SchemaVersion: domain.SchemaVersion, TTL: &ttl}
	idem.UserID, idem.OrderID = o.UserID, o.ID
	orderDoc, err := encode(o)
	if err != nil {
		return domain.Order{}, err
	}
	idemDoc, err := encode(idem)
	if err != nil {
		return domain.Order{}, err
	}
	st, _ := domain.StateOf(o.Status)
	eventOp, hasEvent, err := r.eventOp(o, "")
	if err != nil {
		return domain.Order{}, err
	}
	var opened domain.Order
	err = Retry(ctx, func() error {
		ops := []store.BatchOp{{Kind: store.BatchCreate, Item: orderDoc}, {Kind: store.BatchCreate, Item: idemDoc}}
		sumAt := -1
		if st.Counted {
			sum, err := r.Summary(ctx, o.UserID)
			if err != nil {
				return err
			}
			etag := sum.ETag
			sum.AddOrder(o, o.CreatedAt)
			op, err := summaryOp(sum, etag)
			if err != nil {
				return err
			}
			sumAt = len(ops)
			ops = append(ops, op)
		}
		eventAt := -1
		if hasEvent {
			eventAt = len(ops)
			ops = append(ops, eventOp)
		}
		res, err := r.c.ExecuteBatch(ctx, o.UserID, ops)
		switch failed := firstFailed(res); {
		case err == nil:
			opened, err = Decode[domain.Order](res.Results[0].Item)
			return err
		case failed == 0 && domain.IsCode(err, domain.ECONFLICT):
			return ErrOrderExists
		case failed == 1 && domain.IsCode(err, domain.ECONFLICT):
			return ErrKeyUsed
		case failed == sumAt && sumAt > 0:
			return Lost(err) // the summary changed, or another first order created it
		case failed == eventAt && eventAt > 0 && domain.IsCode(err, domain.ECONFLICT):
			// The order's event is there without the order: its id was
			// used once (an order since deleted), as a taken order id is.
			return ErrOrderExists
		}
		return err
	})
	return opened, err
}

// ErrMoved is a move's lost race: the order is no longer the version the
// mover read (another worker, the sweeper or a person moved it first).
// The mover reads it again and carries on from what it finds.
var ErrMoved = domain.Errorf(domain.EPRECONDITION, "the order moved on meanwhile")

// Move writes o, read at version o.ETag and changed by the caller along
// one move of the workflow (domain.Order.Move), as ONE transactional
// batch in the user's partition: the order with If-Match on the version
// read, and what the move changes beside it. A move into a counted state
// (placed) adds the order to the customerSummary and one out of it
// (cancelled) takes it out, If-Match on the summary read; a move into
// rejected or expired deletes the idempotency record, so the key is free
// again, as after a refusal that wrote nothing. A move into a state with
// an event (domain.NewOrderEvent) creates the event last: the event is
// written exactly when the move is. ErrMoved when the order changed since
// it was read, or when the move's event exists already (its id derives
// from the number of moves: the same move committed before); a summary
// changed underneath is re-read and the batch retried (Retry).
func (r *Orders) Move(ctx context.Context, o domain.Order, from string) (domain.Order, error) {
	etag := o.ETag
	doc, err := encode(o)
	if err != nil {
		return domain.Order{}, err
	}
	was, _ := domain.StateOf(from)
	now, _ := domain.StateOf(o.Status)
	eventOp, hasEvent, err := r.eventOp(o, from)
	if err != nil {
		return domain.Order{}, err
	}
	var (
		moved   domain.Order
		keyGone bool // the key's record is gone already (its ttl, a repair)
	)
	err = Retry(ctx, func() error {
		ops := []store.BatchOp{{Kind: store.BatchReplace, ID: o.ID, Item: doc, IfMatch: etag}}
		sumAt, idemAt := -1, -1
		if was.Counted != now.Counted {
			sum, err := r.Summary(ctx, o.UserID)
			if err != nil {
				return err
			}
			sumETag := sum.ETag
			if now.Counted {
				sum.AddOrder(o, o.LastUpdated)
			} else {
				sum.RemoveOrder(o, o.LastUpdated)
			}
			op, err := summaryOp(sum, sumETag)
			if err != nil {
				return err
			}
			sumAt = len(ops)
			ops = append(ops, op)
		}
		if now.Name == domain.StatusRejected || now.Name == domain.StatusExpired {
			if o.IdempotencyKey != "" && !keyGone {
				idemAt = len(ops)
				ops = append(ops, store.BatchOp{Kind: store.BatchDelete, ID: domain.IdempotencyID(o.IdempotencyKey)})
			}
		}
		eventAt := -1
		if hasEvent {
			eventAt = len(ops)
			ops = append(ops, eventOp)
		}
		res, err := r.c.ExecuteBatch(ctx, o.UserID, ops)
		switch failed := firstFailed(res); {
		case err == nil:
			moved, err = Decode[domain.Order](res.Results[0].Item)
			return err
		case failed == 0 && (domain.IsCode(err, domain.EPRECONDITION) || domain.IsCode(err, domain.ENOTFOUND)):
			return ErrMoved
		case failed == eventAt && eventAt > 0 && domain.IsCode(err, domain.ECONFLICT):
			return ErrMoved
		case failed == sumAt && sumAt > 0:
			// The summary changed (412), or another first checkout
			// created it (409): the summary is the server's own
			// business, so its race is always retried.
			return Lost(err)
		case failed == idemAt && idemAt > 0 && domain.IsCode(err, domain.ENOTFOUND):
			keyGone = true
			return Lost(err)
		}
		return err
	})
	return moved, err
}

// eventOp is the create of the event a move of o from status from
// writes (from "" for an order opened in its status), and whether there
// is one: none when o's status writes no event, or the events are off.
func (r *Orders) eventOp(o domain.Order, from string) (store.BatchOp, bool, error) {
	ev, ok := domain.NewOrderEvent(o, from)
	if !ok || r.noEvents {
		return store.BatchOp{}, false, nil
	}
	doc, err := encode(ev)
	if err != nil {
		return store.BatchOp{}, false, err
	}
	return store.BatchOp{Kind: store.BatchCreate, Item: doc}, true, nil
}

// firstFailed is the index of the batch operation that failed, -1 if none
// did (or the batch never ran).
func firstFailed(res store.BatchResponse) int {
	for i, r := range res.Results {
		if r.Code != "" && r.Code != store.CodeFailedDependency {
			return i
		}
	}
	return -1
}

// summaryOp writes the summary: Replace with If-Match on the version read,
// or Create when the user had none (so two first checkouts cannot both
// create it).
func summaryOp(s domain.CustomerSummary, etag string) (store.BatchOp, error) {
	doc, err := encode(s)
	if err != nil {
		return store.BatchOp{}, err
	}
	if etag == "" {
		return store.BatchOp{Kind: store.BatchCreate, Item: doc}, nil
	}
	return store.BatchOp{Kind: store.BatchReplace, ID: domain.CustomerSummaryID, Item: doc, IfMatch: etag}, nil
}

// SetStatus is a person's move of an order (ship, deliver, cancel:
// domain.Order.SetStatus) with the client's If-Match (see Precondition),
// written by Move. Without an _etag from the client, a lost race is
// read again and retried; with one, it is the client's 412.
func (r *Orders) SetStatus(ctx context.Context, userID, orderID string, ifMatch Precondition, to string, now time.Time) (domain.Order, error) {
	var out domain.Order
	err := Retry(ctx, func() error {
		o, err := r.Get(ctx, userID, orderID)
		if err != nil {
			return err
		}
		if ifMatch != "" && !etagMatches(ifMatch, o.ETag) {
			return domain.Errorf(domain.EPRECONDITION, "order %s was changed by someone else after you read it: read it again, then retry", orderID)
		}
		from := o.Status
		if err := o.SetStatus(to, now); err != nil {
			return err
		}
		out, err = r.Move(ctx, o, from)
		switch {
		case errors.Is(err, ErrMoved) && serverRetries(ifMatch):
			return Lost(err)
		case errors.Is(err, ErrMoved):
			return domain.Errorf(domain.EPRECONDITION, "order %s was changed by someone else after you read it: read it again, then retry", orderID)
		}
		return err
	})
	return out, err
}

// PutSummary writes the user's customer summary whole: a create when
// ifMatch is empty (ECONFLICT if one appeared), else a replace of that
// version (EPRECONDITION if a checkout or cancel changed it since). The
// audit's repair; checkouts and cancels change the summary in their batch.
func (r *Orders) PutSummary(ctx context.Context, s domain.CustomerSummary, ifMatch string, now time.Time) error {
	s.LastUpdated = now.UTC()
	s.ETag, s.TS = "", 0
	var err error
	if ifMatch == "" {
		_, err = CreateDoc(ctx, r.c, s.UserID, s)
	} else {
		_, err = ReplaceDoc(ctx, r.c, s.UserID, s.ID, s, &store.WriteOptions{IfMatch: ifMatch})
	}
	return err
}

// InProgress returns one page of the orders in status (one of the
// workflow's in-progress states), across every user: the sweeper's one
// cross-partition query. Few orders are in progress at any moment, and
// the query reads only those (the index on status), so a pass costs
// little however many orders the shop holds.
func (r *Orders) InProgress(ctx context.Context, status string, limit int, continuation string) ([]domain.Order, string, error) {
	return queryPage[domain.Order](ctx, r.c, store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder},
			{Path: "status", Op: store.OpEqual, Value: status},
		},
		Limit:        limit,
		Continuation: continuation,
	})
}
