package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// ExecuteBatch runs ops as one transaction in the logical partition pk
// (Cosmos's transactional batch). A failed batch is NOT a Go error from the
// SDK: the response says Success=false and each operation's status, 424
// for those the failure rolled back. Here it becomes Committed=false, the
// per-operation codes, and an error with the first real failure's code.
func (c *Container) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	if c.err != nil {
		return store.BatchResponse{}, mapError("container "+c.name, c.err)
	}
	if err := checkPK(pk); err != nil {
		return store.BatchResponse{}, err
	}
	b, err := c.buildBatch(pk, ops)
	if err != nil {
		return store.BatchResponse{}, err
	}
	r, err := c.c.ExecuteTransactionalBatch(ctx, b, &azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		// Rejected as a whole (400, 413, 429 past the budget, ...).
		return store.BatchResponse{RequestCharge: failedCharge(err)}, mapError(c.op("batch", ""), err)
	}
	return c.batchResponse(ops, r)
}

func (c *Container) buildBatch(pk string, ops []store.BatchOp) (azcosmos.TransactionalBatch, error) {
	b := c.c.NewTransactionalBatch(azcosmos.NewPartitionKeyString(pk))
	if len(ops) == 0 || len(ops) > store.MaxBatchOps {
		return b, domain.Errorf(domain.EINVALID, "a batch holds 1..%d operations, got %d", store.MaxBatchOps, len(ops))
	}
	// Checked here, not left to the service: its 413 would cost a round
	// trip and name no limit.
	if n := store.BatchSize(ops); n > store.MaxBatchBytes {
		return b, domain.Errorf(domain.ETOOLARGE, "the batch is %d bytes, over the %d byte limit of a transactional batch", n, store.MaxBatchBytes)
	}
	for i, op := range ops {
		var opts *azcosmos.TransactionalBatchItemOptions
		if op.IfMatch != "" {
			etag := azcore.ETag(op.IfMatch)
			opts = &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag}
		}
		if err := checkBatchOp(op); err != nil {
			return b, domain.Errorf(domain.EINVALID, "batch operation %d (%s): %s", i, op.Kind, domain.ErrorMessage(err))
		}
		switch op.Kind {
		case store.BatchCreate:
			if op.IfMatch != "" {
				return b, domain.Errorf(domain.EINVALID, "batch operation %d: create takes no If-Match", i)
			}
			b.CreateItem(op.Item, nil)
		case store.BatchReplace:
			b.ReplaceItem(op.ID, op.Item, opts)
		case store.BatchUpsert:
			b.UpsertItem(op.Item, opts)
		case store.BatchDelete:
			b.DeleteItem(op.ID, opts)
		case store.BatchPatch:
			patch, err := conditionalPatch(op.Patch, op.Condition)
			if err != nil {
				return b, domain.Errorf(domain.EINVALID, "batch operation %d (patch): %s", i, domain.ErrorMessage(err))
			}
			b.PatchItem(op.ID, patch, opts)
		default:
			return b, domain.Errorf(domain.EINVALID, "batch operation %d: unknown kind %q", i, op.Kind)
		}
	}
	return b, nil
}

// checkBatchOp validates the id and item an operation kind needs.
func checkBatchOp(op store.BatchOp) error {
	if op.Kind != store.BatchPatch && (len(op.Patch) > 0 || len(op.Condition) > 0) {
		return domain.Errorf(domain.EINVALID, "patch operations and a condition belong to a patch only")
	}
	needsItem := op.Kind == store.BatchCreate || op.Kind == store.BatchReplace || op.Kind == store.BatchUpsert
	needsID := op.Kind != store.BatchCreate && op.Kind != store.BatchUpsert
	if needsItem {
		id, err := checkItem(op.Item)
		if err != nil {
			return err
		}
		if op.Kind == store.BatchReplace && op.ID != "" && op.ID != id {
			return domain.Errorf(domain.EINVALID, "the item's id is %q, not %q", id, op.ID)
		}
		if op.Kind == store.BatchReplace && op.ID == "" {
			return domain.Errorf(domain.EINVALID, "replace needs the id")
		}
		return nil
	}
	if needsID {
		return checkID(op.ID)
	}
	return nil
}

// batchResponse converts the SDK's result. It is a pure function of the
// response so the 424 handling is tested without a server.
func (c *Container) batchResponse(ops []store.BatchOp, r azcosmos.TransactionalBatchResponse) (store.BatchResponse, error) {
	out := store.BatchResponse{
		Committed:     r.Success,
		RequestCharge: responseCharge(r.Response),
		Results:       make([]store.BatchResult, len(r.OperationResults)),
	}
	var first error
	replies := batchReplies(r)
	for i, res := range r.OperationResults {
		status := int(res.StatusCode)
		br := store.BatchResult{StatusCode: status, ETag: string(res.ETag)}
		item, err := fromCosmos(res.ResourceBody, res.ETag)
		if err != nil {
			return out, err
		}
		br.Item = item
		if br.ETag == "" && item != nil {
			br.ETag = etagOf(item)
		}
		switch {
		case status >= 200 && status < 300:
		case status == http.StatusFailedDependency:
			br.Code = store.CodeFailedDependency
		default:
			kind := "operation"
			if i < len(ops) {
				kind = ops[i].Kind
			}
			rep := reply{status: status}
			if i < len(replies) {
				rep = replies[i]
			}
			e := statusError(fmt.Sprintf("batch %s operation %d (%s)", c.name, i, kind), rep)
			br.Code = e.Code
			if first == nil {
				first = e
			}
		}
		out.Results[i] = br
	}
	if !r.Success && first == nil {
		first = domain.Errorf(domain.EINTERNAL, "batch %s: not committed, and no operation says why", c.name)
	}
	return out, first
}

// batchReplies reads each operation's reply from a batch's response. The
// SDK's results keep only the status: a failed operation's substatus
// (1014: its logical partition is full) and the wait a throttled one
// names (retryAfterMilliseconds) are in the body alone, which azcore
// keeps after the SDK read it. A throttled operation that names no wait
// takes the response's own x-ms-retry-after-ms, if any. Without the raw
// response (or with a body that does not parse) the replies are the
// statuses alone.
func batchReplies(r azcosmos.TransactionalBatchResponse) []reply {
	out := make([]reply, len(r.OperationResults))
	for i, res := range r.OperationResults {
		out[i] = reply{status: int(res.StatusCode)}
	}
	if r.RawResponse == nil {
		return out
	}
	var results []struct {
		SubStatusCode          json.Number `json:"subStatusCode"`
		RetryAfterMilliseconds json.Number `json:"retryAfterMilliseconds"`
	}
	body, err := runtime.Payload(r.RawResponse)
	if err != nil || json.Unmarshal(body, &results) != nil || len(results) != len(out) {
		return out
	}
	whole := retryAfter(r.RawResponse.Header)
	for i, res := range results {
		if res.SubStatusCode != "" && res.SubStatusCode != "0" {
			out[i].substatus = res.SubStatusCode.String()
		}
		if ms, err := res.RetryAfterMilliseconds.Float64(); err == nil && ms > 0 {
			out[i].retryAfter = time.Duration(ms * float64(time.Millisecond))
		} else if out[i].status == http.StatusTooManyRequests {
			out[i].retryAfter = whole
		}
	}
	return out
}
