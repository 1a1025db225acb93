package embedded

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The bbolt file holds these top-level buckets:
//
//	"_meta"                    the token-signing secret
//	"_containers"              container name -> containerRecord (JSON)
//	"i\x00<container>\x00<p>"  items of physical partition p: itemKey -> header+document
//	"f\x00<container>\x00<p>"  change feed of partition p: LSN (8 bytes BE) -> itemKey
//	"o\x00<container>\x00<p>\x00<prop>"
//	                           order index on prop of partition p: orderKey -> nothing
//
// where p is the partition's bucket number (partition.Bucket).
//
// Items of one logical partition share a key prefix (the partition key), so
// a single-partition query is one prefix scan of one bucket, as on Cosmos
// where a logical partition lives inside exactly one physical partition.
var (
	metaBucket       = []byte("_meta")
	containersBucket = []byte("_containers")
	secretKey        = []byte("tokenSecret")
)

func itemsBucket(container string, p int) []byte {
	return fmt.Appendf(nil, "i\x00%s\x00%d", container, p)
}

func feedBucket(container string, p int) []byte {
	return fmt.Appendf(nil, "f\x00%s\x00%d", container, p)
}

// itemKey is len(pk) (2 bytes BE) + pk + id: unambiguous whatever bytes the
// values hold, and every item of pk starts with partitionPrefix(pk).
func itemKey(buf []byte, pk, id string) []byte {
	buf = partitionPrefix(buf, pk)
	return append(buf, id...)
}

func partitionPrefix(buf []byte, pk string) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(pk)))
	return append(buf, pk...)
}

// splitItemKey returns the partition key and id of an itemKey.
func splitItemKey(k []byte) (pk, id string) {
	n := int(binary.BigEndian.Uint16(k))
	return string(k[2 : 2+n]), string(k[2+n:])
}

func lsnKey(lsn uint64) []byte { return binary.BigEndian.AppendUint64(nil, lsn) }

// Physical partitions divide the 32-bit hash space of partition keys
// (FNV-1a, stable across runs and machines) into contiguous ranges, as
// Cosmos divides its hash space (MurmurHash3) among its physical
// partitions. A new container has n equal ranges; a split
// (Store.SplitPartition) halves one.
const hashSpace = 1 << 32

// partition is one physical partition: the hashes [Lo, Hi) it owns and
// the number its buckets are named by. Numbers are never reused, so the
// buckets of a partition that split are never mistaken for its
// children's.
type partition struct {
	Bucket int    `json:"bucket"`
	Lo     uint64 `json:"lo"`
	Hi     uint64 `json:"hi"`
}

// feedRange names the partition as Cosmos-style hex bounds: "" for the
// lowest, "FF" for the end of the space, 8 hex digits in between.
func (p partition) feedRange() store.FeedRange {
	return store.FeedRange{Min: hashBound(p.Lo), Max: hashBound(p.Hi)}
}

func hashBound(h uint64) string {
	switch h {
	case 0:
		return ""
	case hashSpace:
		return "FF"
	}
	return fmt.Sprintf("%08X", h)
}

// contains reports whether p owns every hash q owns.
func (p partition) contains(q partition) bool { return p.Lo <= q.Lo && q.Hi <= p.Hi }

// equalPartitions is the layout of a new container: n equal ranges,
// buckets 0..n-1. Partition i owns the hashes h with
// floor(h*n / 2^32) == i.
func equalPartitions(n int) []partition {
	bound := func(i int) uint64 {
		// Smallest h with h*n >= i*2^32.
		return (uint64(i)<<32 + uint64(n) - 1) / uint64(n)
	}
	out := make([]partition, n)
	for i := range out {
		out[i] = partition{Bucket: i, Lo: bound(i), Hi: bound(i + 1)}
	}
	return out
}

// feedRanges returns the n ranges of a new container.
func feedRanges(n int) []store.FeedRange {
	return rangesOf(equalPartitions(n))
}

func rangesOf(parts []partition) []store.FeedRange {
	out := make([]store.FeedRange, len(parts))
	for i, p := range parts {
		out[i] = p.feedRange()
	}
	return out
}

// locate returns the index in parts (sorted by Lo, covering the space) of
// the partition a partition key value hashes into.
func locate(parts []partition, pk string) int {
	h := uint64(fnv32a(pk))
	return sort.Search(len(parts), func(i int) bool { return parts[i].Hi > h })
}

// fnv32a is FNV-1a, 32 bit, written out so hashing allocates nothing.
func fnv32a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// layout is the container's physical partitions.
func (rec containerRecord) layout() []partition {
	if len(rec.Layout) > 0 {
		return rec.Layout
	}
	return equalPartitions(rec.Partitions)
}

// record is what the file keeps of st, with def as its definition.
func (st *containerState) record(def store.ContainerDef) containerRecord {
	rec := containerRecord{Def: def, Partitions: len(st.parts), Split: st.split}
	if len(st.split) > 0 {
		rec.Layout = st.parts
	}
	return rec
}

// partitionFor returns the index of the physical partition that holds
// the items of partition key pk.
func (st *containerState) partitionFor(pk string) int { return locate(st.parts, pk) }

// rangeIndex finds the physical partition a feed range names.
func rangeIndex(ranges []store.FeedRange, r store.FeedRange) (int, error) {
	for i, fr := range ranges {
		if fr == r {
			return i, nil
		}
	}
	return 0, domain.Errorf(domain.EINVALID, "feed range %s is not one of this container's ranges", r)
}

// Each stored value starts with a small header so that a point read needs
// no JSON decoding: the TTL check and the ETag come from the header.
//
//	version   1 byte
//	written   8 bytes: unix nanoseconds of the write (_ts at full precision)
//	ttl       8 bytes: the item's own ttl in seconds, noTTL if it has none
//	lsn       8 bytes: the item's position in its partition's change feed
//	etagLen   1 byte, then the _etag
//	document
const headerVersion = 1

// noTTL marks an item without its own ttl property: it inherits the
// container's default.
const noTTL = math.MinInt64

type header struct {
	written int64
	ttl     int64
	lsn     uint64
	etag    []byte
}

func appendHeader(buf []byte, h header) []byte {
	buf = append(buf, headerVersion)
	buf = binary.BigEndian.AppendUint64(buf, uint64(h.written))
	buf = binary.BigEndian.AppendUint64(buf, uint64(h.ttl))
	buf = binary.BigEndian.AppendUint64(buf, h.lsn)
	buf = append(buf, byte(len(h.etag)))
	return append(buf, h.etag...)
}

// parseHeader splits a stored value into its header and document. The
// etag aliases v: copy it before the transaction ends.
func parseHeader(v []byte) (header, []byte, error) {
	const fixed = 1 + 8 + 8 + 8 + 1
	if len(v) < fixed || v[0] != headerVersion {
		return header{}, nil, domain.Errorf(domain.EINTERNAL, "stored item has an unknown header")
	}
	h := header{
		written: int64(binary.BigEndian.Uint64(v[1:])),
		ttl:     int64(binary.BigEndian.Uint64(v[9:])),
		lsn:     binary.BigEndian.Uint64(v[17:]),
	}
	n := int(v[25])
	if len(v) < fixed+n {
		return header{}, nil, domain.Errorf(domain.EINTERNAL, "stored item has a truncated header")
	}
	h.etag = v[fixed : fixed+n]
	return h, v[fixed+n:], nil
}

// expired applies Cosmos time to live: with TTL off on the container
// (DefaultTTL nil) nothing expires and item ttls are ignored; otherwise the
// item's own ttl wins over the default, and -1 means never. An item expires
// ttl seconds after its last write.
func expired(def *store.ContainerDef, h header, now time.Time) bool {
	return now.UnixNano() >= expiresAt(def, h)
}
