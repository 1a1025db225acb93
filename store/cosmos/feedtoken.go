package cosmos

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// A change-feed continuation, once unsealed (continuation.go), is one of:
//
//   - the SDK's composite token: a queue of EPK ranges, each with the
//     ETag (an LSN) to resume it from. Reading r, its ranges are clamped
//     to r and must cover r exactly. A token of r itself goes back to the
//     SDK byte for byte; one of a range that has since split, read over a
//     child, is cut to the child, keeping the parent's ETag: a child's
//     LSNs continue its parent's, as the SDK itself assumes when it
//     expands a split range (buildChildQueueEntries).
//   - a start token, which FeedFromNow makes: a range and a time, sent as
//     the SDK's StartFrom (If-Modified-Since) with the first read from it.
//     It costs no request, and the time is taken when the position is,
//     not when it is first read from. A start token of a range that split
//     is valid on its children: the time means the same there.

// startToken is the position FeedFromNow returns.
type startToken struct {
	StartFrom time.Time `json:"startFrom"`
	Min       string    `json:"minInclusive"`
	Max       string    `json:"maxExclusive"`
}

func newStartToken(r store.FeedRange, at time.Time) string {
	b, _ := json.Marshal(startToken{StartFrom: at.UTC(), Min: r.Min, Max: r.Max})
	return string(b)
}

// resumeOptions sets opts to resume reading r from an unsealed token.
func resumeOptions(opts *azcosmos.ChangeFeedOptions, token string, r store.FeedRange) error {
	var start startToken
	if json.Unmarshal([]byte(token), &start) == nil && !start.StartFrom.IsZero() {
		if !inside(store.FeedRange{Min: start.Min, Max: start.Max}, r) {
			return wrongRange(start.Min+"-"+start.Max, r)
		}
		at := start.StartFrom
		opts.StartFrom = &at
		return nil
	}
	clamped, err := clampContinuation(token, r)
	if err != nil {
		return err
	}
	opts.Continuation = &clamped
	return nil
}

// clampContinuation returns the composite token cut to r: each range
// narrowed to its intersection with r, those outside r dropped. What is
// left must cover r without a gap, else EINVALID: the SDK would never
// read the gap. A token already inside r comes back unchanged.
func clampContinuation(token string, r store.FeedRange) (string, error) {
	var t map[string]json.RawMessage
	var entries []map[string]json.RawMessage
	if json.Unmarshal([]byte(token), &t) != nil || json.Unmarshal(t["continuation"], &entries) != nil || len(entries) == 0 {
		return "", domain.Errorf(domain.EINVALID, "change feed: not a continuation of this store")
	}
	type span struct{ lo, hi string }
	var kept []map[string]json.RawMessage
	var spans []span
	changed := false
	for _, e := range entries {
		var lo, hi string
		if json.Unmarshal(e["minInclusive"], &lo) != nil || json.Unmarshal(e["maxExclusive"], &hi) != nil {
			return "", domain.Errorf(domain.EINVALID, "change feed: not a continuation of this store")
		}
		clo, chi := maxEPK(lo, r.Min), minEPK(endEPK(hi), endEPK(r.Max))
		if clo >= chi {
			changed = true
			continue
		}
		if clo != strings.ToUpper(lo) || chi != endEPK(hi) {
			changed = true
			e["minInclusive"], _ = json.Marshal(clo)
			e["maxExclusive"], _ = json.Marshal(chi)
		}
		kept = append(kept, e)
		spans = append(spans, span{clo, chi})
	}
	slices.SortFunc(spans, func(a, b span) int { return strings.Compare(a.lo, b.lo) })
	at := strings.ToUpper(r.Min)
	for _, s := range spans {
		if s.lo != at {
			break
		}
		at = s.hi
	}
	if len(spans) == 0 || at != endEPK(r.Max) {
		var ranges []string
		for _, e := range entries {
			ranges = append(ranges, string(e["minInclusive"])+"-"+string(e["maxExclusive"]))
		}
		return "", wrongRange(strings.Join(ranges, ","), r)
	}
	if !changed {
		return token, nil
	}
	t["continuation"], _ = json.Marshal(kept)
	b, err := json.Marshal(t)
	if err != nil {
		return "", domain.Errorf(domain.EINTERNAL, "change feed: %v", err)
	}
	return string(b), nil
}

// Effective partition key bounds are upper-case hex strings whose byte
// order is their string order; "" is the lowest bound and, as a maximum,
// the end of the space, "FF".
func endEPK(hi string) string {
	if hi == "" {
		return "FF"
	}
	return strings.ToUpper(hi)
}

func maxEPK(a, b string) string { return max(strings.ToUpper(a), strings.ToUpper(b)) }

func minEPK(a, b string) string { return min(a, b) }

// inside reports whether r lies within outer.
func inside(outer, r store.FeedRange) bool {
	return strings.ToUpper(outer.Min) <= strings.ToUpper(r.Min) && endEPK(r.Max) <= endEPK(outer.Max)
}

func wrongRange(ranges string, r store.FeedRange) error {
	return domain.Errorf(domain.EINVALID, "change feed: the continuation is for range %s, not %s", ranges, r)
}
