package embedded

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// purgeLoop deletes expired items every TTLPurgeInterval until Close.
// Expired items are already invisible to every read; the purge only gives
// the space back, as Cosmos does with spare throughput.
func (s *Store) purgeLoop() {
	defer close(s.done)
	t := time.NewTicker(s.opts.TTLPurgeInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_, _ = s.PurgeExpired()
		}
	}
}

// PurgeExpired deletes every expired item (and its change-feed entry) now
// and returns how many it deleted.
func (s *Store) PurgeExpired() (int, error) {
	s.mu.RLock()
	var names []string
	for name, st := range s.containers {
		if st.def.DefaultTTL != nil {
			names = append(names, name)
		}
	}
	s.mu.RUnlock()
	purged := 0
	for _, name := range names {
		n, err := s.purgeContainer(name)
		purged += n
		if err != nil {
			return purged, err
		}
	}
	return purged, nil
}

// purgeContainer purges one container, held against a split.
func (s *Store) purgeContainer(name string) (int, error) {
	st, err := s.acquire(name)
	if err != nil {
		return 0, err
	}
	defer st.release()
	purged := 0
	for p := range st.items {
		err := s.db.Update(func(tx *bolt.Tx) error {
			pt := st.partitionTx(tx, p)
			now := s.opts.Now()
			var keys, docs [][]byte
			var lsns []uint64
			err := pt.items.ForEach(func(k, v []byte) error {
				h, doc, err := parseHeader(v)
				if err != nil {
					return err
				}
				if expired(&st.def, h, now) {
					keys = append(keys, append([]byte(nil), k...))
					docs = append(docs, doc)
					lsns = append(lsns, h.lsn)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				// What a query returns cannot change (the items were
				// invisible already), but every write says it wrote.
				st.memo.wroteAt(tx.ID())
			}
			for i, k := range keys {
				pk, id := splitItemKey(k)
				if err := pt.reindex(pk, id, docs[i], nil); err != nil {
					return err
				}
				if err := pt.items.Delete(k); err != nil {
					return err
				}
				if err := pt.feed.Delete(lsnKey(lsns[i])); err != nil {
					return err
				}
			}
			purged += len(keys)
			return nil
		})
		if err != nil {
			return purged, storeError(err)
		}
	}
	return purged, nil
}
