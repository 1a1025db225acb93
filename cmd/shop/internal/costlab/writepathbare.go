package costlab

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
)

// This file is the physical limit of `shop cost --writepath`: a bare
// bbolt file, fsync on, which commits what the shop's operation wrote,
// as often as the shop's store committed it, and nothing else. It holds
// what any store on bbolt with the shop's semantics must hold: each item
// under its partition key and id, after a header of the store's size
// (its write time, TTL, LSN and _etag), and a change-feed entry per item
// that moves to the end of its container's feed on every write (the
// latest-version feed). It leaves out what an implementation could
// choose not to keep: the order indexes of the queries' ORDER BY, the
// simulated physical partitions' buckets, the charge and the checks.

// itemWrite is one item a store call wrote: its document as stored (nil
// for a delete).
type itemWrite struct {
	container, pk, id string
	doc               []byte
	etag              string
}

// writeLog wraps a store and keeps every item its calls wrote, in the
// order the calls returned; take hands them over. It decodes nothing
// while a call runs (a created item's id is read from its document in
// take), so the measured operation pays a slice append per write.
type writeLog struct {
	store.Store
	mu     sync.Mutex
	writes []itemWrite
}

func newWriteLog(s store.Store) *writeLog { return &writeLog{Store: s} }

func (l *writeLog) Container(name string) store.Container {
	return logContainer{Container: l.Store.Container(name), name: name, log: l}
}

func (l *writeLog) add(ws ...itemWrite) {
	l.mu.Lock()
	l.writes = append(l.writes, ws...)
	l.mu.Unlock()
}

// take returns the writes logged since the last take, their ids read.
func (l *writeLog) take() []itemWrite {
	l.mu.Lock()
	ws := l.writes
	l.writes = nil
	l.mu.Unlock()
	for i := range ws {
		if ws[i].id == "" {
			var doc struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(ws[i].doc, &doc)
			ws[i].id = doc.ID
		}
	}
	return ws
}

type logContainer struct {
	store.Container
	name string
	log  *writeLog
}

func (c logContainer) put(pk, id string, r store.ItemResponse, err error) (store.ItemResponse, error) {
	if err == nil {
		c.log.add(itemWrite{container: c.name, pk: pk, id: id, doc: r.Item, etag: r.ETag})
	}
	return r, err
}

func (c logContainer) Create(ctx context.Context, pk string, item []byte) (store.ItemResponse, error) {
	r, err := c.Container.Create(ctx, pk, item)
	return c.put(pk, "", r, err)
}

func (c logContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Replace(ctx, pk, id, item, opts)
	return c.put(pk, id, r, err)
}

func (c logContainer) Upsert(ctx context.Context, pk string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Upsert(ctx, pk, item, opts)
	return c.put(pk, "", r, err)
}

func (c logContainer) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	r, err := c.Container.Patch(ctx, pk, id, ops, opts)
	return c.put(pk, id, r, err)
}

func (c logContainer) Delete(ctx context.Context, pk, id string, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Delete(ctx, pk, id, opts)
	if err == nil {
		c.log.add(itemWrite{container: c.name, pk: pk, id: id})
	}
	return r, err
}

func (c logContainer) ExecuteBatch(ctx context.Context, pk string, ops []store.BatchOp) (store.BatchResponse, error) {
	r, err := c.Container.ExecuteBatch(ctx, pk, ops)
	if err != nil || !r.Committed {
		return r, err
	}
	ws := make([]itemWrite, 0, len(ops))
	for i, op := range ops {
		w := itemWrite{container: c.name, pk: pk, id: op.ID}
		if op.Kind != store.BatchDelete && i < len(r.Results) {
			w.doc, w.etag = r.Results[i].Item, r.Results[i].ETag
		}
		ws = append(ws, w)
	}
	c.log.add(ws...)
	return r, err
}

// bytesOf is the keys and values the bare file puts for ws: each item's
// key and value, its feed entry's.
func bytesOf(ws []itemWrite) int {
	n := 0
	for _, w := range ws {
		if w.doc == nil {
			continue
		}
		key := len(itemKeyOf(w))
		n += key + headerSize(w) + len(w.doc) + 8 + key
	}
	return n
}

// bareFile is the bare bbolt file: two buckets per container, its items
// and its change feed.
type bareFile struct {
	db *bolt.DB
	// lsn is each item's feed entry, by container and item key, to move
	// it to the feed's end on the next write of the item.
	lsn map[string]uint64
}

func openBare(path string) (*bareFile, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, def := range migrations.Containers {
			for _, b := range [][]byte{itemsOf(def.ID), feedOf(def.ID)} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
		}
		_, err := tx.CreateBucketIfNotExists([]byte("commit"))
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &bareFile{db: db, lsn: map[string]uint64{}}, nil
}

func (b *bareFile) close() { b.db.Close() }

func itemsOf(container string) []byte { return []byte("items/" + container) }
func feedOf(container string) []byte  { return []byte("feed/" + container) }

// itemKeyOf is the item's key as the embedded store makes it: the
// partition key's length, the partition key, the id.
func itemKeyOf(w itemWrite) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(len(w.pk)))
	return append(append(k, w.pk...), w.id...)
}

// headerSize is the embedded store's header before a document: a version
// byte, the write time, the TTL and the LSN (8 bytes each), the _etag's
// length and the _etag.
func headerSize(w itemWrite) int { return 1 + 8 + 8 + 8 + 1 + len(w.etag) }

// apply writes w as the bare store holds it.
func (b *bareFile) apply(tx *bolt.Tx, w itemWrite) error {
	items, feed := tx.Bucket(itemsOf(w.container)), tx.Bucket(feedOf(w.container))
	if items == nil {
		return fmt.Errorf("bare file: no container %s", w.container)
	}
	key := itemKeyOf(w)
	at := w.container + "\x00" + string(key)
	if old, ok := b.lsn[at]; ok {
		if err := feed.Delete(binary.BigEndian.AppendUint64(nil, old)); err != nil {
			return err
		}
		delete(b.lsn, at)
	}
	if w.doc == nil {
		return items.Delete(key)
	}
	lsn, err := feed.NextSequence()
	if err != nil {
		return err
	}
	val := make([]byte, headerSize(w), headerSize(w)+len(w.doc))
	binary.BigEndian.PutUint64(val[17:], lsn)
	copy(val[26:], w.etag)
	if err := items.Put(key, append(val, w.doc...)); err != nil {
		return err
	}
	b.lsn[at] = lsn
	return feed.Put(binary.BigEndian.AppendUint64(nil, lsn), key)
}

// commit writes ws in one transaction.
func (b *bareFile) commit(ws []itemWrite) error {
	if len(ws) == 0 {
		return nil
	}
	return b.db.Update(func(tx *bolt.Tx) error {
		for _, w := range ws {
			if err := b.apply(tx, w); err != nil {
				return err
			}
		}
		return nil
	})
}

// replay writes ws in commits transactions, one after the other, the
// writes spread over them in order as evenly as they go: the shop's
// operation made that many commits of them (a commit of the store may
// hold several of its writes, made at once).
func (b *bareFile) replay(ws []itemWrite, commits int) error {
	for c := range commits {
		from, to := len(ws)*c/commits, len(ws)*(c+1)/commits
		err := b.db.Update(func(tx *bolt.Tx) error {
			for _, w := range ws[from:to] {
				if err := b.apply(tx, w); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// commitMicros is the median of reps commits of one small value: the
// price of a commit on this file system, whatever is written.
func (b *bareFile) commitMicros(reps int) (float64, error) {
	walls := make([]int64, 0, reps)
	for i := range reps {
		start := time.Now()
		err := b.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("commit")).Put([]byte("k"), binary.BigEndian.AppendUint64(nil, uint64(i)))
		})
		if err != nil {
			return 0, err
		}
		walls = append(walls, time.Since(start).Nanoseconds())
	}
	return float64(quantile(walls, 0.5)) / 1e3, nil
}

// timedProvider adds the wall time of every call to the payment
// provider: the part of a checkout the store's limit has no counterpart
// for.
type timedProvider struct {
	payments.Provider
	nanos atomic.Int64
}

func (p *timedProvider) since(start time.Time) { p.nanos.Add(time.Since(start).Nanoseconds()) }

func (p *timedProvider) Authorize(ctx context.Context, a payments.Authorization) (payments.Payment, error) {
	defer p.since(time.Now())
	return p.Provider.Authorize(ctx, a)
}

func (p *timedProvider) Capture(ctx context.Context, id, key string) (payments.Payment, error) {
	defer p.since(time.Now())
	return p.Provider.Capture(ctx, id, key)
}

func (p *timedProvider) Void(ctx context.Context, id, key string) (payments.Payment, error) {
	defer p.since(time.Now())
	return p.Provider.Void(ctx, id, key)
}

func (p *timedProvider) Refund(ctx context.Context, id, key string) (payments.Payment, error) {
	defer p.since(time.Now())
	return p.Provider.Refund(ctx, id, key)
}

func (p *timedProvider) Get(ctx context.Context, id string) (payments.Payment, error) {
	defer p.since(time.Now())
	return p.Provider.Get(ctx, id)
}
