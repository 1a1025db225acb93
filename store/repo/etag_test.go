package repo

import "testing"

func TestETagMatches(t *testing.T) {
	const cur = `"00-7"`
	for _, tc := range []struct {
		ifMatch string
		want    bool
	}{
		{`"00-7"`, true},
		{`*`, true},
		{` * `, true},
		{`"a", "00-7"`, true},
		{`"a","00-7" , "b"`, true},
		{`"a", "b"`, false},
		{`W/"00-7"`, false},
		{`00-7`, false},
		{`"00-7`, false},
		{`*, "00-7"`, false},
		{`"00-7x"`, false},
	} {
		if got := etagMatches(tc.ifMatch, cur); got != tc.want {
			t.Errorf("etagMatches(%q, %q) = %v, want %v", tc.ifMatch, cur, got, tc.want)
		}
	}
}
