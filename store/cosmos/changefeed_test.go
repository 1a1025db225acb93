package cosmos

import (
	"testing"

	"shop/domain"
	"shop/store"
)

// The SDK restarts from the beginning on a token it cannot parse; the
// adapter refuses such tokens instead, and tokens of another range.
func TestCheckContinuation(t *testing.T) {
	whole := store.FeedRange{Min: "", Max: "FF"}
	left := store.FeedRange{Min: "", Max: "7F"}
	right := store.FeedRange{Min: "7F", Max: "FF"}
	token := func(ranges string) string {
		return `{"version":1,"resourceId":"abc=","continuation":[` + ranges + `]}`
	}
	tests := []struct {
		name  string
		token string
		r     store.FeedRange
		ok    bool
	}{
		{"token of the whole range", token(`{"minInclusive":"","maxExclusive":"FF","continuationToken":"\"12\""}`), whole, true},
		{"token of the left half", token(`{"minInclusive":"","maxExclusive":"7F","continuationToken":"\"5\""}`), left, true},
		{"split children of the right half", token(`{"minInclusive":"7F","maxExclusive":"BF"},{"minInclusive":"BF","maxExclusive":"FF"}`), right, true},
		{"lower case bounds", token(`{"minInclusive":"7f","maxExclusive":"bf"}`), right, true},
		{"left token on the right range", token(`{"minInclusive":"","maxExclusive":"7F"}`), right, false},
		{"right token on the left range", token(`{"minInclusive":"7F","maxExclusive":"FF"}`), left, false},
		{"raw etag, as older SDKs returned", `"12"`, whole, false},
		{"empty composite", token(``), whole, false},
		{"garbage", `not a token`, whole, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkContinuation(tc.token, tc.r)
			if tc.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tc.ok && domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("code = %q (%v), want %q", domain.ErrorCode(err), err, domain.EINVALID)
			}
		})
	}
}
