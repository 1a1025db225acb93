package domain

import "strings"

// MaxIDBytes is Cosmos's limit on an id (1,023 bytes).
const MaxIDBytes = 1023

// ValidateID checks an id the way Cosmos does: not empty, at most 1,023
// bytes, none of / \ ? # (they break the resource path of a point
// operation). what names the id in the message ("productId").
func ValidateID(what, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "%s must not be empty", what)
	case len(id) > MaxIDBytes:
		return Errorf(EINVALID, "%s is %d bytes; at most %d are allowed", what, len(id), MaxIDBytes)
	case strings.ContainsAny(id, `/\?#`):
		return Errorf(EINVALID, "%s must not contain / \\ ? or #", what)
	}
	return nil
}
