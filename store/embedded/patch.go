package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Patch applies ops to an existing item atomically (Cosmos partial
// document update): the read, the If-Match and Condition checks, the
// changes and the write are one transaction, so concurrent patches never
// lose each other's increments and two conditional takers of the last
// unit cannot both succeed.
func (c *Container) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	var pre store.PatchOptions
	if opts != nil {
		pre = *opts
	}
	if err := validateID(id); err != nil {
		return store.ItemResponse{}, err
	}
	st, p, err := c.begin(ctx, pk)
	if err != nil {
		return store.ItemResponse{}, err
	}
	defer st.release()
	if ops, err = st.checkPatch(ops); err == nil {
		pre.Condition, err = pre.Condition.Check()
	}
	if err != nil {
		return store.ItemResponse{}, err
	}
	var w pending
	err = c.s.update(func(tx *bolt.Tx) error {
		var err error
		w, err = c.patchTx(tx, st, pk, id, ops, pre)
		return err
	})
	if err != nil {
		return c.failed(st, p, err)
	}
	c.s.charge(st, w.charge, p)
	return store.ItemResponse{Item: w.doc, ETag: w.etag, RequestCharge: w.charge}, nil
}

// patchTx patches inside tx. pre.Condition must have passed Check. Every
// refusal (missing, stale, condition false, bad path) happens before the
// write, as Store.update requires of a *domain.Error.
func (c *Container) patchTx(tx *bolt.Tx, st *containerState, pk, id string, ops []store.PatchOp, pre store.PatchOptions) (pending, error) {
	pt := st.partitionTx(tx, st.partitionFor(pk))
	h, doc, exists, err := c.load(st, pt.items, itemKey(nil, pk, id))
	if err != nil {
		return pending{}, err
	}
	if !exists {
		return pending{}, notFound(id, pk)
	}
	if match := pre.IfMatch; match != "" && string(h.etag) != match {
		return pending{}, domain.Errorf(domain.EPRECONDITION, "item %s has changed: If-Match %s, _etag now %s", id, match, h.etag)
	}
	m, err := decodeDoc(doc)
	if err != nil {
		return pending{}, err
	}
	if !holds(m, pre.Condition) {
		return pending{}, domain.Errorf(domain.EPRECONDITION, "item %s: the condition %s does not hold", id, pre.Condition)
	}
	for _, op := range ops {
		var node any = m
		if node, err = applyOp(node, splitPath(op.Path), op, op.Path); err != nil {
			return pending{}, err
		}
	}
	w, err := c.prepareDoc(st, pk, id, m)
	if err != nil {
		return pending{}, err
	}
	if err := c.checkUnique(pt.items, st, pk, w); err != nil {
		return pending{}, err
	}
	if err := w.price(st, doc, true); err != nil {
		return pending{}, err
	}
	return w, c.put(pt, st, pk, h.lsn, doc, w)
}

// checkPatch validates ops before any work and returns them with values
// normalized to what JSON decoding yields (json.Number for numbers).
func (st *containerState) checkPatch(ops []store.PatchOp) ([]store.PatchOp, error) {
	if len(ops) == 0 {
		return nil, domain.Errorf(domain.EINVALID, "patch has no operations")
	}
	if len(ops) > store.MaxPatchOps {
		return nil, domain.Errorf(domain.EINVALID, "patch has %d operations, more than the %d Cosmos allows", len(ops), store.MaxPatchOps)
	}
	pkPath := "/" + strings.Join(st.pkPath, "/")
	out := make([]store.PatchOp, len(ops))
	for i, op := range ops {
		switch op.Op {
		case store.PatchSet, store.PatchReplace, store.PatchAdd, store.PatchRemove, store.PatchIncrement:
		default:
			return nil, domain.Errorf(domain.EINVALID, "patch operation %d: unknown op %q", i, op.Op)
		}
		if len(splitPath(op.Path)) == 0 {
			return nil, domain.Errorf(domain.EINVALID, "patch operation %d: path %q is not a JSON pointer like /name", i, op.Path)
		}
		// Cosmos refuses to patch the id or the partition key: the item
		// would move to another address.
		if op.Path == "/id" || op.Path == pkPath || strings.HasPrefix(pkPath, op.Path+"/") {
			return nil, domain.Errorf(domain.EINVALID, "patch operation %d: %s cannot be changed", i, op.Path)
		}
		raw, err := json.Marshal(op.Value)
		if err != nil {
			return nil, domain.Errorf(domain.EINVALID, "patch operation %d: value: %v", i, err)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&op.Value); err != nil {
			return nil, domain.Errorf(domain.EINVALID, "patch operation %d: value: %v", i, err)
		}
		if op.Op == store.PatchIncrement {
			// The port increments by whole numbers only: azcosmos's
			// AppendIncrement takes an int64.
			n, isNum := op.Value.(json.Number)
			if !isNum {
				return nil, domain.Errorf(domain.EINVALID, "patch operation %d: incr needs a whole number, got %v", i, op.Value)
			}
			if _, err := n.Int64(); err != nil {
				return nil, domain.Errorf(domain.EINVALID, "patch operation %d: incr needs a whole number, got %v", i, n)
			}
		}
		out[i] = op
	}
	return out, nil
}

// applyOp applies op at path below node and returns the new node (arrays
// change length, so the parent stores what comes back).
func applyOp(node any, path []string, op store.PatchOp, full string) (any, error) {
	seg := path[0]
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[seg]
		if len(path) > 1 {
			if !ok {
				return nil, badPath(full, "a parent does not exist")
			}
			v, err := applyOp(child, path[1:], op, full)
			n[seg] = v
			return n, err
		}
		return n, applyToObject(n, seg, ok, op, full)
	case []any:
		i, err := arrayIndex(seg, len(n), op.Op == store.PatchAdd || op.Op == store.PatchSet)
		if err != nil {
			return nil, badPath(full, err.Error())
		}
		if len(path) > 1 {
			if i >= len(n) {
				return nil, badPath(full, "index out of range")
			}
			v, err := applyOp(n[i], path[1:], op, full)
			n[i] = v
			return n, err
		}
		return applyToArray(n, i, op, full)
	default:
		return nil, badPath(full, "a parent is not an object or array")
	}
}

func applyToObject(n map[string]any, key string, exists bool, op store.PatchOp, full string) error {
	switch op.Op {
	case store.PatchSet, store.PatchAdd:
		n[key] = op.Value
	case store.PatchReplace, store.PatchRemove:
		if !exists {
			return badPath(full, "it does not exist")
		}
		if op.Op == store.PatchRemove {
			delete(n, key)
		} else {
			n[key] = op.Value
		}
	case store.PatchIncrement:
		if !exists {
			n[key] = op.Value // Cosmos creates a missing property with the increment
			return nil
		}
		sum, err := increment(n[key], op.Value, full)
		if err != nil {
			return err
		}
		n[key] = sum
	}
	return nil
}

func applyToArray(n []any, i int, op store.PatchOp, full string) (any, error) {
	if i == len(n) {
		return append(n, op.Value), nil
	}
	if i >= len(n) {
		return nil, badPath(full, "index out of range")
	}
	switch op.Op {
	case store.PatchAdd:
		n = append(n[:i+1], n[i:]...)
		n[i] = op.Value
	case store.PatchSet, store.PatchReplace:
		n[i] = op.Value
	case store.PatchRemove:
		n = append(n[:i], n[i+1:]...)
	case store.PatchIncrement:
		sum, err := increment(n[i], op.Value, full)
		if err != nil {
			return nil, err
		}
		n[i] = sum
	}
	return n, nil
}

// arrayIndex parses an array segment; "-" (and, when appending is
// allowed, len) means after the last element.
func arrayIndex(seg string, n int, canAppend bool) (int, error) {
	if seg == "-" && canAppend {
		return n, nil
	}
	i, err := strconv.Atoi(seg)
	if err != nil || i < 0 || i > n || (i == n && !canAppend) {
		return 0, domain.Errorf(domain.EINVALID, "%q is not an index of an array of %d", seg, n)
	}
	return i, nil
}

// increment adds two JSON numbers, staying integral when both are.
func increment(cur, by any, full string) (any, error) {
	a, ok := cur.(json.Number)
	if !ok {
		return nil, badPath(full, "it is not a number")
	}
	b := by.(json.Number)
	x, errX := strconv.ParseInt(string(a), 10, 64)
	y, errY := strconv.ParseInt(string(b), 10, 64)
	if errX == nil && errY == nil && (y <= 0 || x <= math.MaxInt64-y) && (y >= 0 || x >= math.MinInt64-y) {
		return json.Number(strconv.FormatInt(x+y, 10)), nil
	}
	f, _ := a.Float64()
	g, _ := b.Float64()
	return json.Number(strconv.FormatFloat(f+g, 'g', -1, 64)), nil
}

func badPath(path, why string) error {
	return domain.Errorf(domain.EINVALID, "patch path %s: %s", path, why)
}
