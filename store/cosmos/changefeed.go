package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// defaultFeedPage is the page size when the caller names none, as on the
// embedded store.
const defaultFeedPage = 100

// feedStartEarly is how much earlier than the shop's clock a FeedFromNow
// position starts. Its time goes to Cosmos as If-Modified-Since, which
// has whole seconds and means "after": from the shop's own time, a write
// in the same second, or stamped (_ts) by a service clock behind the
// shop's, would never be read. Starting earlier reads again some changes
// from just before the call; under the feed's at-least-once delivery
// that is harmless (store.FeedFromNowEarly says so to callers).
const feedStartEarly = store.FeedFromNowEarly

// ReadFeedRanges returns one feed range per physical partition: the unit
// a change-feed processor leases (changefeed-processor-leases).
func (c *Container) ReadFeedRanges(ctx context.Context) ([]store.FeedRange, error) {
	if c.err != nil {
		return nil, mapError("container "+c.name, c.err)
	}
	ranges, err := c.c.ReadFeedRanges(ctx, nil)
	if err != nil {
		return nil, mapError(c.op("read feed ranges of", ""), err)
	}
	out := make([]store.FeedRange, len(ranges))
	for i, r := range ranges {
		out[i] = store.FeedRange{Min: r.MinInclusive, Max: r.MaxExclusive}
	}
	return out, nil
}

// ReadChangeFeed reads one page of the latest-version change feed of r.
// The continuation is the SDK's composite token, passed through as is,
// or cut to r when it was made for a range that has since split
// (feedtoken.go); FeedFromNow makes a start token and sends nothing. The
// SDK itself reads a range that split under the parent's token, expanding
// it into the children; only when its routing stays stale through its
// retries does a 410 with substatus 1002 reach here, mapped to
// store.ErrFeedRangeGone.
func (c *Container) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	if c.err != nil {
		return store.ChangeFeedPage{}, mapError("container "+c.name, c.err)
	}
	if maxItems <= 0 {
		maxItems = defaultFeedPage
	}
	scope := c.feedScope()
	if continuation == store.FeedFromNow {
		// No request: the time goes with the first read (StartFrom).
		return store.ChangeFeedPage{Continuation: seal(scope, newStartToken(r, time.Now().Add(-feedStartEarly)))}, nil
	}
	opts := &azcosmos.ChangeFeedOptions{
		MaxItemCount: int32(maxItems),
		FeedRange:    &azcosmos.FeedRange{MinInclusive: r.Min, MaxExclusive: r.Max},
	}
	if continuation != "" {
		token, err := unseal(scope, continuation)
		if err != nil {
			return store.ChangeFeedPage{}, err
		}
		if err := resumeOptions(opts, token, r); err != nil {
			return store.ChangeFeedPage{}, err
		}
	}
	resp, err := c.c.ReadChangeFeed(ctx, opts)
	if err != nil {
		op := c.op("read change feed of", r.String())
		if _, ok := errors.AsType[*azcore.ResponseError](err); !ok && strings.Contains(err.Error(), "ResourceID") {
			// The SDK's own check (a plain error): the token's container
			// was deleted and created again under the same name.
			return store.ChangeFeedPage{}, domain.Errorf(domain.EINVALID, "%s: the continuation belongs to an earlier container of this name", op)
		}
		if rangeGone(err) {
			return store.ChangeFeedPage{RequestCharge: failedCharge(err)}, store.FeedRangeGone(r)
		}
		return store.ChangeFeedPage{RequestCharge: failedCharge(err)}, mapError(op, err)
	}
	page := store.ChangeFeedPage{
		Continuation:  seal(scope, resp.ContinuationToken),
		RequestCharge: responseCharge(resp.Response),
		Remaining:     remaining(resp.RawResponse, resp.Items),
	}
	for _, raw := range resp.Items {
		item, err := fromCosmos(raw, "")
		if err != nil {
			return page, err
		}
		page.Items = append(page.Items, item)
	}
	if page.Continuation == "" {
		// Nothing read and nothing to resume from: keep the caller's.
		page.Continuation = continuation
	}
	return page, nil
}

// rangeGone reports Cosmos's "partition key range gone": 410 with
// substatus 1002, the answer for a physical partition that split.
func rangeGone(err error) bool {
	re, ok := errors.AsType[*azcore.ResponseError](err)
	return ok && re.StatusCode == http.StatusGone && re.RawResponse != nil &&
		re.RawResponse.Header.Get("x-ms-substatus") == "1002"
}

// remaining estimates the changes still ahead of a page as the .NET
// change feed estimator does: the latest LSN of the physical partition
// the response reports minus the _lsn of the page's last item. LSNs count
// every write, so rewrites and deletes make it an over-estimate, as on the
// embedded store. The latest LSN is the response's lsn header, else the
// global LSN of its session token. An empty page (304) is at the end: 0.
// Without an LSN to compare it is -1. Under a token that spans several
// physical partitions (a range the SDK expanded after a split) it is the
// partition the page came from.
func remaining(resp *http.Response, items [][]byte) int64 {
	if len(items) == 0 {
		return 0
	}
	if resp == nil {
		return -1
	}
	latest, ok := parseLSN(resp.Header.Get("lsn"))
	if !ok {
		latest, ok = sessionLSN(resp.Header.Get("x-ms-session-token"))
	}
	var last struct {
		LSN *int64 `json:"_lsn"`
	}
	if !ok || json.Unmarshal(items[len(items)-1], &last) != nil || last.LSN == nil {
		return -1
	}
	return max(latest-*last.LSN, 0)
}

// sessionLSN is the global LSN of a session token: "<range>:<lsn>", or
// "<range>:<version>#<global lsn>#<region>=<lsn>..." (session token v2).
func sessionLSN(token string) (int64, bool) {
	_, v, ok := strings.Cut(token, ":")
	if !ok {
		return 0, false
	}
	parts := strings.Split(v, "#")
	if len(parts) > 1 {
		return parseLSN(parts[1])
	}
	return parseLSN(parts[0])
}

func parseLSN(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}
