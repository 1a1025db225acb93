package embedded

import (
	"context"
	"errors"
	"net/http"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// errRolledBack aborts the bbolt transaction of a batch that failed after
// writing: its earlier operations must not commit.
var errRolledBack = errors.New("batch rolled back")

// ExecuteBatch runs ops in ONE bbolt transaction, all or nothing (the
// group commit may share it with other writes): a transactional batch is
// scoped to one logical partition (one partition key), so it is atomic
// there and refused across keys (every item must carry pk).
func (c *Container) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	st, p, err := c.begin(ctx, pk)
	if err != nil {
		return store.BatchResponse{}, err
	}
	defer st.release()
	if len(ops) == 0 {
		return store.BatchResponse{}, domain.Errorf(domain.EINVALID, "batch has no operations")
	}
	if len(ops) > store.MaxBatchOps {
		return store.BatchResponse{}, domain.Errorf(domain.EINVALID, "batch has %d operations, more than %d", len(ops), store.MaxBatchOps)
	}
	if n := store.BatchSize(ops); n > store.MaxBatchBytes {
		return store.BatchResponse{}, domain.Errorf(domain.ETOOLARGE, "batch is %d bytes, more than the %d byte limit of a transactional batch", n, store.MaxBatchBytes)
	}
	var resp store.BatchResponse
	var failed error
	err = c.s.update(func(tx *bolt.Tx) error {
		// A rerun of the group commit starts over (see Store.update).
		resp = store.BatchResponse{Results: make([]store.BatchResult, len(ops))}
		failed = nil
		for i, op := range ops {
			res, charge, err := c.batchOp(tx, st, pk, op)
			resp.RequestCharge += charge
			if err != nil {
				failed = err
				resp.RequestCharge += failedCharge(err)
				for j := range resp.Results {
					resp.Results[j] = store.BatchResult{StatusCode: http.StatusFailedDependency, Code: store.CodeFailedDependency}
				}
				resp.Results[i] = store.BatchResult{StatusCode: statusOf(err), Code: domain.ErrorCode(err)}
				if i == 0 {
					// Nothing written yet: refusing commits nothing and
					// leaves the other writes of the group committed.
					return err
				}
				return errRolledBack
			}
			resp.Results[i] = res
		}
		return nil
	})
	resp.RequestCharge = round2(resp.RequestCharge)
	if err == nil || failed != nil {
		// Committed, or refused by one of its operations, the batch ran:
		// it costs what it did.
		c.s.charge(st, resp.RequestCharge, p)
	}
	if failed != nil {
		return resp, storeError(failed)
	}
	if err != nil {
		return store.BatchResponse{}, storeError(err)
	}
	resp.Committed = true
	return resp, nil
}

// batchOp runs one operation inside the batch's transaction.
func (c *Container) batchOp(tx *bolt.Tx, st *containerState, pk string, op store.BatchOp) (store.BatchResult, float64, error) {
	if op.Kind != store.BatchPatch && (len(op.Patch) > 0 || len(op.Condition) > 0) {
		return store.BatchResult{}, 0, domain.Errorf(domain.EINVALID, "batch operation %s: patch operations and a condition belong to a patch only", op.Kind)
	}
	switch op.Kind {
	case store.BatchCreate, store.BatchReplace, store.BatchUpsert:
		if op.Kind == store.BatchCreate && op.IfMatch != "" {
			// As the Cosmos adapter: an If-Match names a version of an
			// item that exists, which a create never replaces.
			return store.BatchResult{}, 0, domain.Errorf(domain.EINVALID, "batch operation create takes no If-Match")
		}
		if op.Kind == store.BatchReplace {
			if err := validateID(op.ID); err != nil {
				return store.BatchResult{}, 0, err
			}
		}
		w, err := c.prepare(st, pk, op.ID, op.Item)
		if err != nil {
			return store.BatchResult{}, 0, err
		}
		mode := modeUpsert
		switch op.Kind {
		case store.BatchCreate:
			mode = modeCreate
		case store.BatchReplace:
			mode = modeReplace
		}
		created, err := c.commit(tx, st, pk, &w, mode, op.IfMatch)
		if err != nil {
			return store.BatchResult{}, 0, err
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		return store.BatchResult{StatusCode: status, ETag: w.etag, Item: w.doc}, w.charge, nil
	case store.BatchPatch:
		// The same patch as Container.Patch, condition included: a
		// condition that does not hold fails the batch like a stale
		// If-Match, before this operation writes anything.
		if err := validateID(op.ID); err != nil {
			return store.BatchResult{}, 0, err
		}
		ops, err := st.checkPatch(op.Patch)
		if err != nil {
			return store.BatchResult{}, 0, err
		}
		cond, err := op.Condition.Check()
		if err != nil {
			return store.BatchResult{}, 0, err
		}
		w, err := c.patchTx(tx, st, pk, op.ID, ops, store.PatchOptions{IfMatch: op.IfMatch, Condition: cond})
		if err != nil {
			return store.BatchResult{}, 0, err
		}
		return store.BatchResult{StatusCode: http.StatusOK, ETag: w.etag, Item: w.doc}, w.charge, nil
	case store.BatchDelete:
		if err := validateID(op.ID); err != nil {
			return store.BatchResult{}, 0, err
		}
		charge, err := c.remove(tx, st, pk, op.ID, op.IfMatch)
		if err != nil {
			return store.BatchResult{}, 0, err
		}
		return store.BatchResult{StatusCode: http.StatusNoContent}, charge, nil
	}
	return store.BatchResult{}, 0, domain.Errorf(domain.EINVALID, "unknown batch operation %q", op.Kind)
}

// statusOf is the HTTP status Cosmos gives a failed batch operation.
func statusOf(err error) int {
	switch domain.ErrorCode(err) {
	case domain.ENOTFOUND:
		return http.StatusNotFound
	case domain.ECONFLICT:
		return http.StatusConflict
	case domain.EPRECONDITION:
		return http.StatusPreconditionFailed
	case domain.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case domain.EINVALID:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
