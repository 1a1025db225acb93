package cosmos

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

var (
	whole = store.FeedRange{Min: "", Max: "FF"}
	left  = store.FeedRange{Min: "", Max: "7F"}
	right = store.FeedRange{Min: "7F", Max: "FF"}
)

func compositeOf(ranges string) string {
	return `{"version":1,"resourceId":"abc=","continuation":[` + ranges + `]}`
}

// The SDK restarts from the beginning on a token it cannot parse; the
// adapter refuses such tokens instead, and tokens of another range. A
// token of a range that split is cut to the child read, keeping its ETag.
func TestClampContinuation(t *testing.T) {
	tests := []struct {
		name  string
		token string
		r     store.FeedRange
		want  string // "" = refused; "same" = handed to the SDK unchanged
	}{
		{"token of the whole range", compositeOf(`{"minInclusive":"","maxExclusive":"FF","continuationToken":"\"12\""}`), whole, "same"},
		{"token of the left half", compositeOf(`{"minInclusive":"","maxExclusive":"7F","continuationToken":"\"5\""}`), left, "same"},
		{"split children of the right half", compositeOf(`{"minInclusive":"7F","maxExclusive":"BF"},{"minInclusive":"BF","maxExclusive":"FF"}`), right, "same"},
		{"lower case bounds", compositeOf(`{"minInclusive":"7f","maxExclusive":"bf"},{"minInclusive":"bf","maxExclusive":"ff"}`), right, "same"},
		{"parent token read over its left child", compositeOf(`{"minInclusive":"","maxExclusive":"FF","continuationToken":"\"12\""}`), left,
			compositeOf(`{"continuationToken":"\"12\"","maxExclusive":"7F","minInclusive":""}`)},
		{"expanded parent token read over its right child", compositeOf(`{"minInclusive":"","maxExclusive":"7F","continuationToken":"\"5\""},{"minInclusive":"7F","maxExclusive":"FF","continuationToken":"\"9\""}`), right,
			compositeOf(`{"continuationToken":"\"9\"","maxExclusive":"FF","minInclusive":"7F"}`)},
		{"left token on the right range", compositeOf(`{"minInclusive":"","maxExclusive":"7F"}`), right, ""},
		{"right token on the left range", compositeOf(`{"minInclusive":"7F","maxExclusive":"FF"}`), left, ""},
		{"a token that leaves part of the range unread", compositeOf(`{"minInclusive":"7F","maxExclusive":"BF"}`), right, ""},
		{"raw etag, as older SDKs returned", `"12"`, whole, ""},
		{"empty composite", compositeOf(``), whole, ""},
		{"garbage", `not a token`, whole, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := clampContinuation(tc.token, tc.r)
			switch {
			case tc.want == "":
				if domain.ErrorCode(err) != domain.EINVALID {
					t.Errorf("code = %q (%v), want %q", domain.ErrorCode(err), err, domain.EINVALID)
				}
			case err != nil:
				t.Errorf("refused: %v", err)
			case tc.want == "same" && got != tc.token:
				t.Errorf("token = %s, want it unchanged", got)
			case tc.want != "same" && !jsonEqual(t, got, tc.want):
				t.Errorf("token = %s, want %s", got, tc.want)
			}
		})
	}
}

// FeedFromNow's start token becomes StartFrom on the first read, on its
// range and on the children of it; a composite token becomes the
// Continuation.
func TestResumeOptions(t *testing.T) {
	at := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		token     string
		r         store.FeedRange
		startFrom *time.Time
		resume    bool
		refused   bool
	}{
		{"start token of the range", newStartToken(whole, at), whole, &at, false, false},
		{"start token of a range that split, on a child", newStartToken(whole, at), right, &at, false, false},
		{"start token of another range", newStartToken(left, at), right, nil, false, true},
		{"composite token", compositeOf(`{"minInclusive":"","maxExclusive":"FF","continuationToken":"\"3\""}`), whole, nil, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts azcosmos.ChangeFeedOptions
			err := resumeOptions(&opts, tc.token, tc.r)
			if tc.refused {
				if domain.ErrorCode(err) != domain.EINVALID {
					t.Errorf("code = %q (%v), want %q", domain.ErrorCode(err), err, domain.EINVALID)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (opts.StartFrom == nil) != (tc.startFrom == nil) || (tc.startFrom != nil && !opts.StartFrom.Equal(*tc.startFrom)) {
				t.Errorf("StartFrom = %v, want %v", opts.StartFrom, tc.startFrom)
			}
			if got := opts.Continuation != nil; got != tc.resume {
				t.Errorf("Continuation set = %v, want %v", got, tc.resume)
			}
		})
	}
}

// The lag of a page: the partition's latest LSN (lsn header, else the
// session token's global LSN) minus the last item's _lsn.
func TestRemaining(t *testing.T) {
	resp := func(kv ...string) *http.Response {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return &http.Response{Header: h}
	}
	items := [][]byte{[]byte(`{"id":"a","_lsn":40}`), []byte(`{"id":"b","_lsn":42}`)}
	tests := []struct {
		name  string
		resp  *http.Response
		items [][]byte
		want  int64
	}{
		{"lsn header ahead of the last item", resp("lsn", "50"), items, 8},
		{"caught up", resp("lsn", "42"), items, 0},
		{"session token v2", resp("x-ms-session-token", "0:1#57#3=56"), items, 15},
		{"session token v1", resp("x-ms-session-token", "3:45"), items, 3},
		{"lsn header wins over the session token", resp("lsn", "44", "x-ms-session-token", "0:1#57"), items, 2},
		{"a latest LSN behind the item counts as none left", resp("lsn", "30"), items, 0},
		{"empty page: at the end", resp(), nil, 0},
		{"no LSN in the response", resp(), items, -1},
		{"garbage session token", resp("x-ms-session-token", "nonsense"), items, -1},
		{"item without _lsn", resp("lsn", "50"), [][]byte{[]byte(`{"id":"a"}`)}, -1},
		{"no response", nil, items, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := remaining(tc.resp, tc.items); got != tc.want {
				t.Errorf("remaining = %d, want %d", got, tc.want)
			}
		})
	}
}

// A 410 with substatus 1002 is a split partition: the port's
// ErrFeedRangeGone. Other 410s are transient (EUNAVAILABLE alone).
func TestRangeGone(t *testing.T) {
	gone := func(sub string) error {
		h := http.Header{}
		if sub != "" {
			h.Set("x-ms-substatus", sub)
		}
		return &azcore.ResponseError{StatusCode: http.StatusGone, RawResponse: &http.Response{StatusCode: http.StatusGone, Header: h}}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"partition key range gone", gone("1002"), true},
		{"completing a split", gone("1007"), false},
		{"plain 410", gone(""), false},
		{"not a response", errors.New("boom"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rangeGone(tc.err); got != tc.want {
				t.Errorf("rangeGone = %v, want %v", got, tc.want)
			}
		})
	}
	err := store.FeedRangeGone(right)
	if !errors.Is(err, store.ErrFeedRangeGone) || domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Errorf("FeedRangeGone = %v (code %q), want EUNAVAILABLE wrapping ErrFeedRangeGone", err, domain.ErrorCode(err))
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return reflect.DeepEqual(x, y)
}
