package embedded

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// sortValues are ORDER BY values of every rank, with the edge cases of the
// encoding: -0 and 0, negatives, 0x00 inside strings, prefixes, numbers
// out of float64 range (ordered as JSON text), long values that are cut.
var sortValues = []string{
	"", "null", "false", "true",
	"0", "-0", "0.0", "1", "1.0", "-1", "2", "10", "-10", "0.5", "-0.5", "1e-300", "-1e-300",
	"1.7976931348623157e308", "-1.7976931348623157e308", "5e-324", "1e999", "-1e999",
	`""`, `"a"`, `"a\u0000"`, `"a\u0000b"`, `"a\u0001"`, `"ab"`, `"b"`, `"\u0000"`, `"é"`, `"\uffff"`, `"A"`, `"2026-11-29T12:00:00Z"`,
	`[]`, `[1]`, `[1,2]`, `["a"]`, `{}`, `{"a":1}`, `{"a":2}`,
	`"` + strings.Repeat("x", maxIndexedBytes-1) + `"`,
	`"` + strings.Repeat("x", maxIndexedBytes) + `"`,
	`"` + strings.Repeat("x", maxIndexedBytes+1) + `"`,
	`"` + strings.Repeat("x", maxIndexedBytes) + `a"`,
	`"` + strings.Repeat("x", maxIndexedBytes) + `b"`,
	`"` + strings.Repeat("x", maxIndexedBytes-1) + `y"`,
}

// TestSortKeyEncodingKeepsOrder: comparing two encodings bytewise gives the
// order compareSortKeys gives the values, except that values cut to the
// same bytes encode equal (the walk sorts those by their real values).
func TestSortKeyEncodingKeepsOrder(t *testing.T) {
	keys := make([]sortKey, len(sortValues))
	for i, v := range sortValues {
		keys[i] = newSortKey(json.RawMessage(v))
	}
	for i, a := range keys {
		ea := appendSortKey(nil, a)
		if got, want := sortKeyLen(append(ea, "id"...)), len(ea); got != want {
			t.Errorf("%s: encoded length read back = %d, want %d", sortValues[i], got, want)
		}
		for j, b := range keys {
			eb := appendSortKey(nil, b)
			got, want := bytes.Compare(ea, eb), compareSortKeys(a, b)
			if got == 0 && want != 0 && truncated(ea) {
				continue
			}
			if got != want {
				t.Errorf("%s vs %s: encodings compare %d, values %d", sortValues[i], sortValues[j], got, want)
			}
		}
	}
}

// TestSortKeyEncodingRandomNumbers checks the number encoding on random
// doubles of every magnitude and sign.
func TestSortKeyEncodingRandomNumbers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a := (r.Float64() - 0.5) * float64(r.Uint64()>>r.IntN(64))
		b := (r.Float64() - 0.5) * float64(r.Uint64()>>r.IntN(64))
		ka, kb := sortKey{rank: rankNumber, num: a}, sortKey{rank: rankNumber, num: b}
		if got, want := bytes.Compare(appendSortKey(nil, ka), appendSortKey(nil, kb)), cmp.Compare(a, b); got != want {
			t.Fatalf("%v vs %v: encodings compare %d, numbers %d", a, b, got, want)
		}
	}
}

func TestSortKeyLenRefusesMalformed(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unknown rank", []byte{9}},
		{"short number", []byte{rankNumber, 1, 2}},
		{"short boolean", []byte{rankBool}},
		{"unterminated string", []byte{rankString, 'a', 0x00, 0xFF}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sortKeyLen(tt.b); got != -1 {
				t.Errorf("sortKeyLen(%q) = %d, want -1", tt.b, got)
			}
		})
	}
}

// TestPlainStringDecodesAsJSON: the shortcut for strings without escapes
// gives what decoding the JSON gives.
func TestPlainStringDecodesAsJSON(t *testing.T) {
	for _, raw := range []string{`""`, `"a"`, `"é ü"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, "\"a\xffb\"", "\"a\x01\"", `"`, `"a`} {
		var want string
		err := json.Unmarshal([]byte(raw), &want)
		got := newSortKey(json.RawMessage(raw))
		if err == nil && (got.rank != rankString || got.str != want) {
			t.Errorf("newSortKey(%q) = %+v, want the string %q", raw, got, want)
		}
		if plainString([]byte(raw)) && err != nil {
			t.Errorf("plainString(%q) = true for invalid JSON", raw)
		}
	}
}
