package costlab

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// This file is the store wrapper the workflow measure runs on: it writes
// down every store call made under a context that carries a callLog, in
// the order the calls returned, so that the calls can be attributed to
// the workflow's moves afterwards. The Meter says what a unit of work
// cost; the log says which call cost what, and which move a write of an
// order made (the status it wrote).

// call is one store call as the recorder saw it.
type call struct {
	Container string
	// PK is the partition key the call named ("" for a cross-partition
	// query and a feed read): the logical partition it charged.
	PK string
	// Op is read, create, replace, upsert, patch, delete, batch, query
	// or feed.
	Op string
	// RU is the call's RequestCharge, as the response gave it.
	RU float64
	// Code is the domain code of a call that failed ("" if it did not):
	// a 404 or a refused condition is still charged.
	Code string
	// Status is, for a write to the orders container, the status of the
	// order it wrote (decoded from the item's type and status, or the
	// patch of /status); "" for any other call.
	Status string
	// Sent is the bytes the call sent: the items and patch operations of
	// a write, nothing for a read.
	Sent int
}

// write reports whether the call is a write.
func (c call) write() bool {
	switch c.Op {
	case "create", "replace", "upsert", "patch", "delete", "batch":
		return true
	}
	return false
}

// key names the call for the per-move breakdown: container, operation,
// the status an order write moved to, and the code of a failed call.
func (c call) key() string {
	k := c.Container + " " + c.Op
	if c.Status != "" {
		k += " → " + c.Status
	}
	if c.Code != "" {
		k += fmt.Sprintf(" (%s)", c.Code)
	}
	return k
}

// callLog collects the calls of one unit of work; calls made at once
// (a checkout's lines run concurrently) are appended as they return.
type callLog struct {
	mu    sync.Mutex
	calls []call
}

type callLogKey struct{}

// withCallLog returns a context whose store calls the recorder logs.
func withCallLog(ctx context.Context) (context.Context, *callLog) {
	l := new(callLog)
	return context.WithValue(ctx, callLogKey{}, l), l
}

func (l *callLog) list() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]call(nil), l.calls...)
}

// recording wraps s so that every call made under a withCallLog context
// is logged there; calls under any other context pass through unseen.
func recording(s store.Store) store.Store { return recordingStore{s} }

type recordingStore struct{ store.Store }

func (s recordingStore) Container(name string) store.Container {
	return recordingContainer{name: name, c: s.Store.Container(name)}
}

type recordingContainer struct {
	name string
	c    store.Container
}

// note logs one call: items are what a write sent (each item, or the
// JSON of its patch operations), in which an order's status is looked
// for when the container is orders.
func (r recordingContainer) note(ctx context.Context, op, pk string, ru float64, err error, items ...[]byte) {
	l, _ := ctx.Value(callLogKey{}).(*callLog)
	if l == nil {
		return
	}
	c := call{Container: r.name, PK: pk, Op: op, RU: ru, Code: domain.ErrorCode(err)}
	for _, it := range items {
		c.Sent += len(it)
		if r.name == store.OrdersContainer && c.Status == "" {
			c.Status = orderStatus(it)
		}
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// orderStatus is the status an item written to orders gives its order:
// the item's status when it is an order, or the value of a patch of
// /status; "" for anything else (the key's record, the summary).
func orderStatus(item []byte) string {
	var doc struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}
	if json.Unmarshal(item, &doc) == nil && doc.Type == domain.TypeOrder {
		return doc.Status
	}
	var ops []store.PatchOp
	if json.Unmarshal(item, &ops) == nil {
		for _, op := range ops {
			if s, ok := op.Value.(string); ok && op.Path == "/status" {
				return s
			}
		}
	}
	return ""
}

func patchBytes(ops []store.PatchOp) []byte {
	b, _ := json.Marshal(ops)
	return b
}

func (r recordingContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	resp, err := r.c.Read(ctx, pk, id)
	r.note(ctx, "read", pk, resp.RequestCharge, err)
	return resp, err
}

func (r recordingContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	resp, err := r.c.ReadIfNoneMatch(ctx, pk, id, etag)
	r.note(ctx, "read", pk, resp.RequestCharge, err)
	return resp, err
}

func (r recordingContainer) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	resp, err := r.c.Create(ctx, pk, item)
	r.note(ctx, "create", pk, resp.RequestCharge, err, item)
	return resp, err
}

func (r recordingContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	resp, err := r.c.Replace(ctx, pk, id, item, opts)
	r.note(ctx, "replace", pk, resp.RequestCharge, err, item)
	return resp, err
}

func (r recordingContainer) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	resp, err := r.c.Upsert(ctx, pk, item, opts)
	r.note(ctx, "upsert", pk, resp.RequestCharge, err, item)
	return resp, err
}

func (r recordingContainer) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	resp, err := r.c.Patch(ctx, pk, id, ops, opts)
	r.note(ctx, "patch", pk, resp.RequestCharge, err, patchBytes(ops))
	return resp, err
}

func (r recordingContainer) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	resp, err := r.c.Delete(ctx, pk, id, opts)
	r.note(ctx, "delete", pk, resp.RequestCharge, err)
	return resp, err
}

func (r recordingContainer) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	resp, err := r.c.ExecuteBatch(ctx, pk, ops)
	var items [][]byte
	for _, op := range ops {
		if op.Item != nil {
			items = append(items, op.Item)
		}
		if op.Patch != nil {
			items = append(items, patchBytes(op.Patch))
		}
	}
	r.note(ctx, "batch", pk, resp.RequestCharge, err, items...)
	return resp, err
}

func (r recordingContainer) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	page, err := r.c.Query(ctx, q)
	r.note(ctx, "query", q.PartitionKey, page.RequestCharge, err)
	return page, err
}

func (r recordingContainer) ReadFeedRanges(ctx context.Context) ([]store.FeedRange, error) {
	return r.c.ReadFeedRanges(ctx) // no charge, and no operation the Meter counts
}

func (r recordingContainer) ReadChangeFeed(ctx context.Context, fr store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	page, err := r.c.ReadChangeFeed(ctx, fr, continuation, maxItems)
	r.note(ctx, "feed", "", page.RequestCharge, err)
	return page, err
}
