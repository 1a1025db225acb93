package domain

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxIDBytes is Cosmos's limit on an id (1,023 bytes).
const MaxIDBytes = 1023

// RandomSuffix returns 12 hex digits from crypto/rand: the unique part of
// an id the shop makes (an order's, after its time; a product's created
// without one). 48 bits: two ids made in the same second collide once in
// about 2^24 pairs, and a collision is a create that fails 409, never an
// overwrite.
func RandomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidateID checks an id the way Cosmos and its Go SDK need: not empty,
// at most 1,023 bytes, none of / \ ? # (they break the resource path of a
// point operation), no " and no control character (azcosmos v1.5.0 writes
// a batch operation's id into the request body unescaped, so either makes
// the whole batch malformed JSON), and valid UTF-8 (JSON text is UTF-8,
// and a decoder would silently turn a bad byte into U+FFFD, another id).
// Both store adapters apply it to every id. what names the id in the
// message ("productId").
func ValidateID(what, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "%s must not be empty", what)
	case len(id) > MaxIDBytes:
		return Errorf(EINVALID, "%s is %d bytes; at most %d are allowed", what, len(id), MaxIDBytes)
	case strings.ContainsAny(id, `/\?#`):
		return Errorf(EINVALID, "%s must not contain / \\ ? or #", what)
	case !utf8.ValidString(id):
		return Errorf(EINVALID, "%s is not valid UTF-8", what)
	case strings.ContainsFunc(id, func(r rune) bool { return r == '"' || unicode.IsControl(r) }):
		return Errorf(EINVALID, "%s must not contain \" or a control character", what)
	}
	return nil
}
