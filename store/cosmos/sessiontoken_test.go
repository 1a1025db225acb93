package cosmos

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reference-shop/shop/store"
)

func mustToken(t *testing.T, s string) rangeToken {
	t.Helper()
	tok, ok := parseToken(s)
	if !ok {
		t.Fatalf("parseToken(%q) refused it", s)
	}
	return tok
}

// The merge rules of the .NET and Java SDKs' VectorSessionToken and
// SimpleSessionToken.
func TestMergeSessionTokens(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string // "" when the two do not merge
	}{
		{"simple: the higher LSN", "100", "200", "200"},
		{"simple: equal", "100", "100", "100"},
		{"single region: the higher global LSN", "-1#12", "-1#15", "-1#15"},
		{"same version: each region at its higher LSN", "1#100#1=20#2=5#3=30", "1#100#1=10#2=8#3=30", "1#100#1=20#2=8#3=30"},
		{"same version: the higher global LSN too", "1#100#1=20#2=5#3=30", "1#102#1=100#2=8#3=30", "1#102#1=100#2=8#3=30"},
		{"higher version: its regions, a region only the older had is dropped", "1#100#1=20#2=5#3=30", "2#105#4=10#2=5#3=30", "2#105#2=5#3=30#4=10"},
		{"higher version with a lower global LSN: the higher of each", "3#50#0=7", "2#90#0=9", "3#90#0=9"},
		{"same version, another number of regions", "1#101#1=20#2=5#3=30", "1#100#1=20#2=5#3=30#4=40", ""},
		{"same version, other regions", "1#5#1=3", "1#6#2=4", ""},
		{"simple and vector", "100", "1#100", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mustToken(t, tc.a), mustToken(t, tc.b)
			for _, order := range [][2]rangeToken{{a, b}, {b, a}} {
				got, ok := merge(order[0], order[1])
				switch {
				case tc.want == "" && ok:
					t.Errorf("merge(%s, %s) = %s, want no merge", order[0], order[1], got)
				case tc.want != "" && !ok:
					t.Errorf("merge(%s, %s) refused, want %s", order[0], order[1], tc.want)
				case tc.want != "" && got.String() != tc.want:
					t.Errorf("merge(%s, %s) = %s, want %s", order[0], order[1], got, tc.want)
				}
			}
			// Where the SDKs fail, the later token replaces the held one.
			if tc.want == "" {
				if got := mergeTokens(a, b).String(); got != b.String() {
					t.Errorf("mergeTokens(%s, %s) = %s, want the later one", a, b, got)
				}
			}
		})
	}
}

func TestParseSessionToken(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when refused
	}{
		{"500", "500"},
		{"-1#12", "-1#12"},
		{"1#100#3=30#1=20", "1#100#1=20#3=30"},
		{"", ""},
		{"foo", ""},
		{"1#", ""},
		{"#1", ""},
		{"1#foo", ""},
		{"foo#100#1=20", ""},
		{"1#100#1=x", ""},
		{"1#100#1", ""},
		{"1#100#1=2=3", ""},
		{"1#100#1=20#1=30", ""},
		{"+1#2", ""},
		{" 1#2", ""},
		{"1;100#1=20", ""},
		{"99999999999999999999#1", ""},
	}
	for _, tc := range tests {
		got, ok := parseToken(tc.in)
		switch {
		case tc.want == "" && ok:
			t.Errorf("parseToken(%q) = %s, want it refused", tc.in, got)
		case tc.want != "" && (!ok || got.String() != tc.want):
			t.Errorf("parseToken(%q) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
}

// x-ms-session-token carries one entry per range, "<pkRangeId>:<token>".
func TestSessionTokenHeader(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"one range", "0:1#12#0=5", "0:1#12#0=5"},
		{"ranges in numeric order", "10:-1#3,2:-1#4", "2:-1#4,10:-1#3"},
		{"the older simple form", "0:57", "0:57"},
		{"a range twice is merged", "0:-1#5,0:-1#9", "0:-1#9"},
		{"unreadable entries are skipped", "0:-1#5,junk,x:-1#2,1:y,2:-1#3", "0:-1#5,2:-1#3"},
		{"no range id", "-1#5", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatHeader(parseHeader(tc.in)); got != tc.want {
				t.Errorf("formatHeader(parseHeader(%q)) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// The client's token: "<container>/<pkRangeId>:<token>" entries.
func TestClientSessionToken(t *testing.T) {
	t.Run("MergesTheResponse", func(t *testing.T) {
		got := withResponse("products/0:1#20#0=9,carts/0:1#4#0=2", "products", parseHeader("0:1#12#0=5,1:1#3#0=1"))
		if want := "carts/0:1#4#0=2,products/0:1#20#0=9,products/1:1#3#0=1"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("IgnoresWhatItCannotRead", func(t *testing.T) {
		got := withResponse("bad name/0:-1#3,products/zero:-1#3,products,orders/0:nope", "carts", parseHeader("0:-1#2"))
		if want := "carts/0:-1#2"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("DropsAContainer", func(t *testing.T) {
		if got, want := withoutContainer("carts/0:-1#2,products/0:-1#5", "products"), "carts/0:-1#2"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("StaysWithinTheBound", func(t *testing.T) {
		var old []string
		for i := range 400 {
			old = append(old, fmt.Sprintf("c%03d/0:-1#%d", i, 1000000+i))
		}
		got := withResponse(strings.Join(old, ","), "products", parseHeader("0:-1#77"))
		if len(got) > store.MaxSessionTokenBytes {
			t.Fatalf("%d bytes, over %d", len(got), store.MaxSessionTokenBytes)
		}
		if err := store.CheckSessionToken(got); err != nil {
			t.Errorf("the API would refuse it: %v", err)
		}
		if !strings.Contains(got, "products/0:-1#77") {
			t.Errorf("the response's own token was left out: %.80s...", got)
		}
		if !strings.HasPrefix(got, "c000/0:") {
			t.Errorf("the older entries are not kept in order: %.80s...", got)
		}
	})
}

func TestSessions(t *testing.T) {
	t.Run("KeepsTheHigher", func(t *testing.T) {
		s := newSessions()
		s.capture("shop", "carts", "", parseHeader("0:1#12#0=5"))
		s.capture("shop", "carts", "", parseHeader("0:1#10#0=4")) // a lagging replica answered
		if got, want := s.tokenFor("shop", "carts", nil), "0:1#12#0=5"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("MergesTheClients", func(t *testing.T) {
		s := newSessions()
		s.capture("shop", "carts", "", parseHeader("0:1#12#0=5"))
		client := parseClient("carts/0:1#20#0=9,carts/3:1#2#0=1,orders/0:1#99#0=99")["carts"]
		if got, want := s.tokenFor("shop", "carts", client), "0:1#20#0=9,3:1#2#0=1"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if got, want := s.tokenFor("shop", "carts", nil), "0:1#12#0=5"; got != want {
			t.Errorf("the client's token stayed in the process: got %q, want %q", got, want)
		}
	})
	t.Run("ContainersAndDatabasesApart", func(t *testing.T) {
		s := newSessions()
		s.capture("shop", "carts", "", parseHeader("0:-1#5"))
		s.capture("other", "carts", "", parseHeader("0:-1#9"))
		if got, want := s.tokenFor("shop", "orders", nil), ""; got != want {
			t.Errorf("orders: got %q, want %q", got, want)
		}
		s.forgetDatabase("other")
		if got, want := s.tokenFor("other", "carts", nil), ""; got != want {
			t.Errorf("after forgetDatabase: got %q, want %q", got, want)
		}
		if got, want := s.tokenFor("shop", "carts", nil), "0:-1#5"; got != want {
			t.Errorf("the other database's forget reached shop: got %q, want %q", got, want)
		}
	})
	t.Run("ARecreatedContainerStartsOver", func(t *testing.T) {
		s := newSessions()
		s.capture("shop", "carts", "rid1=", parseHeader("0:-1#500"))
		s.capture("shop", "carts", "", parseHeader("1:-1#7"))
		s.capture("shop", "carts", "rid2=", parseHeader("0:-1#3"))
		if got, want := s.tokenFor("shop", "carts", nil), "0:-1#3"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("BoundedRanges", func(t *testing.T) {
		s := newSessions()
		for i := range maxSessionRanges + 3 {
			s.capture("shop", "carts", "", parseHeader(fmt.Sprintf("%d:-1#%d", i, i+1)))
		}
		got := parseHeader(s.tokenFor("shop", "carts", nil))
		if len(got) != maxSessionRanges {
			t.Fatalf("%d ranges kept, want %d", len(got), maxSessionRanges)
		}
		for _, gone := range []string{"0", "1", "2"} {
			if _, ok := got[gone]; ok {
				t.Errorf("range %s, updated longest ago, is still kept", gone)
			}
		}
	})
}
