package embedded

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Container is one container of the embedded store.
type Container struct {
	s    *Store
	name string
}

// Write modes of commit.
const (
	modeCreate = iota
	modeReplace
	modeUpsert
)

// pending is a write prepared outside the transaction: decoded, validated
// and encoded with its new system properties, so the single writer lock of
// bbolt is held only for the check-and-put.
type pending struct {
	id      string
	key     []byte
	doc     []byte
	etag    string
	written int64
	ttl     int64
	terms   indexTerms // index terms of doc (indexPolicy.terms)
	charge  float64    // set by price, once the stored version is known
	uniq    []string   // values of the unique key sets
}

// price sets w's charge for writing over oldDoc, the stored document, if
// exists says it is live: a create writes every index term of the item,
// an overwrite only the terms that changed (charge.go).
func (w *pending) price(st *containerState, oldDoc []byte, exists bool) error {
	terms := w.terms.count()
	if exists {
		old, err := st.index.terms(oldDoc)
		if err != nil {
			return err
		}
		terms = changedTerms(old, w.terms)
	}
	w.charge = writeCharge(len(w.doc), terms)
	return nil
}

// failedCharge is what a call that reached the "server" costs when it
// fails; input refused before being sent costs nothing.
func failedCharge(err error) float64 {
	switch domain.ErrorCode(err) {
	case domain.ENOTFOUND, domain.ECONFLICT, domain.EPRECONDITION, domain.ETOOLARGE:
		return failedRU
	}
	return 0
}

// begin checks the partition key every item operation must name,
// resolves the container, held against a split until the caller's
// st.release(), and returns the physical partition of pk, which has
// admitted the call against its budget (throughput.go): the caller
// charges it what the call cost.
func (c *Container) begin(ctx context.Context, pk string) (*containerState, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, canceled(err)
	}
	if err := validatePK(pk); err != nil {
		return nil, 0, err
	}
	st, err := c.s.acquire(c.name)
	if err != nil {
		return nil, 0, err
	}
	p := st.partitionFor(pk)
	if err := c.s.admit(st, p); err != nil {
		st.release()
		return nil, 0, err
	}
	return st, p, nil
}

// Read is a point read by (pk, id): one key lookup in one physical
// partition, no JSON decoding (point read, not a query: 1 RU,
// query-point-reads).
func (c *Container) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	return c.ReadIfNoneMatch(ctx, pk, id, "")
}

// ReadIfNoneMatch is Read with If-None-Match: when the stored _etag is
// etag (not ""), the document is not copied out of the file and the
// answer says NotModified, charged what the read would have been.
func (c *Container) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	if err := validateID(id); err != nil {
		return store.ItemResponse{}, err
	}
	st, p, err := c.begin(ctx, pk)
	if err != nil {
		return store.ItemResponse{}, err
	}
	defer st.release()
	var kbuf [256]byte
	key := itemKey(kbuf[:0], pk, id)
	now := c.s.opts.Now()
	var resp store.ItemResponse
	size := 0
	err = c.s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(st.items[p]).Get(key)
		if v == nil {
			return notFound(id, pk)
		}
		h, doc, err := parseHeader(v)
		if err != nil {
			return err
		}
		if expired(&st.def, h, now) {
			return notFound(id, pk)
		}
		size = len(doc)
		if etag != "" && string(h.etag) == etag {
			resp.ETag, resp.NotModified = etag, true
			return nil
		}
		resp.Item = bytes.Clone(doc)
		resp.ETag = string(h.etag)
		return nil
	})
	if err != nil {
		return c.failed(st, p, err)
	}
	resp.RequestCharge = readCharge(size)
	c.s.charge(st, resp.RequestCharge, p)
	return resp, nil
}

// failed is the response of a point operation on partition p that failed
// with err, charged what reaching the "server" cost.
func (c *Container) failed(st *containerState, p int, err error) (store.ItemResponse, error) {
	charge := failedCharge(err)
	c.s.charge(st, charge, p)
	return store.ItemResponse{RequestCharge: charge}, storeError(err)
}

func notFound(id, pk string) error {
	return domain.Errorf(domain.ENOTFOUND, "no item %s in partition %s", id, pk)
}

// Create stores a new item; ECONFLICT if its id exists in the partition
// (ids are unique per logical partition, not per container).
func (c *Container) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	return c.write(ctx, pk, "", item, modeCreate, "")
}

// Replace overwrites an existing item, honoring If-Match.
func (c *Container) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := validateID(id); err != nil {
		return store.ItemResponse{}, err
	}
	return c.write(ctx, pk, id, item, modeReplace, ifMatch(opts))
}

// Upsert creates or replaces. If-Match guards the replace only: a
// missing item is created whatever it says, as Cosmos does.
func (c *Container) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	return c.write(ctx, pk, "", item, modeUpsert, ifMatch(opts))
}

func ifMatch(opts *store.WriteOptions) string {
	if opts == nil {
		return ""
	}
	return opts.IfMatch
}

func (c *Container) write(ctx context.Context, pk, id string, item []byte, mode int, match string) (store.ItemResponse, error) {
	st, p, err := c.begin(ctx, pk)
	if err != nil {
		return store.ItemResponse{}, err
	}
	defer st.release()
	w, err := c.prepare(st, pk, id, item)
	if err == nil {
		err = c.s.update(func(tx *bolt.Tx) error {
			_, err := c.commit(tx, st, pk, &w, mode, match)
			return err
		})
	}
	if err != nil {
		return c.failed(st, p, err)
	}
	c.s.charge(st, w.charge, p)
	return store.ItemResponse{Item: w.doc, ETag: w.etag, RequestCharge: w.charge}, nil
}

// prepare decodes and validates item for partition pk (and, for Replace,
// id) and encodes it with a new _etag and _ts.
func (c *Container) prepare(st *containerState, pk, wantID string, item []byte) (pending, error) {
	m, err := decodeDoc(item)
	if err != nil {
		return pending{}, err
	}
	return c.prepareDoc(st, pk, wantID, m)
}

func (c *Container) prepareDoc(st *containerState, pk, wantID string, m map[string]any) (pending, error) {
	id, ttl, err := st.checkDoc(m, pk)
	if err != nil {
		return pending{}, err
	}
	if wantID != "" && id != wantID {
		return pending{}, domain.Errorf(domain.EINVALID, "item id %q differs from the id %q of the call", id, wantID)
	}
	now := c.s.opts.Now()
	w := pending{id: id, key: itemKey(nil, pk, id), etag: c.s.newETag(), written: now.UnixNano(), ttl: ttl}
	if w.doc, err = encodeDoc(m, w.etag, now.Unix()); err != nil {
		return pending{}, err
	}
	if w.terms, err = st.index.terms(w.doc); err != nil {
		return pending{}, err
	}
	w.uniq = st.uniqueValues(m)
	return w, nil
}

// load returns the live (stored and not expired) item at key, if any.
func (c *Container) load(st *containerState, items *bolt.Bucket, key []byte) (header, []byte, bool, error) {
	v := items.Get(key)
	if v == nil {
		return header{}, nil, false, nil
	}
	h, doc, err := parseHeader(v)
	if err != nil {
		return header{}, nil, false, err
	}
	return h, doc, !expired(&st.def, h, c.s.opts.Now()), nil
}

// commit checks the write against the stored item and puts it, moving the
// item to the end of its partition's change feed: a new LSN replaces the
// previous one, so the feed holds only each item's latest version. It
// reports whether the item was created (an upsert may do either), and
// prices w.
func (c *Container) commit(tx *bolt.Tx, st *containerState, pk string, w *pending, mode int, match string) (bool, error) {
	pt := st.partitionTx(tx, st.partitionFor(pk))
	old, oldDoc, exists, err := c.load(st, pt.items, w.key)
	if err != nil {
		return false, err
	}
	switch {
	case mode == modeCreate && exists:
		return false, domain.Errorf(domain.ECONFLICT, "item %s already exists in partition %s", w.id, pk)
	case mode == modeReplace && !exists:
		return false, notFound(w.id, pk)
	case match != "" && exists && string(old.etag) != match:
		return false, domain.Errorf(domain.EPRECONDITION, "item %s has changed: If-Match %s, _etag now %s", w.id, match, old.etag)
	}
	if err := c.checkUnique(pt.items, st, pk, *w); err != nil {
		return false, err
	}
	if err := w.price(st, oldDoc, exists); err != nil {
		return false, err
	}
	return !exists, c.put(pt, st, pk, old.lsn, oldDoc, *w)
}

// put stores w with the next LSN of its physical partition, removing the
// item's previous feed entry (oldLSN 0: none), and moves its order index
// entries from those of oldDoc, the stored document (nil: none, expired
// or not), to those of w.
func (c *Container) put(pt partitionTx, st *containerState, pk string, oldLSN uint64, oldDoc []byte, w pending) error {
	if err := c.s.checkPartitionSize(pt.items, pk, len(w.doc)-len(oldDoc)); err != nil {
		return err
	}
	st.memo.wroteAt(pt.tx.ID())
	if oldLSN != 0 {
		if err := pt.feed.Delete(lsnKey(oldLSN)); err != nil {
			return err
		}
	}
	if err := pt.reindex(pk, w.id, oldDoc, w.doc); err != nil {
		return err
	}
	lsn, err := pt.feed.NextSequence()
	if err != nil {
		return err
	}
	val := appendHeader(make([]byte, 0, 64+len(w.doc)), header{written: w.written, ttl: w.ttl, lsn: lsn, etag: []byte(w.etag)})
	if err := pt.items.Put(w.key, append(val, w.doc...)); err != nil {
		return err
	}
	return pt.feed.Put(lsnKey(lsn), w.key)
}

// Delete removes the item and its change-feed entry: deletes never show on
// the latest-version feed.
func (c *Container) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	if err := validateID(id); err != nil {
		return store.ItemResponse{}, err
	}
	st, p, err := c.begin(ctx, pk)
	if err != nil {
		return store.ItemResponse{}, err
	}
	defer st.release()
	var charge float64
	err = c.s.update(func(tx *bolt.Tx) error {
		var err error
		charge, err = c.remove(tx, st, pk, id, ifMatch(opts))
		return err
	})
	if err != nil {
		return c.failed(st, p, err)
	}
	c.s.charge(st, charge, p)
	return store.ItemResponse{RequestCharge: charge}, nil
}

func (c *Container) remove(tx *bolt.Tx, st *containerState, pk, id, match string) (float64, error) {
	pt := st.partitionTx(tx, st.partitionFor(pk))
	key := itemKey(nil, pk, id)
	h, doc, exists, err := c.load(st, pt.items, key)
	if err != nil {
		return 0, err
	}
	if !exists {
		return 0, notFound(id, pk)
	}
	if match != "" && string(h.etag) != match {
		return 0, domain.Errorf(domain.EPRECONDITION, "item %s has changed: If-Match %s, _etag now %s", id, match, h.etag)
	}
	charge := deleteCharge(len(doc))
	st.memo.wroteAt(pt.tx.ID())
	// The entries go first: doc aliases the item's page until it is deleted.
	if err := pt.reindex(pk, id, doc, nil); err != nil {
		return 0, err
	}
	if err := pt.items.Delete(key); err != nil {
		return 0, err
	}
	return charge, pt.feed.Delete(lsnKey(h.lsn))
}
