package embedded

import (
	"bytes"
	"encoding/json"
)

// topLevel calls fn with each top-level property of the JSON object doc,
// the value as raw JSON, without decoding the rest: a query reads only the
// few properties it filters and sorts on, so it should not pay for
// decoding whole documents. It reports false if doc is not a well-formed
// object (never the case for what this store wrote) or fn stopped it.
func topLevel(doc []byte, fn func(key, raw []byte) bool) bool {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return false
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return true
	}
	for i < len(doc) {
		if doc[i] != '"' {
			return false
		}
		end := skipString(doc, i)
		if end < 0 {
			return false
		}
		key := doc[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var name string
			if json.Unmarshal(doc[i:end], &name) != nil {
				return false
			}
			key = []byte(name)
		}
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return false
		}
		start := skipSpace(doc, i+1)
		i = skipValue(doc, start)
		if i < 0 {
			return false
		}
		if !fn(key, doc[start:i]) {
			return false
		}
		i = skipSpace(doc, i)
		if i >= len(doc) {
			return false
		}
		switch doc[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(doc, i+1)
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = skipString(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !isDelimiter(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// isDelimiter reports whether c ends a number or literal.
func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// arrayElements calls fn with each element of the JSON array raw and
// reports false if raw is not a well-formed array.
func arrayElements(raw []byte, fn func(elem []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		if end < 0 {
			return false
		}
		if !fn(raw[i:end]) {
			return true
		}
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ']':
			return true
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return false
		}
	}
	return false
}
