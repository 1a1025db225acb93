package cosmos

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reference-shop/shop/store"
)

// The Go SDK keeps no session tokens, where the .NET, Java and Python SDKs
// keep a session container per client. Without one, on an account at the
// default Session consistency, a read that follows a write can be served
// by a replica that has not seen it yet. sessions is that container: one
// per azcosmos.Client (so per account), filled from every response and
// sent on every read by sessionPolicy (sessionpolicy.go).

// maxSessionRanges bounds the ranges kept per container. A container has
// one range per physical partition, plus the parents its splits left
// behind; past the bound the range updated longest ago is dropped (its
// token is the one every replica has most likely reached).
const maxSessionRanges = 64

// sessions holds the latest session token of every partition key range of
// every container the account has answered for, keyed "<db>/<container>"
// (names hold no "/").
type sessions struct {
	mu         sync.Mutex
	containers map[string]*containerSession
	seq        uint64 // orders updates, for maxSessionRanges
}

// containerSession is one container's tokens.
type containerSession struct {
	// rid is the container's resource id as x-ms-content-path names it:
	// when it changes, the container was deleted and created again under
	// the same name, and the old tokens are ahead of every new replica.
	rid    string
	ranges map[string]heldToken
}

type heldToken struct {
	rangeToken
	seq uint64
}

func newSessions() *sessions {
	return &sessions{containers: map[string]*containerSession{}}
}

func containerKey(db, coll string) string { return db + "/" + coll }

// tokenFor is the x-ms-session-token to send on a read of the container:
// every range's token, merged with the client's for that container.
//
// A request by partition key does not say which range it reaches (the SDK
// resolves no range for it), so, as the .NET SDK does for a request
// without a resolved range, it carries the tokens of all the container's
// ranges and the gateway takes the one of the range it routes to, or of
// that range's parents after a split. maxSessionRanges keeps it bounded.
// Where the client's token and the process's do not merge, the process's
// wins: it came from the service.
func (s *sessions) tokenFor(db, coll string, client map[string]rangeToken) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]rangeToken, len(client))
	for id, t := range client {
		out[id] = t
	}
	if c := s.containers[containerKey(db, coll)]; c != nil {
		for id, h := range c.ranges {
			if t, ok := out[id]; ok {
				out[id] = mergeTokens(t, h.rangeToken)
			} else {
				out[id] = h.rangeToken
			}
		}
	}
	return formatHeader(out)
}

// capture merges the tokens of a response into the container's. rid is
// the response's x-ms-content-path ("" when absent).
func (s *sessions) capture(db, coll, rid string, got map[string]rangeToken) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := containerKey(db, coll)
	c := s.containers[key]
	if c == nil || (rid != "" && c.rid != "" && rid != c.rid) {
		c = &containerSession{ranges: map[string]heldToken{}}
		s.containers[key] = c
	}
	if rid != "" {
		c.rid = rid
	}
	for id, t := range got {
		if h, ok := c.ranges[id]; ok {
			t = mergeTokens(h.rangeToken, t)
		}
		s.seq++
		c.ranges[id] = heldToken{t, s.seq}
	}
	for len(c.ranges) > maxSessionRanges {
		oldest := ""
		for id, h := range c.ranges {
			if oldest == "" || h.seq < c.ranges[oldest].seq {
				oldest = id
			}
		}
		delete(c.ranges, oldest)
	}
}

// forget drops the container's tokens: after a read no replica could serve
// at them (404, substatus 1002, once the SDK's retries in every region are
// spent), the name may belong to a new container. The .NET SDK clears them
// on the same answer (ClearingSessionContainerClientRetryPolicy).
func (s *sessions) forget(db, coll string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.containers, containerKey(db, coll))
}

// forgetDatabase drops the tokens of every container of db (DeleteDatabase).
func (s *sessions) forgetDatabase(db string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.containers {
		if strings.HasPrefix(key, db+"/") {
			delete(s.containers, key)
		}
	}
}

// The client's session token (store.Session) is this package's own
// format: the containers' range tokens as a comma-separated list of
//
//	<container>/<pkRangeId>:<token>
//
// e.g. "carts/0:-1#12,orders/0:-1#7". It names containers, not databases:
// one API serves one database. A container whose name has characters
// outside clientContainer is not carried (the shop's names all fit).
var clientContainer = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)

// clientSession is a parsed client token: container → range → token.
type clientSession map[string]map[string]rangeToken

// parseClient reads a client token. Entries that do not parse are
// ignored: the client loses its guarantee on those ranges, nothing more.
func parseClient(token string) clientSession {
	cs := clientSession{}
	if token == "" {
		return cs
	}
	for entry := range strings.SplitSeq(token, ",") {
		coll, rest, ok := strings.Cut(entry, "/")
		if !ok || !clientContainer.MatchString(coll) {
			continue
		}
		for id, t := range parseHeader(rest) {
			cs.put(coll, id, t)
		}
	}
	return cs
}

// put merges t into the client's token of (coll, id); where they do not
// merge, t wins (the caller passes the service's token as t).
func (cs clientSession) put(coll, id string, t rangeToken) {
	ranges := cs[coll]
	if ranges == nil {
		ranges = map[string]rangeToken{}
		cs[coll] = ranges
	}
	if held, ok := ranges[id]; ok {
		t = mergeTokens(held, t)
	}
	ranges[id] = t
}

// clientEntry is one "<container>/<pkRangeId>:<token>" of a client token.
type clientEntry struct {
	coll, id, text string
	fresh          bool // from the response being merged
}

// format writes the client token, at most store.MaxSessionTokenBytes long.
// Should the entries not all fit, those of fresh (the response just
// merged: the writes the client has just made) are kept first, then the
// others in container and range order while they fit; a range left out
// only loses its read-your-writes guarantee. Kept entries are written in
// container and range order.
func (cs clientSession) format(freshColl string, fresh map[string]rangeToken) string {
	var entries []clientEntry
	for coll, ranges := range cs {
		if !clientContainer.MatchString(coll) {
			continue
		}
		for id, t := range ranges {
			_, isFresh := fresh[id]
			entries = append(entries, clientEntry{coll, id, coll + "/" + id + ":" + t.String(), isFresh && coll == freshColl})
		}
	}
	byName := func(a, b clientEntry) int {
		return cmp.Or(strings.Compare(a.coll, b.coll), compareRangeIDs(a.id, b.id))
	}
	slices.SortFunc(entries, func(a, b clientEntry) int {
		if a.fresh != b.fresh {
			if a.fresh {
				return -1
			}
			return 1
		}
		return byName(a, b)
	})
	var kept []clientEntry
	size := 0
	for _, e := range entries {
		n := len(e.text)
		if size > 0 {
			n++ // the comma
		}
		if size+n > store.MaxSessionTokenBytes {
			continue
		}
		kept, size = append(kept, e), size+n
	}
	slices.SortFunc(kept, byName)
	var b strings.Builder
	for i, e := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.text)
	}
	return b.String()
}

// withResponse is the client's token after a response of coll issued got.
func withResponse(token, coll string, got map[string]rangeToken) string {
	cs := parseClient(token)
	for id, t := range got {
		cs.put(coll, id, t)
	}
	return cs.format(coll, got)
}

// withoutContainer is the client's token without coll's entries (see
// sessions.forget).
func withoutContainer(token, coll string) string {
	cs := parseClient(token)
	delete(cs, coll)
	return cs.format("", nil)
}
