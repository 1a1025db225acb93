package embedded

import (
	"strings"

	"shop/store"
)

// indexPolicy decides, per property path, whether a write indexes it. Only
// its effect on the write charge is simulated: Cosmos charges each indexed
// property of a write, so excluding large unqueried fields from the index
// (index-exclude-unused) makes every write cheaper, here as there.
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

// countIndexed counts the scalar properties of a document that the policy
// indexes; the system properties are not counted.
func (ip indexPolicy) countIndexed(m map[string]any) int {
	n := 0
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if len(path) == 0 && (k == "_etag" || k == "_ts") {
					continue
				}
				walk(child, append(path, k))
			}
		case []any:
			for _, child := range v {
				walk(child, append(path, "[]"))
			}
		default:
			if ip.indexed(path) {
				n++
			}
		}
	}
	walk(m, make([]string, 0, 8))
	return n
}
