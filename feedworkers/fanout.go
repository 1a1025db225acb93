package feedworkers

import (
	"context"
	"encoding/json"

	"shop/domain"
)

// TypeFanout is the discriminator of a fan-out record in `leases`.
const TypeFanout = "fanout"

// fanoutRecord remembers what the last successful fan-out of one product
// pushed to the carts. It lives in `leases` (pk /id, the processors' own
// bookkeeping) under "fanout.<productId>"; the container has no TTL, so a
// deleted product's record stays (a few hundred bytes).
type fanoutRecord struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	SchemaVersion  int    `json:"schemaVersion"`
	ProductID      string `json:"productId"`
	ProductVersion int64  `json:"productVersion"`
	// Pushed is the copy the fan-out pushed (domain.CartCopyOf).
	Pushed domain.CartCopy `json:"pushed"`
}

func fanoutID(productID string) string { return "fanout." + productID }

// syncCarts runs the cart fan-out of p only when a cart copy may be stale.
// The fan-out is the shop's one cross-partition query, charged on every
// physical partition, and most product writes (new review stats) change
// nothing a cart holds:
//
//   - p.Version <= 1: the product never changed since it was created, and
//     a cart copies the product as it is when the line is added.
//   - Otherwise the fan-out record is point-read (1 RU, vs a query fanned
//     out to every partition, query-point-reads) and the fan-out skipped
//     when it already pushed the same copy (domain.CartCopyOf).
//
// The record is written only AFTER the fan-out succeeded: a crash between
// the two finds the old record and fans out again (at least once; the
// cart writes are version-guarded and skip current lines).
func (h *Handlers) syncCarts(ctx context.Context, p domain.Product) error {
	if p.Version <= 1 {
		h.countSkipped()
		return nil
	}
	rec, found, err := h.readFanout(ctx, p.ID)
	if err != nil {
		return err
	}
	if found && rec.Pushed == domain.CartCopyOf(p) {
		h.countSkipped()
		return nil
	}
	if _, err := h.ProductToCarts(ctx, p); err != nil {
		return err
	}
	if found && rec.ProductVersion > p.Version {
		// A newer version already fanned out (p was read before it was
		// written): keep its record.
		return nil
	}
	return h.writeFanout(ctx, p)
}

func (h *Handlers) countSkipped() {
	h.stats.mu.Lock()
	h.stats.s.Skipped++
	h.stats.mu.Unlock()
}

func (h *Handlers) readFanout(ctx context.Context, productID string) (fanoutRecord, bool, error) {
	id := fanoutID(productID)
	r, err := h.leases.Read(ctx, id, id)
	switch {
	case domain.IsCode(err, domain.ENOTFOUND):
		return fanoutRecord{}, false, nil
	case err != nil:
		return fanoutRecord{}, false, err
	}
	var rec fanoutRecord
	if err := json.Unmarshal(r.Item, &rec); err != nil {
		return fanoutRecord{}, false, domain.Errorf(domain.EINTERNAL, "decode %s: %v", id, err)
	}
	return rec, true, nil
}

// writeFanout upserts the record of p's fan-out. A concurrent writer may
// leave an older version's record: the next change then compares against
// it and fans out once more, never less.
func (h *Handlers) writeFanout(ctx context.Context, p domain.Product) error {
	id := fanoutID(p.ID)
	b, err := json.Marshal(fanoutRecord{
		ID: id, Type: TypeFanout, SchemaVersion: domain.SchemaVersion,
		ProductID: p.ID, ProductVersion: p.Version, Pushed: domain.CartCopyOf(p),
	})
	if err != nil {
		return domain.Errorf(domain.EINTERNAL, "encode %s: %v", id, err)
	}
	_, err = h.leases.Upsert(ctx, id, b, nil)
	return err
}
