package store

import "encoding/json"

// BatchSize is the size a transactional batch is held to MaxBatchBytes
// by: the bytes of its items, patch operations and ids, which is what its
// request body carries besides a few bytes of framing per operation. Both
// adapters refuse a batch over the limit before anything is sent, with
// ETOOLARGE, as Cosmos answers 413 for one.
func BatchSize(ops []BatchOp) int {
	n := 0
	for _, op := range ops {
		n += len(op.ID) + len(op.Item) + len(op.IfMatch)
		if len(op.Patch) > 0 {
			// An operation that does not encode is refused as EINVALID
			// on its own; it counts for nothing here.
			b, _ := json.Marshal(op.Patch)
			n += len(b)
		}
	}
	return n
}
