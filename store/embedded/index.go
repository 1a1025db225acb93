package embedded

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"shop/store"
)

// indexPolicy decides, per property path, whether a write indexes it. Only
// its effect on the write charge is simulated: Cosmos charges each index
// term a write adds or removes, so excluding large unqueried fields from
// the index (index-exclude-unused) makes every write cheaper, here as there.
type indexPolicy struct {
	patterns []indexPattern
}

type indexPattern struct {
	prefix   []string // property names, "[]" for any array element
	subtree  bool     // "/*": the prefix and everything under it; "/?": the scalar at prefix
	excluded bool
}

func newIndexPolicy(p store.IndexingPolicy) indexPolicy {
	var ip indexPolicy
	add := func(paths []string, excluded bool) {
		for _, path := range paths {
			segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
			last := segs[len(segs)-1]
			pat := indexPattern{subtree: last == "*", excluded: excluded}
			for _, s := range segs[:len(segs)-1] {
				pat.prefix = append(pat.prefix, strings.Trim(s, `"`))
			}
			ip.patterns = append(ip.patterns, pat)
		}
	}
	add(p.IncludedPaths, false)
	add(p.ExcludedPaths, true)
	return ip
}

// indexed applies Cosmos's rule that the most precise matching path wins
// (a scalar path "/?" over a subtree "/*" of the same prefix, excluded over
// included on a tie). A path no pattern matches is indexed, as with the
// default policy "/*".
func (ip indexPolicy) indexed(path []string) bool {
	best, excluded := -1, false
	for _, p := range ip.patterns {
		if !p.matches(path) {
			continue
		}
		score := 2 * len(p.prefix)
		if !p.subtree {
			score++
		}
		if score > best || (score == best && p.excluded) {
			best, excluded = score, p.excluded
		}
	}
	return !excluded
}

func (p indexPattern) matches(path []string) bool {
	if len(path) < len(p.prefix) || (!p.subtree && len(path) != len(p.prefix)) {
		return false
	}
	for i, s := range p.prefix {
		if s != path[i] {
			return false
		}
	}
	return true
}

// terms returns the index terms the policy makes of doc, a stored JSON
// object, with how many times each occurs. Cosmos indexes each scalar at
// its path, an array element at its position (/tags/0), so a term is the
// path and the value; the system properties are not counted. It reads the
// JSON token by token: no Go value of the document is built.
func (ip indexPolicy) terms(doc []byte) (map[string]int, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	w := termWalk{ip: ip, d: d, path: make([]string, 0, 8), terms: make(map[string]int)}
	if err := w.value(""); err != nil {
		return nil, err
	}
	return w.terms, nil
}

// termWalk reads one document for indexPolicy.terms.
type termWalk struct {
	ip    indexPolicy
	d     *json.Decoder
	path  []string // the policy's view of the path: "[]" for any array element
	terms map[string]int
}

// value reads the value at w.path, whose term is key.
func (w *termWalk) value(key string) error {
	tok, err := w.d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		for w.d.More() {
			name, err := w.d.Token()
			if err != nil {
				return err
			}
			k, _ := name.(string)
			if len(w.path) == 0 && (k == "_etag" || k == "_ts") {
				var skip json.RawMessage
				if err := w.d.Decode(&skip); err != nil {
					return err
				}
				continue
			}
			w.path = append(w.path, k)
			err = w.value(key + "/" + strconv.Quote(k))
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
		_, err = w.d.Token()
		return err
	case json.Delim('['):
		for i := 0; w.d.More(); i++ {
			w.path = append(w.path, "[]")
			err := w.value(key + "/" + strconv.Itoa(i))
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
		_, err = w.d.Token()
		return err
	}
	if w.ip.indexed(w.path) {
		w.terms[key+"="+scalarText(tok)]++
	}
	return nil
}

// scalarText writes a JSON scalar so that values of different types
// differ ("1" and 1).
func scalarText(tok json.Token) string {
	switch v := tok.(type) {
	case string:
		return strconv.Quote(v)
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return "null"
}

// countTerms is how many terms a document of these terms has.
func countTerms(terms map[string]int) int {
	n := 0
	for _, c := range terms {
		n += c
	}
	return n
}

// changedTerms is how many terms an overwrite removes from old and adds
// from new: the terms both hold are left as they are.
func changedTerms(old, new map[string]int) int {
	n := 0
	for t, c := range new {
		n += max(0, c-old[t])
	}
	for t, c := range old {
		n += max(0, c-new[t])
	}
	return n
}
