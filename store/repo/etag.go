package repo

import "strings"

// AnyETag is the If-Match that matches any current version of a
// document: the write goes ahead if the document exists, and is a 412 if
// it does not (RFC 9110 §13.1.1).
const AnyETag = "*"

// etagMatches reports whether the client's If-Match (as sent: "*", or one
// or more entity tags separated by commas) matches etag, the document's
// current _etag. The comparison is strong: a weak tag (W/"…") never
// matches, and a malformed header matches nothing.
func etagMatches(ifMatch, etag string) bool {
	if strings.TrimSpace(ifMatch) == AnyETag {
		return true
	}
	for rest := ifMatch; ; {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			return false
		}
		tag, tail, ok := cutETag(rest)
		if !ok {
			return false
		}
		if tag == etag {
			return true
		}
		rest = tail
	}
}

// cutETag splits the entity tag at the start of s (W/ and the quotes
// included) from the rest; ok is false unless s starts with one.
func cutETag(s string) (tag, rest string, ok bool) {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s) <= start || s[start] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(s[start+1:], '"')
	if end < 0 {
		return "", "", false
	}
	// A weak tag keeps its W/, so it never equals a strong _etag.
	n := start + 1 + end + 1
	return s[:n], s[n:], true
}

// serverRetries reports whether a write that lost a race with another
// writer may be retried by the server: when the client gave no If-Match,
// or * (which still holds as long as the document exists).
func serverRetries(ifMatch string) bool {
	return ifMatch == "" || strings.TrimSpace(ifMatch) == AnyETag
}
