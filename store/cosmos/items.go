package cosmos

import (
	"context"
	"encoding/json"
	"math"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Container is one Cosmos container of a Store.
type Container struct {
	name  string
	c     *azcosmos.ContainerClient
	err   error // from NewContainer: every operation returns it
	store *Store
}

// op names an operation for error messages: "read products/p1".
func (c *Container) op(verb, id string) string {
	if id == "" {
		return verb + " " + c.name
	}
	return verb + " " + c.name + "/" + id
}

// itemOptions asks for the stored item back on writes (the port returns
// it) and sets If-Match for optimistic concurrency (sdk-etag-concurrency).
func itemOptions(opts *store.WriteOptions) *azcosmos.ItemOptions {
	o := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}
	if opts != nil && opts.IfMatch != "" {
		etag := azcore.ETag(opts.IfMatch)
		o.IfMatchEtag = &etag
	}
	return o
}

// itemResponse converts a point operation's result, or its error with the
// Request Units the failure still cost.
func itemResponse(op string, r azcosmos.ItemResponse, err error) (store.ItemResponse, error) {
	if err != nil {
		return store.ItemResponse{RequestCharge: failedCharge(err)}, mapError(op, err)
	}
	out := store.ItemResponse{ETag: string(r.ETag), RequestCharge: responseCharge(r.Response)}
	item, cerr := fromCosmos(r.Value, r.ETag)
	if cerr != nil {
		return out, cerr
	}
	out.Item = item
	return out, nil
}

// Read is a point read (query-point-reads): about 1 RU per KB, the
// cheapest call Cosmos has.
func (c *Container) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	if err := c.check(pk, id); err != nil {
		return store.ItemResponse{}, err
	}
	r, err := c.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
	return itemResponse(c.op("read", id), r, err)
}

// ReadIfNoneMatch is a point read sent with If-None-Match: Cosmos answers
// 304 with no body when the item's _etag is etag, which saves sending the
// document (the charge is the read's). azcosmos has no option for the
// header on a read, so it rides on the request's context, as azcore lets
// any call add one.
func (c *Container) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	if etag == "" {
		return c.Read(ctx, pk, id)
	}
	if err := c.check(pk, id); err != nil {
		return store.ItemResponse{}, err
	}
	ctx = policy.WithHTTPHeader(ctx, http.Header{"If-None-Match": {etag}})
	r, err := c.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
	if err == nil && r.RawResponse != nil && r.RawResponse.StatusCode == http.StatusNotModified {
		return store.ItemResponse{ETag: etag, NotModified: true, RequestCharge: responseCharge(r.Response)}, nil
	}
	return itemResponse(c.op("read", id), r, err)
}

// Create stores a new item; a duplicate id in pk is ECONFLICT.
func (c *Container) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	id, err := c.checkWrite(pk, item)
	if err != nil {
		return store.ItemResponse{}, err
	}
	r, err := c.c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), item, itemOptions(nil))
	return itemResponse(c.op("create", id), r, err)
}

// Replace overwrites an existing item, with If-Match when opts says so.
func (c *Container) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	bodyID, err := c.checkWrite(pk, item)
	if err != nil {
		return store.ItemResponse{}, err
	}
	if bodyID != id {
		return store.ItemResponse{}, domain.Errorf(domain.EINVALID, "replace %s/%s: the item's id is %q", c.name, id, bodyID)
	}
	r, err := c.c.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(pk), id, item, itemOptions(opts))
	return itemResponse(c.op("replace", id), r, err)
}

// Upsert creates or replaces; Cosmos applies If-Match to the replace only
// and creates a missing item whatever it says (the port's rule).
func (c *Container) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	id, err := c.checkWrite(pk, item)
	if err != nil {
		return store.ItemResponse{}, err
	}
	r, err := c.c.UpsertItem(ctx, azcosmos.NewPartitionKeyString(pk), item, itemOptions(opts))
	return itemResponse(c.op("upsert", id), r, err)
}

// Patch is a partial document update: only the operations travel, and
// the service applies them atomically (sdk-patch-counter-increment). A
// Condition travels as the patch's filter predicate; the service answers
// 412 when it does not hold, which maps to EPRECONDITION.
func (c *Container) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	if err := c.check(pk, id); err != nil {
		return store.ItemResponse{}, err
	}
	var pre store.PatchOptions
	if opts != nil {
		pre = *opts
	}
	patch, err := conditionalPatch(ops, pre.Condition)
	if err != nil {
		return store.ItemResponse{}, err
	}
	r, err := c.c.PatchItem(ctx, azcosmos.NewPartitionKeyString(pk), id, patch, itemOptions(&store.WriteOptions{IfMatch: pre.IfMatch}))
	return itemResponse(c.op("patch", id), r, err)
}

// Delete removes the item. It will not appear on the change feed
// (latest-version mode), which is why the shop soft-deletes copies' sources.
func (c *Container) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := c.check(pk, id); err != nil {
		return store.ItemResponse{}, err
	}
	r, err := c.c.DeleteItem(ctx, azcosmos.NewPartitionKeyString(pk), id, itemOptions(opts))
	out, err := itemResponse(c.op("delete", id), r, err)
	out.Item = nil
	return out, err
}

func (c *Container) check(pk, id string) error {
	if c.err != nil {
		return mapError("container "+c.name, c.err)
	}
	if err := checkPK(pk); err != nil {
		return err
	}
	return checkID(id)
}

func (c *Container) checkWrite(pk string, item []byte) (string, error) {
	if c.err != nil {
		return "", mapError("container "+c.name, c.err)
	}
	if err := checkPK(pk); err != nil {
		return "", err
	}
	return checkItem(item)
}

// patchOperations converts the port's patch to the SDK's. At most 10
// operations per patch is Cosmos's rule (400 past it), checked here as
// the embedded store checks it.
func patchOperations(ops []store.PatchOp) (azcosmos.PatchOperations, error) {
	var p azcosmos.PatchOperations
	if len(ops) == 0 {
		return p, domain.Errorf(domain.EINVALID, "patch: no operations")
	}
	if len(ops) > store.MaxPatchOps {
		return p, domain.Errorf(domain.EINVALID, "patch: %d operations, more than the %d Cosmos allows", len(ops), store.MaxPatchOps)
	}
	for i, op := range ops {
		if len(op.Path) < 2 || op.Path[0] != '/' {
			return p, domain.Errorf(domain.EINVALID, "patch operation %d: path %q is not a JSON pointer", i, op.Path)
		}
		switch op.Op {
		case store.PatchSet:
			p.AppendSet(op.Path, patchValue(op.Value))
		case store.PatchReplace:
			p.AppendReplace(op.Path, patchValue(op.Value))
		case store.PatchAdd:
			p.AppendAdd(op.Path, patchValue(op.Value))
		case store.PatchRemove:
			p.AppendRemove(op.Path)
		case store.PatchIncrement:
			n, ok := wholeNumber(op.Value)
			if !ok {
				return p, domain.Errorf(domain.EINVALID, "patch operation %d: incr needs a whole number, got %v", i, op.Value)
			}
			p.AppendIncrement(op.Path, n)
		default:
			return p, domain.Errorf(domain.EINVALID, "patch operation %d: unknown op %q", i, op.Op)
		}
	}
	return p, nil
}

// patchValue is the value of a set, replace or add as the SDK must send
// it: nil is JSON null, which Cosmos stores as the embedded store does.
// azcosmos tags the value omitempty, so a nil would leave "value" out of
// the operation, and Cosmos would refuse it instead.
func patchValue(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// conditionalPatch is patchOperations with cond, when there is one, as
// the patch's filter predicate (see renderCondition).
func conditionalPatch(ops []store.PatchOp, cond store.Condition) (azcosmos.PatchOperations, error) {
	p, err := patchOperations(ops)
	if err != nil {
		return p, err
	}
	sql, err := renderCondition(cond)
	if err != nil {
		return p, err
	}
	setCondition(&p, sql)
	return p, nil
}

// wholeNumber accepts the integer types and integral floats (what a JSON
// decode of a number gives), as the SDK increments by int64 only.
func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}
