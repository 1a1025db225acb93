package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"shop/domain"
	"shop/store"
)

// defaultFeedPage is the page size when the caller names none, as on the
// embedded store.
const defaultFeedPage = 100

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
// The continuation is the SDK's composite token, passed through as is: it
// survives partition splits (the SDK expands a split range into its
// children inside the token), so the processor needs no Cosmos knowledge.
func (c *Container) ReadChangeFeed(ctx context.Context, r store.FeedRange, continuation string, maxItems int) (store.ChangeFeedPage, error) {
	if c.err != nil {
		return store.ChangeFeedPage{}, mapError("container "+c.name, c.err)
	}
	if maxItems <= 0 {
		maxItems = defaultFeedPage
	}
	opts := &azcosmos.ChangeFeedOptions{
		MaxItemCount: int32(maxItems),
		FeedRange:    &azcosmos.FeedRange{MinInclusive: r.Min, MaxExclusive: r.Max},
	}
	scope := c.feedScope(r)
	if continuation != "" {
		token, err := unseal(scope, continuation)
		if err != nil {
			return store.ChangeFeedPage{}, err
		}
		if err := checkContinuation(token, r); err != nil {
			return store.ChangeFeedPage{}, err
		}
		opts.Continuation = &token
	}
	resp, err := c.c.ReadChangeFeed(ctx, opts)
	if err != nil {
		op := c.op("read change feed of", r.String())
		if _, ok := errors.AsType[*azcore.ResponseError](err); !ok && strings.Contains(err.Error(), "ResourceID") {
			// The SDK's own check (a plain error): the token's container
			// was deleted and created again under the same name.
			return store.ChangeFeedPage{}, domain.Errorf(domain.EINVALID, "%s: the continuation belongs to an earlier container of this name", op)
		}
		return store.ChangeFeedPage{RequestCharge: failedCharge(err)}, mapError(op, err)
	}
	page := store.ChangeFeedPage{
		Continuation:  seal(scope, resp.ContinuationToken),
		RequestCharge: responseCharge(resp.Response),
		// The SDK gives no estimate of what is left behind a token.
		Remaining: -1,
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

// compositeToken is the part of the SDK's change-feed continuation that
// is checked here. The SDK silently restarts from the beginning on a token
// it cannot parse; the port wants EINVALID instead, so it is checked first.
type compositeToken struct {
	Continuation []struct {
		Min string `json:"minInclusive"`
		Max string `json:"maxExclusive"`
	} `json:"continuation"`
}

// checkContinuation accepts a composite token whose ranges all lie inside
// r, as the tokens ReadChangeFeed returned for r do (split children
// included).
func checkContinuation(token string, r store.FeedRange) error {
	var t compositeToken
	if err := json.Unmarshal([]byte(token), &t); err != nil || len(t.Continuation) == 0 {
		return domain.Errorf(domain.EINVALID, "change feed: not a continuation of this store")
	}
	for _, cr := range t.Continuation {
		if !within(cr.Min, cr.Max, r) {
			return domain.Errorf(domain.EINVALID, "change feed: the continuation is for range %s-%s, not %s", cr.Min, cr.Max, r)
		}
	}
	return nil
}

// within compares effective partition key bounds: upper-case hex strings,
// whose byte order is their string order. "" is the lowest bound and "FF"
// the highest.
func within(lo, hi string, r store.FeedRange) bool {
	lo, hi = strings.ToUpper(lo), strings.ToUpper(hi)
	rlo, rhi := strings.ToUpper(r.Min), strings.ToUpper(r.Max)
	if lo < rlo {
		return false
	}
	return rhi == "FF" || (hi != "FF" && hi <= rhi && hi != "")
}
