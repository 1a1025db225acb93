// Package domain holds the shop's documents, its error codes and the pure
// rules (totals, bounds, version guards) that every other package applies.
// It imports nothing of the shop: the store, the API and the feed workers
// all depend on it, never the other way round.
package domain

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. The HTTP status of each lives in ONE table in api/; the
// Cosmos adapter maps *azcore.ResponseError onto these at its boundary.
const (
	ENOTFOUND      = "not_found"         // 404: no such item (or not yours)
	ECONFLICT      = "conflict"          // 409: id taken, state does not allow it
	EOUTOFSTOCK    = "out_of_stock"      // 409: a checkout the stock cannot serve; Shortages says which lines
	EDECLINED      = "payment_declined"  // 402: the card was declined; DeclineCode says why
	EPRECONDITION  = "precondition"      // 412: If-Match no longer matches the _etag
	EINVALID       = "invalid"           // 400: bad input; Fields says which
	ETOOLARGE      = "too_large"         // 413: body or item over its limit
	EUNPROCESSABLE = "unprocessable"     // 422: well formed but refused (idempotency key reuse)
	EUNAUTHORIZED  = "unauthorized"      // 401: no valid token
	EFORBIDDEN     = "forbidden"         // 403: valid token, wrong role
	ETOOMANY       = "too_many_requests" // 429: a client over its rate limit
	EUNAVAILABLE   = "unavailable"       // 503: store throttled (429) or down; retry after RetryAfter
	// EPARTITIONFULL (507): a logical partition reached Cosmos's 20 GB, so
	// nothing more can be written under its partition key (403 with
	// substatus 1014). None of the codes above says so truthfully: 413
	// tells the client its request is too big (a smaller one fails too),
	// 503 invites a retry that fails the same way, 409 a state the client
	// can change, and 500 hides it. 507 Insufficient Storage is HTTP's
	// name for "the server cannot store what this request needs".
	EPARTITIONFULL = "partition_full"
	EINTERNAL      = "internal" // 500: a bug; the message is never shown to clients
)

// Error is the shop's error: a code from the table above, a message fit for
// a client, and for EINVALID the offending fields as JSON pointers.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	// Shortages names the lines of an EOUTOFSTOCK checkout.
	Shortages []Shortage
	// DeclineCode is the provider's reason of an EDECLINED checkout
	// ("insufficient_funds").
	DeclineCode string
	// OrderID names the order a refused checkout left, rejected, when it
	// wrote one (a declined card, a line short at its take).
	OrderID string
	// RetryAfter is set with EUNAVAILABLE and ETOOMANY when the cause said
	// how long to wait (Cosmos's x-ms-retry-after-ms on a 429).
	RetryAfter time.Duration
}

// FieldError names one invalid field of a request body by JSON pointer.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: the *Error's message,
// or a fixed text for anything else so that no internal detail leaks.
func ErrorMessage(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Message
	}
	return "internal error"
}

// IsCode reports whether err carries the given code.
func IsCode(err error, code string) bool { return ErrorCode(err) == code }
