package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// feedGateway answers, as a Cosmos gateway does, what azcosmos sends for a
// change-feed read of container "c": the account, the container, its
// partition key ranges (a change feed of them, with the parents of split
// ranges) and the change feed of documents of one range (A-IM:
// Incremental feed), with the ETag, lsn and session-token headers a real
// one returns. It is not Cosmos: the items carry their effective
// partition key (epk) instead of hashing a partition key, and its LSNs
// are one per container. It checks the wire, not the semantics.
type feedGateway struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	ranges []wireRange // every range ever, parents included
	items  []wireItem
	lsn    int64
	// gone makes every document read of these range ids answer 410/1002,
	// as a range that split does.
	gone map[string]bool
	// sent records the headers of each document change-feed request.
	sent []http.Header
}

type wireRange struct {
	ID      string   `json:"id"`
	Min     string   `json:"minInclusive"`
	Max     string   `json:"maxExclusive"`
	Parents []string `json:"parents"`
}

type wireItem struct {
	id, epk string
	lsn, ts int64
}

func newFeedGateway(t *testing.T) *feedGateway {
	g := &feedGateway{t: t, ranges: []wireRange{{ID: "0", Min: "", Max: "FF"}}, gone: map[string]bool{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// container opens the adapter on the gateway.
func (g *feedGateway) container(t *testing.T) store.Container {
	s, err := Open(context.Background(), Config{Endpoint: g.srv.URL, Key: "a2V5a2V5a2V5", Emulator: true, Database: "db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Container("c")
}

func (g *feedGateway) write(id, epk string, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lsn++
	g.items = slices.DeleteFunc(g.items, func(it wireItem) bool { return it.id == id })
	g.items = append(g.items, wireItem{id: id, epk: epk, lsn: g.lsn, ts: at.Unix()})
}

// split replaces range id by two children, split at mid.
func (g *feedGateway) split(id, mid string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.IndexFunc(g.ranges, func(r wireRange) bool { return r.ID == id })
	p := g.ranges[i]
	n := len(g.ranges)
	g.ranges = append(g.ranges,
		wireRange{ID: strconv.Itoa(n), Min: p.Min, Max: mid, Parents: []string{id}},
		wireRange{ID: strconv.Itoa(n + 1), Min: mid, Max: p.Max, Parents: []string{id}})
	g.gone[id] = true
}

// requests returns the headers of the document change-feed requests.
func (g *feedGateway) requests() []http.Header {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sent)
}

func (g *feedGateway) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if v != nil {
			_ = json.NewEncoder(w).Encode(v)
		}
	}
	switch r.URL.Path {
	case "/":
		loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": g.srv.URL + "/"}}
		reply(http.StatusOK, map[string]any{"id": "acct", "writableLocations": loc, "readableLocations": loc,
			"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
	case "/dbs/db/colls/c":
		reply(http.StatusOK, map[string]any{"id": "c", "_rid": "cRid==", "partitionKey": map[string]any{"paths": []string{"/pk"}, "kind": "Hash", "version": 2}})
	case "/dbs/db/colls/c/pkranges":
		etag := fmt.Sprintf(`"%d"`, len(g.ranges))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			reply(http.StatusNotModified, nil)
			return
		}
		reply(http.StatusOK, map[string]any{"_rid": "cRid==", "PartitionKeyRanges": g.ranges, "_count": len(g.ranges)})
	case "/dbs/db/colls/c/docs":
		g.sent = append(g.sent, r.Header.Clone())
		g.serveFeed(w, r, reply)
	default:
		reply(http.StatusNotFound, map[string]string{"code": "NotFound", "message": r.URL.Path})
	}
}

// serveFeed answers one change-feed page of the range the request names.
func (g *feedGateway) serveFeed(w http.ResponseWriter, r *http.Request, reply func(int, any)) {
	id := r.Header.Get("x-ms-documentdb-partitionkeyrangeid")
	if g.gone[id] {
		w.Header().Set("x-ms-substatus", "1002")
		reply(http.StatusGone, map[string]string{"code": "Gone", "message": "partition key range is gone"})
		return
	}
	i := slices.IndexFunc(g.ranges, func(rg wireRange) bool { return rg.ID == id })
	if i < 0 || !strings.EqualFold(r.Header.Get("A-IM"), "Incremental feed") {
		reply(http.StatusBadRequest, map[string]string{"code": "BadRequest", "message": "not a change-feed request of a range"})
		return
	}
	rg := g.ranges[i]
	after, _ := strconv.ParseInt(strings.Trim(r.Header.Get("If-None-Match"), `"`), 10, 64)
	// azcosmos writes the time as time.RFC1123 in UTC ("... UTC"). Cosmos
	// takes it as exclusive: the changes after it, by _ts in whole seconds
	// ("the time (exclusive) to start looking for changes after", the
	// .NET SDK's ChangeFeedOptions.StartTime).
	since, sinceErr := time.Parse(time.RFC1123, r.Header.Get("If-Modified-Since"))
	limit, _ := strconv.Atoi(r.Header.Get("x-ms-max-item-count"))
	var docs []map[string]any
	latest := int64(0)
	for _, it := range g.items {
		if it.epk < rg.Min || (rg.Max != "FF" && it.epk >= rg.Max) {
			continue
		}
		latest = max(latest, it.lsn)
		if it.lsn <= after || (sinceErr == nil && it.ts <= since.Unix()) || (limit > 0 && len(docs) == limit) {
			continue
		}
		docs = append(docs, map[string]any{"id": it.id, "pk": it.epk, "_lsn": it.lsn, "_ts": it.ts, "_etag": fmt.Sprintf(`"e%d"`, it.lsn)})
	}
	w.Header().Set("lsn", strconv.FormatInt(g.lsn, 10))
	w.Header().Set("x-ms-session-token", fmt.Sprintf("%s:1#%d#1=%d", id, g.lsn, g.lsn))
	w.Header().Set("x-ms-request-charge", "1")
	if len(docs) == 0 {
		w.Header().Set("ETag", fmt.Sprintf(`"%d"`, max(latest, after)))
		reply(http.StatusNotModified, nil)
		return
	}
	w.Header().Set("ETag", fmt.Sprintf(`"%d"`, docs[len(docs)-1]["_lsn"]))
	reply(http.StatusOK, map[string]any{"_rid": "cRid==", "Documents": docs, "_count": len(docs)})
}

func feedIDs(t *testing.T, p store.ChangeFeedPage) []string {
	t.Helper()
	var out []string
	for _, it := range p.Items {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(it, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.ID)
	}
	return out
}

// FeedFromNow sends nothing; the first read from its position carries the
// time as If-Modified-Since and no ETag, and yields only what was written
// from that second on.
func TestWireFeedFromNow(t *testing.T) {
	g := newFeedGateway(t)
	c := g.container(t)
	whole := store.FeedRange{Min: "", Max: "FF"}
	g.write("old", "10", time.Now().Add(-time.Hour))
	now, err := c.ReadChangeFeed(t.Context(), whole, store.FeedFromNow, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.requests()); n != 0 {
		t.Errorf("FeedFromNow sent %d change-feed requests, want none", n)
	}
	g.write("new", "20", time.Now())
	page, err := c.ReadChangeFeed(t.Context(), whole, now.Continuation, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := feedIDs(t, page); !slices.Equal(got, []string{"new"}) {
		t.Errorf("read from now = %v, want [new]", got)
	}
	sent := g.requests()
	if len(sent) != 1 {
		t.Fatalf("%d change-feed requests, want 1", len(sent))
	}
	if sent[0].Get("If-Modified-Since") == "" || sent[0].Get("If-None-Match") != "" {
		t.Errorf("first read from now sent If-Modified-Since %q, If-None-Match %q; want a time and no ETag",
			sent[0].Get("If-Modified-Since"), sent[0].Get("If-None-Match"))
	}
}

// A read from FeedFromNow yields a write stamped in the second of the
// call, which If-Modified-Since (whole seconds, exclusive) would miss, and
// one stamped seconds before it by a service clock behind the shop's; not
// one well before the call.
func TestWireFeedFromNowSameSecond(t *testing.T) {
	g := newFeedGateway(t)
	c := g.container(t)
	whole := store.FeedRange{Min: "", Max: "FF"}
	before := time.Now()
	now, err := c.ReadChangeFeed(t.Context(), whole, store.FeedFromNow, 10)
	if err != nil {
		t.Fatal(err)
	}
	g.write("same-second", "10", before)
	g.write("clock-behind", "20", before.Add(-2*time.Second))
	g.write("long-before", "30", before.Add(-time.Minute))
	page, err := c.ReadChangeFeed(t.Context(), whole, now.Continuation, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := feedIDs(t, page), []string{"same-second", "clock-behind"}; !slices.Equal(got, want) {
		t.Errorf("read from now = %v, want %v", got, want)
	}
}

// Remaining comes from the response's lsn header and the last item's
// _lsn: three writes, a page of one, two left.
func TestWireRemaining(t *testing.T) {
	g := newFeedGateway(t)
	c := g.container(t)
	for i := range 3 {
		g.write(fmt.Sprint("i", i), "10", time.Now())
	}
	page, err := c.ReadChangeFeed(t.Context(), store.FeedRange{Min: "", Max: "FF"}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := page.Remaining, int64(2); got != want {
		t.Errorf("Remaining = %d, want %d", got, want)
	}
}

// After a split, a read of the parent's range under its continuation
// is answered 410/1002; the SDK refreshes its routing and reads the
// children, and only then do the feed ranges show them. The parent's
// continuation, read over each child, yields exactly the child's changes
// after it. A read the gateway keeps answering 410/1002 (routing that
// stays stale through the SDK's retries) is the port's ErrFeedRangeGone.
func TestWireSplit(t *testing.T) {
	g := newFeedGateway(t)
	c := g.container(t)
	whole := store.FeedRange{Min: "", Max: "FF"}
	g.write("a-old", "10", time.Now())
	g.write("b-old", "90", time.Now())
	page, err := c.ReadChangeFeed(t.Context(), whole, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	g.write("a-new", "20", time.Now())
	g.write("b-new", "A0", time.Now())
	g.split("0", "80")

	through, err := c.ReadChangeFeed(t.Context(), whole, page.Continuation, 10)
	if err != nil {
		t.Fatalf("the parent's range read after the split: %v", err)
	}
	if ids := feedIDs(t, through); !slices.Equal(ids, []string{"a-new"}) {
		t.Errorf("the parent's range read after the split = %v, want the first child's [a-new]", ids)
	}
	ranges, err := c.ReadFeedRanges(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.FeedRange{{Min: "", Max: "80"}, {Min: "80", Max: "FF"}}
	if !slices.Equal(ranges, want) {
		t.Fatalf("ranges after the split = %v, want %v", ranges, want)
	}
	for i, id := range []string{"a-new", "b-new"} {
		got, err := c.ReadChangeFeed(t.Context(), ranges[i], page.Continuation, 10)
		if err != nil {
			t.Fatalf("child %s from the parent's continuation: %v", ranges[i], err)
		}
		if ids := feedIDs(t, got); !slices.Equal(ids, []string{id}) {
			t.Errorf("child %s from the parent's continuation = %v, want [%s]", ranges[i], ids, id)
		}
	}

	g.mu.Lock()
	g.gone["1"] = true
	g.mu.Unlock()
	_, err = c.ReadChangeFeed(t.Context(), ranges[0], page.Continuation, 10)
	if !errors.Is(err, store.ErrFeedRangeGone) || domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Errorf("read answered 410/1002 = %v, want EUNAVAILABLE with ErrFeedRangeGone", err)
	}
}
