package domain

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Search limits: what a query may hold, and what it must.
const (
	MaxSearchWords = 5   // words of a query, stop words included
	MaxSearchBytes = 200 // bytes of a query
	MaxTags        = 10  // tags of a product
	MaxTagBytes    = 40  // bytes of a tag
)

// stopWords are not indexed: held by most products, they would each be a
// partition of the whole catalog that no search needs.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true,
	"be": true, "by": true, "for": true, "from": true, "in": true, "into": true,
	"is": true, "it": true, "its": true, "of": true, "on": true, "or": true,
	"the": true, "this": true, "that": true, "to": true, "with": true,
}

// foldMarks decomposes (NFD), drops the combining marks and recomposes:
// "café" becomes "cafe", "Ångström" "Angstrom". A chain keeps state
// between calls, so each call makes its own.
func foldMarks() transform.Transformer {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}

// Fold is the text a word is compared by: Unicode NFKC (so the
// full-width "ｍｕｇ" and the ligature "ﬁ" read as "mug" and "fi"), lower
// case, diacritics removed. Products and queries are folded alike.
func Fold(s string) string {
	if isASCII(s) {
		// NFKC and the marks' removal leave ASCII as it is: a search
		// folds its words at every request, and this is most of them.
		return strings.ToLower(s)
	}
	s = strings.ToLower(norm.NFKC.String(s))
	out, _, err := transform.String(foldMarks(), s)
	if err != nil {
		return s
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Words splits s into its folded words: runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(Fold(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

// Stem is the simple plural fold of a folded word: "mugs" and "mug",
// "glasses" and "glass", "berries" and "berry", "boxes" and "box",
// "caches" and "cache" share a term. It is deliberately small: an English
// plural, no other inflection, and short words are left alone ("bus",
// "gas", "is"). A term is never shown, so it need not be a word: "cache"
// and "caches" both become "cach", as "es" after ch, sh, x or z is taken
// for the plural's ("watches"), and a singular ending in those and an e
// loses the e to meet its plural.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	for _, e := range []string{"che", "she", "xe", "ze"} {
		if strings.HasSuffix(w, e) {
			return w[:len(w)-1]
		}
	}
	return w
}

// Terms are the distinct index terms of a text, in order of first
// appearance: its words, stop words left out, plurals folded.
func Terms(texts ...string) []string {
	var out []string
	for _, t := range texts {
		for _, w := range Words(t) {
			if stopWords[w] {
				continue
			}
			if s := Stem(w); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// SearchTerms are the terms a product is found by: the words of its name,
// of its category's name and of its tags. A deleted product has none.
func SearchTerms(p Product) []string {
	if p.Deleted {
		return nil
	}
	return Terms(append([]string{p.Name, p.CategoryName}, p.Tags...)...)
}

// ParseQuery checks a search query and returns its distinct terms. It is
// EINVALID when q is empty, not UTF-8, longer than MaxSearchBytes, holds a control
// character or more than MaxSearchWords words, or when no word is left
// once the stop words are out.
func ParseQuery(q string) ([]string, error) {
	invalid := func(detail string) error { return Errorf(EINVALID, "q %s", detail) }
	switch {
	case strings.TrimSpace(q) == "":
		return nil, invalid("is required")
	case len(q) > MaxSearchBytes:
		return nil, invalid("must be at most 200 bytes")
	case !utf8.ValidString(q):
		return nil, invalid("must be UTF-8")
	case strings.IndexFunc(q, unicode.IsControl) >= 0:
		return nil, invalid("must not hold control characters")
	case len(Words(q)) > MaxSearchWords:
		return nil, invalid("must hold at most 5 words")
	}
	terms := Terms(q)
	if len(terms) == 0 {
		return nil, invalid("holds no word that is searched (only stop words or punctuation)")
	}
	return terms, nil
}
