package embedded

import (
	"bytes"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
)

// DefaultMaxLogicalPartitionBytes is Cosmos's limit on the data of one
// logical partition, all the items of one partition key value: 20 GB.
const DefaultMaxLogicalPartitionBytes = 20 << 30

// checkPartitionSize refuses a write that would grow logical partition pk
// by grow bytes past the limit. A write that shrinks a partition, or
// keeps its size, always passes, so a full partition can still be
// trimmed. The size counted is the bytes its items take in the file. It
// costs one look at the file's size unless the whole file is near the
// limit: only then is the partition summed, one prefix scan.
func (s *Store) checkPartitionSize(items *bolt.Bucket, pk string, grow int) error {
	limit := s.opts.MaxLogicalPartitionBytes
	if grow <= 0 || items.Tx().Size()+int64(grow) <= limit {
		return nil
	}
	size := int64(grow)
	prefix := partitionPrefix(nil, pk)
	cur := items.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		size += int64(len(v))
	}
	if size > limit {
		return partitionFull(pk, limit)
	}
	return nil
}

// partitionFull is the refusal of a write to a logical partition at its
// size limit. Cosmos answers 403 with substatus 1014 ("partition key
// reached maximum size"), which the port calls EPARTITIONFULL: retrying
// cannot help, the partition key needs more values (a synthetic key) to
// spread the data.
func partitionFull(pk string, limit int64) error {
	return domain.Errorf(domain.EPARTITIONFULL,
		"logical partition %s is full: it would exceed the %s limit of one partition key value (Cosmos answers 403, substatus 1014)", pk, sizeText(limit))
}

// sizeText renders a byte count in the largest whole unit: "20 GB".
func sizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
