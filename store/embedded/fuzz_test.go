package embedded

import (
	"testing"

	"github.com/reference-shop/shop/domain"
)

// fuzzSecret signs the tokens the fuzzer starts from.
var fuzzSecret = []byte("fuzz-secret-0123456789abcdef0123")

// FuzzContinuation feeds arbitrary strings to the continuation decoder,
// both as a whole token and as an already-verified payload, for both
// query and feed tokens: it must answer EINVALID or a token, never panic.
// Seeds are in testdata/fuzz/FuzzContinuation.
func FuzzContinuation(f *testing.F) {
	for _, t := range []token{
		{Kind: tokenQuery, Container: "c", Shape: "00ff", Sort: []byte(`"2026-11-29T12:00:00Z"`), ID: "a", PK: "p"},
		{Kind: tokenQuery, Container: "c", Shape: "00ff", ID: "a", PK: "p"},
		{Kind: tokenFeed, Container: "c", Range: "-40000000", LSN: 42},
	} {
		s, err := encodeToken(fuzzSecret, t)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range []string{tokenQuery, tokenFeed} {
			tok, err := decodeToken(fuzzSecret, s, kind, "c")
			if err != nil {
				if got := domain.ErrorCode(err); got != domain.EINVALID {
					t.Fatalf("decodeToken(%q): code %q, want %q", s, got, domain.EINVALID)
				}
				continue
			}
			if tok.Kind != kind || tok.Container != "c" {
				t.Fatalf("decodeToken(%q) accepted %+v for kind %s of c", s, tok, kind)
			}
			_ = newSortKey(tok.Sort)
		}
		if tok, err := parseToken([]byte(s)); err == nil {
			_ = newSortKey(tok.Sort)
		} else if got := domain.ErrorCode(err); got != domain.EINVALID {
			t.Fatalf("parseToken(%q): code %q, want %q", s, got, domain.EINVALID)
		}
	})
}
