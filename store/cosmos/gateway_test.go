package cosmos

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// gateway is an httptest server that speaks as much of the Cosmos REST
// protocol as the wire tests need: the account read the SDK discovers its
// endpoints with, point reads, creates, upserts and replaces of items,
// queries (every item of the container: the SQL is not evaluated), the
// container and its one partition key range, and the change feed. It is
// a wire for checking what the adapter sends and receives, not a Cosmos:
// nothing semantic is tested against it.
type gateway struct {
	t   *testing.T
	srv *httptest.Server

	mu    sync.Mutex
	items map[string]map[string][]byte // container → id → item as stored
	etag  int
	// token is the x-ms-session-token of the next responses on documents
	// ("" for none); status, when set, answers them instead (with
	// substatus, if set).
	token     string
	status    int
	substatus string
	// failOn, when set, limits status to the requests whose
	// x-ms-session-token holds it: a replica that has not reached one
	// token and serves every other.
	failOn   string
	rid      string // the containers' x-ms-content-path
	requests []wireRequest
}

// wireRequest is what the adapter sent on one request on documents.
type wireRequest struct {
	Method, Path string
	Session      string // its x-ms-session-token, "" if none
}

func newGateway(t *testing.T) *gateway {
	g := &gateway{t: t, items: map[string]map[string][]byte{}, rid: "cRid="}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// open opens a Store on the gateway through endpoint (the gateway's URL
// by default), as `shop serve` opens one on an account. Another endpoint
// naming the same gateway ("localhost" for "127.0.0.1") is another
// account to the adapter: another client, with sessions of its own, as
// another instance of the shop would have.
func (g *gateway) open(endpoint string) *Store {
	g.t.Helper()
	if endpoint == "" {
		endpoint = g.srv.URL
	}
	key := base64.StdEncoding.EncodeToString([]byte("wire-test-key"))
	// Emulator: plain http, and every request pinned to the endpoint.
	s, err := Open(context.Background(), Config{Endpoint: endpoint, Key: key, Database: "shop", Emulator: true})
	if err != nil {
		g.t.Fatalf("Open: %v", err)
	}
	g.t.Cleanup(func() { s.Close() })
	return s
}

// respond sets the session token of the next responses.
func (g *gateway) respond(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.token = token
}

// fail makes the next responses on documents answer status (0: serve
// them again).
func (g *gateway) fail(status int, substatus string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status, g.substatus, g.failOn = status, substatus, ""
}

// sent returns the requests on documents so far, and forgets them.
// failWhenSent answers status (and substatus) to the requests on
// documents whose x-ms-session-token holds token, and serves the others.
func (g *gateway) failWhenSent(token string, status int, substatus string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status, g.substatus, g.failOn = status, substatus, token
}

func (g *gateway) sent() []wireRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.requests
	g.requests = nil
	return out
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		g.account(w)
	case len(segs) == 4 && segs[2] == "colls" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"id": segs[3], "_rid": g.rid,
			"partitionKey": map[string]any{"paths": []string{"/id"}, "kind": "Hash", "version": 2}})
	case len(segs) == 5 && segs[4] == "pkranges":
		g.pkranges(w, r)
	case len(segs) >= 5 && segs[4] == "docs":
		g.documents(w, r, segs[3], segs[5:])
	default:
		g.t.Logf("gateway: no answer for %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

func (g *gateway) account(w http.ResponseWriter) {
	region := []map[string]string{{"name": "Local", "databaseAccountEndpoint": g.srv.URL + "/"}}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "wire", "writableLocations": region, "readableLocations": region,
		"enableMultipleWriteLocations": false,
		"userConsistencyPolicy":        map[string]string{"defaultConsistencyLevel": "Session"},
	})
}

// pkranges answers the partition key ranges' own change feed: one range,
// then "nothing new".
func (g *gateway) pkranges(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("If-None-Match") == `"pk1"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Etag", `"pk1"`)
	writeJSON(w, http.StatusOK, map[string]any{"_rid": g.rid, "_count": 1, "PartitionKeyRanges": []map[string]any{
		{"id": "0", "minInclusive": "", "maxExclusive": "FF", "parents": []string{}},
	}})
}

func (g *gateway) documents(w http.ResponseWriter, r *http.Request, coll string, rest []string) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests = append(g.requests, wireRequest{r.Method, r.URL.Path, r.Header.Get(headerSessionToken)})
	if readsDocuments(r) && r.Method == http.MethodPost && !json.Valid(body) {
		// A query without its SQL (a retry that lost its body).
		writeJSON(w, http.StatusBadRequest, map[string]string{"code": "BadRequest", "message": "the query's body is not JSON"})
		return
	}
	w.Header().Set(headerContentPath, g.rid)
	if g.token != "" {
		w.Header().Set(headerSessionToken, g.token)
	}
	w.Header().Set("x-ms-request-charge", "1")
	if g.status != 0 && (g.failOn == "" || strings.Contains(r.Header.Get(headerSessionToken), g.failOn)) {
		if g.substatus != "" {
			w.Header().Set(headerSubstatus, g.substatus)
		}
		writeJSON(w, g.status, map[string]string{"code": "Failed", "message": "as the test asked"})
		return
	}
	items := g.items[coll]
	if items == nil {
		items = map[string][]byte{}
		g.items[coll] = items
	}
	id := ""
	if len(rest) == 1 {
		id = rest[0]
	}
	switch {
	case r.Method == http.MethodGet && r.Header.Get("A-IM") != "":
		g.changes(w, r, items)
	case r.Method == http.MethodGet && id != "":
		item, ok := items[id]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"code": "NotFound"})
			return
		}
		g.writeItem(w, http.StatusOK, item)
	case r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json"):
		docs := make([]json.RawMessage, 0, len(items))
		for _, id := range sortedKeys(items) {
			docs = append(docs, items[id])
		}
		writeJSON(w, http.StatusOK, map[string]any{"_rid": g.rid, "_count": len(docs), "Documents": docs})
	case r.Method == http.MethodPost:
		var doc struct{ ID string }
		_ = json.Unmarshal(body, &doc)
		_, exists := items[doc.ID]
		if exists && !strings.EqualFold(r.Header.Get("x-ms-documentdb-is-upsert"), "true") {
			writeJSON(w, http.StatusConflict, map[string]string{"code": "Conflict"})
			return
		}
		g.writeItem(w, http.StatusCreated, g.store(items, doc.ID, body))
	case r.Method == http.MethodPut && id != "":
		old, ok := items[id]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"code": "NotFound"})
			return
		}
		if im := r.Header.Get("If-Match"); im != "" && im != etagOf(old) {
			writeJSON(w, http.StatusPreconditionFailed, map[string]string{"code": "PreconditionFailed"})
			return
		}
		g.writeItem(w, http.StatusOK, g.store(items, id, body))
	default:
		g.t.Logf("gateway: no answer for %s %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusBadRequest, map[string]string{"code": "BadRequest"})
	}
}

// store keeps body as item id with a new _etag, and returns it as stored.
func (g *gateway) store(items map[string][]byte, id string, body []byte) []byte {
	var doc map[string]any
	_ = json.Unmarshal(body, &doc)
	g.etag++
	doc["_etag"] = fmt.Sprintf(`"%d"`, g.etag)
	doc["_rid"] = "itemRid="
	item, _ := json.Marshal(doc)
	items[id] = item
	return item
}

// changes is the latest-version change feed: every item, then 304 once
// the client holds the current etag.
func (g *gateway) changes(w http.ResponseWriter, r *http.Request, items map[string][]byte) {
	etag := fmt.Sprintf(`"%d"`, g.etag)
	if r.Header.Get("If-None-Match") == etag || len(items) == 0 {
		w.Header().Set("Etag", etag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	docs := make([]json.RawMessage, 0, len(items))
	for _, id := range sortedKeys(items) {
		docs = append(docs, items[id])
	}
	w.Header().Set("Etag", etag)
	writeJSON(w, http.StatusOK, map[string]any{"_rid": g.rid, "_count": len(docs), "Documents": docs})
}

func (g *gateway) writeItem(w http.ResponseWriter, status int, item []byte) {
	w.Header().Set("Etag", etagOf(item))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(item)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
