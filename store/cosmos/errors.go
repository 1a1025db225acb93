package cosmos

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
)

// statusCodes is THE mapping of Cosmos status codes to the shop's error
// codes. Every error leaving this package goes through mapError, so no
// *azcore.ResponseError (or any other SDK type) escapes it.
var statusCodes = map[int]string{
	http.StatusBadRequest:            domain.EINVALID,      // malformed item, query or patch; pk mismatch
	http.StatusUnauthorized:          domain.EINTERNAL,     // our key or token is wrong: our fault, not the client's
	http.StatusForbidden:             domain.EINTERNAL,     // missing RBAC role, firewall, or the account's storage quota (substatus 1014, a full partition: statusError)
	http.StatusNotFound:              domain.ENOTFOUND,     // no such item, container or database
	http.StatusRequestTimeout:        domain.EUNAVAILABLE,  // the service timed out; retry
	http.StatusConflict:              domain.ECONFLICT,     // id taken in the logical partition
	http.StatusGone:                  domain.EUNAVAILABLE,  // partition moved (split); the SDK refreshes its routing
	http.StatusPreconditionFailed:    domain.EPRECONDITION, // If-Match no longer matches _etag, or a patch's condition does not hold
	http.StatusRequestEntityTooLarge: domain.ETOOLARGE,     // item over 2 MB, or batch too big
	http.StatusTooManyRequests:       domain.EUNAVAILABLE,  // throttled past our retry budget; RetryAfter set
	449:                              domain.EUNAVAILABLE,  // "retry with": a concurrent write on the same item
	http.StatusServiceUnavailable:    domain.EUNAVAILABLE,  // transient; retry
}

// substatusPartitionFull on a 403: the logical partition (all items of
// one partition key value) reached its 20 GB.
const substatusPartitionFull = "1014"

// messages are client-safe texts per code. The SDK's own text (which can
// carry activity ids, URLs, and for 401/403 hints about credentials) is
// never passed on.
var messages = map[int]string{
	http.StatusBadRequest:            "the store refused the request as malformed",
	http.StatusUnauthorized:          "the store refused our credentials",
	http.StatusForbidden:             "the store refused access",
	http.StatusNotFound:              "not found",
	http.StatusRequestTimeout:        "the store timed out",
	http.StatusConflict:              "an item with this id already exists",
	http.StatusGone:                  "the store is moving data; retry",
	http.StatusPreconditionFailed:    "the item changed since it was read (ETag mismatch), or the patch's condition does not hold",
	http.StatusRequestEntityTooLarge: "the item is over the 2 MB limit",
	http.StatusTooManyRequests:       "the store is throttling requests; retry later",
	449:                              "a concurrent write got there first; retry",
	http.StatusServiceUnavailable:    "the store is unavailable; retry later",
}

// mapError turns whatever the SDK returned into a *domain.Error. op names
// what was attempted ("read products/p1"); it prefixes the message.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*domain.Error](err); ok {
		return e
	}
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return statusError(op, replyOf(re.StatusCode, re.RawResponse))
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return domain.Errorf(domain.EUNAVAILABLE, "%s: timed out", op)
	case errors.Is(err, context.Canceled):
		return domain.Errorf(domain.EUNAVAILABLE, "%s: canceled", op)
	case errors.Is(err, azcosmos.ErrFeedRangeUnresolved):
		// The ranges changed (a split): the processor re-reads them.
		return domain.Errorf(domain.EINVALID, "%s: the feed range is not one of the container's; read the feed ranges again", op)
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: cannot reach the store", op)
	}
	return domain.Errorf(domain.EINTERNAL, "%s: %v", op, err)
}

// reply is what the store answered one operation: its status, its
// substatus ("" if none) and the wait it named (0 if none). A point
// operation's comes from its response's headers (replyOf); each
// operation of a transactional batch has its own (batchReplies).
type reply struct {
	status     int
	substatus  string
	retryAfter time.Duration
}

// replyOf reads the reply of a response; resp may be nil.
func replyOf(status int, resp *http.Response) reply {
	r := reply{status: status}
	if resp != nil {
		r.substatus = resp.Header.Get(headerSubstatus)
		r.retryAfter = retryAfter(resp.Header)
	}
	return r
}

// statusError maps one reply, as the table says.
func statusError(op string, r reply) *domain.Error {
	status := r.status
	if status == http.StatusNotFound && r.substatus == substatusReadSessionNotAvailable {
		// Not "no such item": no replica has yet reached the session
		// token the read carried, in any region the SDK retried.
		return domain.Errorf(domain.EUNAVAILABLE, "%s: the store has not yet caught up with this session; retry", op)
	}
	if status == http.StatusForbidden && r.substatus == substatusPartitionFull {
		// Not refused access: the write's logical partition is full, and
		// stays so until items under its key are deleted.
		return domain.Errorf(domain.EPARTITIONFULL, "%s: the logical partition reached Cosmos's 20 GB limit of one partition key value; nothing more can be written to it", op)
	}
	code, ok := statusCodes[status]
	if !ok {
		return domain.Errorf(domain.EINTERNAL, "%s: unexpected status %d from the store", op, status)
	}
	e := domain.Errorf(code, "%s: %s", op, messages[status])
	if status == http.StatusTooManyRequests || status == 449 {
		e.RetryAfter = r.retryAfter
		if e.RetryAfter <= 0 {
			e.RetryAfter = retryAfterUnstated
		}
	}
	return e
}

// retryAfterUnstated is the RetryAfter of a 429 or 449 that names no wait
// (a 449 never does): the least an HTTP Retry-After can say, and longer
// than the adapter's first backoffs, which were already spent on it.
const retryAfterUnstated = time.Second

// retryAfter reads x-ms-retry-after-ms, the wait Cosmos asks for after a
// 429 (throttling-429: honor the server's hint rather than guess).
func retryAfter(h http.Header) time.Duration {
	ms, err := strconv.ParseFloat(h.Get("x-ms-retry-after-ms"), 64)
	if err != nil || ms < 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// failedCharge is the Request Units a failed call still cost: Cosmos
// charges for rejected requests too, and the meter should show it.
func failedCharge(err error) float64 {
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok && re.RawResponse != nil {
		v, err := strconv.ParseFloat(re.RawResponse.Header.Get("x-ms-request-charge"), 64)
		if err == nil {
			return v
		}
	}
	return 0
}
