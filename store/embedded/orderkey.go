package embedded

import (
	"encoding/binary"
	"math"
)

// An order index key is the partition prefix, the values of the equality
// properties and of the ORDER BY property in an encoding whose byte order
// is compareSortKeys's order, and the id:
//
//	len(pk) (2 bytes BE) + pk + [rank (1 byte) + value]... + id
//
// so the entries of one logical partition (and equality values) are
// contiguous and sorted by (value, id), the order a query returns them in
// (ties broken by id, as Cosmos's composite index (value, id) sorts them).
// Each value ends where its encoding says it does, so none needs a
// delimiter.
//
// Value encodings, after the rank byte (undefined < null < booleans <
// numbers < strings < arrays < objects, the ORDER BY ranks of sortkey.go):
//
//	undefined, null  nothing
//	boolean          0 or 1
//	number           float64 bits, sign bit flipped (all bits for a
//	                 negative), so the bytes sort as the numbers do
//	string           the bytes with 0x00 escaped as 0x00 0xFF, then
//	                 0x00 0x01: a prefix sorts before its extensions
//	array, object    the JSON text, escaped like a string
//
// A string (or JSON text) longer than maxIndexedBytes keeps only its first
// maxIndexedBytes bytes and ends with 0x00 0x02 instead: it still sorts
// after every shorter value it extends and before every value it is less
// than within those bytes, and the entries that share the same cut value
// (a tie of the index, in id order) are sorted by their real values when
// a query walks over them. bbolt keys are at most 32 KB; an item's
// ORDER BY value can be up to 2 MB.
const (
	escByte  = 0x00
	escNul   = 0xFF // 0x00 0xFF is a 0x00 of the value
	escEnd   = 0x01 // 0x00 0x01 ends the value
	escTrunc = 0x02 // 0x00 0x02 ends a value cut at maxIndexedBytes
	escAfter = 0x03 // no encoding has 0x00 0x03: an upper bound

	maxIndexedBytes = 1024
)

// appendSortKey appends the order-preserving encoding of k.
func appendSortKey(buf []byte, k sortKey) []byte {
	buf = append(buf, byte(k.rank))
	switch k.rank {
	case rankBool:
		return append(buf, byte(k.num))
	case rankNumber:
		f := k.num
		if f == 0 {
			f = 0 // -0 equals 0 for compareSortKeys: one encoding for both
		}
		bits := math.Float64bits(f)
		if bits>>63 == 1 {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(buf, bits)
	case rankString:
		return appendEscaped(buf, k.str)
	case rankArray, rankObject:
		return appendEscaped(buf, k.raw)
	}
	return buf
}

func appendEscaped[T string | []byte](buf []byte, s T) []byte {
	end := byte(escEnd)
	if len(s) > maxIndexedBytes {
		s, end = s[:maxIndexedBytes], escTrunc
	}
	for i := 0; i < len(s); i++ {
		if s[i] == escByte {
			buf = append(buf, escByte, escNul)
			continue
		}
		buf = append(buf, s[i])
	}
	return append(buf, escByte, end)
}

// truncated reports whether the encoded value enc was cut.
func truncated(enc []byte) bool {
	return len(enc) >= 2 && enc[len(enc)-2] == escByte && enc[len(enc)-1] == escTrunc
}

// sortKeyLen returns the length of the encoded value at the start of b,
// or -1 if b does not start with one.
func sortKeyLen(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	n := 0
	switch int(b[0]) {
	case rankUndefined, rankNull:
		return 1
	case rankBool:
		n = 2
	case rankNumber:
		n = 9
	case rankString, rankArray, rankObject:
		for i := 1; i+1 < len(b); i++ {
			if b[i] != escByte {
				continue
			}
			if b[i+1] == escEnd || b[i+1] == escTrunc {
				return i + 2
			}
			i++ // an escaped 0x00
		}
		return -1
	default:
		return -1
	}
	if len(b) < n {
		return -1
	}
	return n
}
