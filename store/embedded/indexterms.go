package embedded

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/reference-shop/shop/domain"
)

// indexTerms are the index terms of a document, each counted, by a hash of
// its path and value: Cosmos indexes each scalar at its path, an array
// element at its position (/tags/0), so a term is the path and the value.
type indexTerms map[uint64]int

// terms returns the index terms the policy makes of doc, a JSON object as
// the store keeps it; the system properties _etag and _ts make none. It
// scans the bytes once (scan.go), without decoding the document into Go
// values: every write prices its terms (charge.go), an overwrite those of
// the stored version too, inside the write's transaction.
func (ip indexPolicy) terms(doc []byte) (indexTerms, error) {
	s := termScan{ip: ip, doc: doc, terms: make(indexTerms, 32), path: make([][]byte, 0, 8)}
	i := s.value(skipSpace(doc, 0), fnvOffset, true)
	if i < 0 || skipSpace(doc, i) != len(doc) {
		return nil, domain.Errorf(domain.EINVALID, "item is not well-formed JSON")
	}
	return s.terms, nil
}

// count is how many terms there are.
func (t indexTerms) count() int {
	n := 0
	for _, c := range t {
		n += c
	}
	return n
}

// changedTerms is how many terms an overwrite removes from old and adds
// from new: the terms both hold stay as they are.
func changedTerms(old, new indexTerms) int {
	n := 0
	for t, c := range new {
		n += max(0, c-old[t])
	}
	for t, c := range old {
		n += max(0, c-new[t])
	}
	return n
}

// termScan is one scan of indexPolicy.terms.
type termScan struct {
	ip    indexPolicy
	doc   []byte
	path  [][]byte // the policy's view of the path: "[]" for an array element
	terms indexTerms
}

var arrayElement = []byte("[]")

// value scans the JSON value at doc[i], whose path hashes to h, and returns
// the index after it, or -1. Only a value under record makes terms.
func (s *termScan) value(i int, h uint64, record bool) int {
	if i >= len(s.doc) {
		return -1
	}
	switch s.doc[i] {
	case '{':
		return s.members(skipSpace(s.doc, i+1), h, record)
	case '[':
		return s.elements(skipSpace(s.doc, i+1), h, record)
	}
	end := skipValue(s.doc, i)
	if end > 0 && record && s.ip.indexed(s.path) {
		// The raw token keeps types apart: "1" (quoted) is not 1.
		s.terms[fnv(fnv(h, '='), s.doc[i:end]...)]++
	}
	return end
}

// members scans an object's members from doc[i] through its '}'.
func (s *termScan) members(i int, h uint64, record bool) int {
	if i < len(s.doc) && s.doc[i] == '}' {
		return i + 1
	}
	for i < len(s.doc) && s.doc[i] == '"' {
		end := skipString(s.doc, i)
		if end < 0 {
			return -1
		}
		key := s.doc[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var name string
			if json.Unmarshal(s.doc[i:end], &name) != nil {
				return -1
			}
			key = []byte(name)
		}
		if i = skipSpace(s.doc, end); i >= len(s.doc) || s.doc[i] != ':' {
			return -1
		}
		system := len(s.path) == 0 && (string(key) == "_etag" || string(key) == "_ts")
		s.path = append(s.path, key)
		i = s.value(skipSpace(s.doc, i+1), fnvStep(h, key), record && !system)
		s.path = s.path[:len(s.path)-1]
		if i < 0 {
			return -1
		}
		if i = skipSpace(s.doc, i); i < len(s.doc) && s.doc[i] == '}' {
			return i + 1
		}
		if i >= len(s.doc) || s.doc[i] != ',' {
			return -1
		}
		i = skipSpace(s.doc, i+1)
	}
	return -1
}

// elements scans an array's elements from doc[i] through its ']'.
func (s *termScan) elements(i int, h uint64, record bool) int {
	if i < len(s.doc) && s.doc[i] == ']' {
		return i + 1
	}
	var pos [20]byte
	for n := 0; i < len(s.doc); n++ {
		s.path = append(s.path, arrayElement)
		i = s.value(i, fnvStep(h, strconv.AppendInt(pos[:0], int64(n), 10)), record)
		s.path = s.path[:len(s.path)-1]
		if i < 0 {
			return -1
		}
		if i = skipSpace(s.doc, i); i < len(s.doc) && s.doc[i] == ']' {
			return i + 1
		}
		if i >= len(s.doc) || s.doc[i] != ',' {
			return -1
		}
		i = skipSpace(s.doc, i+1)
	}
	return -1
}

// FNV-1a, 64 bits: the hash of a term's path and value.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvStep adds one step of a path, its length first, so that a name with
// a '/' in it does not hash as two steps.
func fnvStep(h uint64, step []byte) uint64 {
	return fnv(fnv(h, '/', byte(len(step)>>8), byte(len(step))), step...)
}

func fnv(h uint64, b ...byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}
