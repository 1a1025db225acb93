package cosmos

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Session tokens as Cosmos writes them in x-ms-session-token: a comma-
// separated list of "<pkRangeId>:<token>", one per partition key range,
// where <token> is a vector token
//
//	<version>#<globalLSN>#<regionId>=<localLSN>#<regionId>=<localLSN>...
//
// (version: the partition's configuration number, raised on every
// topology change such as a failover or a region added; the region
// progress is absent on a single-region account), or the older simple
// token "<lsn>". The rules below are those of the .NET and Java SDKs'
// VectorSessionToken and SimpleSessionToken, with one difference stated at
// mergeTokens.

// rangeToken is the session token of one partition key range.
type rangeToken struct {
	simple    bool // the older "<lsn>" form: only globalLSN is set
	version   int64
	globalLSN int64
	regions   []regionLSN // sorted by region, no duplicates
}

// regionLSN is one region's progress in a vector token.
type regionLSN struct {
	region int32
	lsn    int64
}

// parseToken reads one range's token (without its "<pkRangeId>:").
func parseToken(s string) (rangeToken, bool) {
	if !strings.Contains(s, "#") {
		lsn, ok := parseInt(s)
		return rangeToken{simple: true, globalLSN: lsn}, ok
	}
	segs := strings.Split(s, "#")
	if len(segs) < 2 {
		return rangeToken{}, false
	}
	var t rangeToken
	var ok1, ok2 bool
	t.version, ok1 = parseInt(segs[0])
	t.globalLSN, ok2 = parseInt(segs[1])
	if !ok1 || !ok2 {
		return rangeToken{}, false
	}
	for _, seg := range segs[2:] {
		id, lsn, found := strings.Cut(seg, "=")
		region, err := strconv.ParseInt(id, 10, 32)
		n, ok := parseInt(lsn)
		if !found || err != nil || !ok || !digits(strings.TrimPrefix(id, "-")) {
			return rangeToken{}, false
		}
		t.regions = append(t.regions, regionLSN{int32(region), n})
	}
	slices.SortFunc(t.regions, func(a, b regionLSN) int { return cmp.Compare(a.region, b.region) })
	for i := 1; i < len(t.regions); i++ {
		if t.regions[i].region == t.regions[i-1].region {
			return rangeToken{}, false // a region twice: not a token Cosmos writes
		}
	}
	return t, true
}

// parseInt reads a decimal int64 with an optional minus sign (a version
// of -1 is common) and nothing else: no plus, no spaces.
func parseInt(s string) (int64, bool) {
	if !digits(strings.TrimPrefix(s, "-")) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String writes the token back in Cosmos's form, regions in order.
func (t rangeToken) String() string {
	if t.simple {
		return strconv.FormatInt(t.globalLSN, 10)
	}
	var b strings.Builder
	b.WriteString(strconv.FormatInt(t.version, 10))
	b.WriteByte('#')
	b.WriteString(strconv.FormatInt(t.globalLSN, 10))
	for _, r := range t.regions {
		b.WriteByte('#')
		b.WriteString(strconv.FormatInt(int64(r.region), 10))
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(r.lsn, 10))
	}
	return b.String()
}

// merge is the SDKs' Merge: the token at least as far along as both.
// Simple tokens: the higher LSN. Vector tokens: the higher version and
// the higher global LSN; the regions are those of the higher version's
// token, each at the higher of its two local LSNs (a region only the older
// configuration had is dropped). Two tokens of the same version must name
// the same regions, and a simple token does not merge with a vector one:
// for those ok is false (the SDKs raise an internal error).
func merge(a, b rangeToken) (rangeToken, bool) {
	if a.simple || b.simple {
		if !a.simple || !b.simple {
			return rangeToken{}, false
		}
		return rangeToken{simple: true, globalLSN: max(a.globalLSN, b.globalLSN)}, true
	}
	if a.version == b.version && len(a.regions) != len(b.regions) {
		return rangeToken{}, false
	}
	hi, lo := a, b
	if a.version < b.version {
		hi, lo = b, a
	}
	out := rangeToken{version: hi.version, globalLSN: max(a.globalLSN, b.globalLSN)}
	for _, r := range hi.regions {
		i, found := slices.BinarySearchFunc(lo.regions, r.region, func(x regionLSN, id int32) int { return cmp.Compare(x.region, id) })
		switch {
		case found:
			r.lsn = max(r.lsn, lo.regions[i].lsn)
		case a.version == b.version:
			return rangeToken{}, false
		}
		out.regions = append(out.regions, r)
	}
	return out, true
}

// mergeTokens merges held with a token that came after it. Where the SDKs
// would fail the request (two tokens that do not merge), the later token
// replaces the held one: a session token can only make a read wait for a
// replica that far along, so keeping the one the service gave last loses
// nothing a failed request would have kept.
func mergeTokens(held, later rangeToken) rangeToken {
	if m, ok := merge(held, later); ok {
		return m
	}
	return later
}

// parseHeader reads an x-ms-session-token value into its ranges. An entry
// that does not parse is skipped, the others kept.
func parseHeader(v string) map[string]rangeToken {
	out := map[string]rangeToken{}
	for entry := range strings.SplitSeq(v, ",") {
		id, tok, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || !rangeID(id) {
			continue
		}
		t, ok := parseToken(tok)
		if !ok {
			continue
		}
		if held, seen := out[id]; seen {
			t = mergeTokens(held, t)
		}
		out[id] = t
	}
	return out
}

// rangeID reports whether s looks like a partition key range id: Cosmos
// numbers them "0", "1", ... (a split's children get new numbers).
func rangeID(s string) bool { return len(s) <= 20 && digits(s) }

// formatHeader writes ranges as an x-ms-session-token value, ranges in
// numeric order so the same tokens always read the same.
func formatHeader(ranges map[string]rangeToken) string {
	ids := make([]string, 0, len(ranges))
	for id := range ranges {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareRangeIDs)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(id)
		b.WriteByte(':')
		b.WriteString(ranges[id].String())
	}
	return b.String()
}

// compareRangeIDs orders range ids as numbers: "2" before "10".
func compareRangeIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
