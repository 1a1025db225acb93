package embedded

import (
	"strings"

	"github.com/reference-shop/shop/store"
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
func (ip indexPolicy) indexed(path [][]byte) bool {
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

func (p indexPattern) matches(path [][]byte) bool {
	if len(path) < len(p.prefix) || (!p.subtree && len(path) != len(p.prefix)) {
		return false
	}
	for i, s := range p.prefix {
		if s != string(path[i]) {
			return false
		}
	}
	return true
}
