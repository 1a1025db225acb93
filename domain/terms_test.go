package domain

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
	"pgregory.net/rapid"
)

func TestTermsFoldBothSides(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{"diacritics", "Café Crème", []string{"cafe", "creme"}},
		{"case", "OAK Oak oak", []string{"oak"}},
		{"NFKC full width", "ｍｕｇ", []string{"mug"}},
		{"NFKC ligature", "ﬁne", []string{"fine"}},
		{"plural s", "mugs", []string{"mug"}},
		{"plural ies", "berries", []string{"berry"}},
		{"plural es", "glasses boxes dishes", []string{"glass", "box", "dish"}},
		{"short words kept", "bus gas", []string{"bus", "gas"}},
		{"ss kept", "glass", []string{"glass"}},
		{"stop words out", "the mug with a lid", []string{"mug", "lid"}},
		{"punctuation splits", "oak-wood, (tray)", []string{"oak", "wood", "tray"}},
		{"digits kept", "mug 250ml", []string{"mug", "250ml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Terms(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("Terms(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestStemFoldsASingularAndItsPlural(t *testing.T) {
	for _, pair := range [][2]string{
		{"mug", "mugs"}, {"glass", "glasses"}, {"berry", "berries"}, {"box", "boxes"},
		{"dish", "dishes"}, {"watch", "watches"}, {"cache", "caches"}, {"niche", "niches"},
		{"size", "sizes"}, {"shoe", "shoes"}, {"lamp", "lamps"}, {"case", "cases"},
	} {
		if a, b := Stem(pair[0]), Stem(pair[1]); a != b {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q: want the same term", pair[0], a, pair[1], b)
		}
	}
	for _, pair := range [][2]string{{"pan", "pane"}, {"cap", "cape"}, {"bat", "bath"}} {
		if a, b := Stem(pair[0]), Stem(pair[1]); a == b {
			t.Errorf("Stem(%q) = Stem(%q) = %q: two words, want two terms", pair[0], pair[1], a)
		}
	}
}

func TestParseQueryRefusesBadInput(t *testing.T) {
	long := make([]byte, 1000)
	for i := range long {
		long[i] = 'a'
	}
	for _, tc := range []struct{ name, q string }{
		{"empty", ""},
		{"blank", "   "},
		{"six words", "red blue oak mug lamp box"},
		{"1000 characters", string(long)},
		{"control character", "mug\x00"},
		{"newline", "mug\nlamp"},
		{"only stop words", "the and of"},
		{"only punctuation", "-- !!"},
		{"not UTF-8", "caf\xe9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseQuery(tc.q); !IsCode(err, EINVALID) {
				t.Errorf("ParseQuery(%q) = %v, want %s", tc.q, err, EINVALID)
			}
		})
	}
	t.Run("five words", func(t *testing.T) {
		got, err := ParseQuery("Red mugs, Café OAK lamp")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"red", "mug", "cafe", "oak", "lamp"}; !slices.Equal(got, want) {
			t.Errorf("terms = %q, want %q", got, want)
		}
	})
}

func TestSearchRankOrdersBestRatedThenName(t *testing.T) {
	ranks := []string{
		SearchRank(4.5, "Zebra mug"),
		SearchRank(4.5, "apple mug"),
		SearchRank(5, "Yak"),
		SearchRank(0, "Aardvark"),
	}
	slices.Sort(ranks)
	want := []string{SearchRank(5, "Yak"), SearchRank(4.5, "apple mug"), SearchRank(4.5, "Zebra mug"), SearchRank(0, "Aardvark")}
	if !slices.Equal(ranks, want) {
		t.Errorf("order %q, want %q", ranks, want)
	}
}

// TestFoldOfASCIIIsTheFullFold: the ASCII shortcut of Fold gives what the
// whole fold (NFKC, lower case, marks removed) gives.
func TestFoldOfASCIIIsTheFullFold(t *testing.T) {
	full := func(s string) string {
		s = strings.ToLower(norm.NFKC.String(s))
		out, _, err := transform.String(foldMarks(), s)
		if err != nil {
			return s
		}
		return out
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringOf(rapid.RuneFrom(nil, &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: 0x7f, Stride: 1}}})).Draw(t, "s")
		if got, want := Fold(s), full(s); got != want {
			t.Fatalf("Fold(%q) = %q, want %q", s, got, want)
		}
	})
}
