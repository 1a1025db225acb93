package embedded

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Cosmos ORDER BY sorts values of different types in this order
// (undefined first), and within a type: false before true, numbers
// numerically, strings by code point (RFC 3339 UTC times therefore sort in
// time order), arrays and objects by their JSON text.
const (
	rankUndefined = iota
	rankNull
	rankBool
	rankNumber
	rankString
	rankArray
	rankObject
)

type sortKey struct {
	rank int
	num  float64
	str  string
	raw  []byte
}

// newSortKey decodes a stored value once, so sorting compares cheaply.
func newSortKey(raw json.RawMessage) sortKey {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return sortKey{rank: rankUndefined}
	}
	switch raw[0] {
	case 'n':
		return sortKey{rank: rankNull}
	case 't':
		return sortKey{rank: rankBool, num: 1}
	case 'f':
		return sortKey{rank: rankBool}
	case '"':
		if plainString(raw) {
			return sortKey{rank: rankString, str: string(raw[1 : len(raw)-1])}
		}
		var s string
		_ = json.Unmarshal(raw, &s)
		return sortKey{rank: rankString, str: s}
	case '[':
		return sortKey{rank: rankArray, raw: raw}
	case '{':
		return sortKey{rank: rankObject, raw: raw}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return sortKey{rank: rankObject, raw: raw}
	}
	return sortKey{rank: rankNumber, num: f}
}

func compareSortKeys(a, b sortKey) int {
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	switch a.rank {
	case rankBool, rankNumber:
		return cmp.Compare(a.num, b.num)
	case rankString:
		return strings.Compare(a.str, b.str)
	case rankArray, rankObject:
		return bytes.Compare(a.raw, b.raw)
	}
	return 0
}

// plainString reports whether the JSON string raw decodes to the text
// between its quotes (no escape, no control character, valid UTF-8), as
// almost every stored string does: decoding it is then a copy.
func plainString(raw []byte) bool {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(body)
}
