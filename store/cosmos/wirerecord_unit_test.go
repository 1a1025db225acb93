package cosmos

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestRecorder(t *testing.T) {
	var line bytes.Buffer
	var forwarded []byte
	rec := recorder{w: &line, next: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(req.Body)
		forwarded = b
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, err
	})}
	body := `{"id":"a","pk":"p","pad":"` + strings.Repeat("x", 3*maxBody) + `"}`
	req, err := http.NewRequest("POST", "https://wire.test/dbs/d/colls/c/docs", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
	req.Header.Set("x-ms-continuation", strings.Repeat("c", 3*maxHeaderValue))
	req.Header.Set("Authorization", "type=master&sig=secret")
	if _, err := rec.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if string(forwarded) != body {
		t.Errorf("the transport got %d bytes of body, want the %d sent", len(forwarded), len(body))
	}
	if line.Len() >= 4096 {
		t.Errorf("the line is %d bytes: a write of it to a pipe may interleave with others", line.Len())
	}
	js, ok := strings.CutPrefix(strings.TrimSuffix(line.String(), "\n"), requestPrefix)
	if !ok || !strings.HasSuffix(line.String(), "\n") || strings.Count(line.String(), "\n") != 1 {
		t.Fatalf("line = %q, want %q, JSON and one newline", line.String(), requestPrefix)
	}
	var got sentRequest
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if got.Method != "POST" || got.Path != "/dbs/d/colls/c/docs" || got.resource() != "docs" {
		t.Errorf("recorded %s %s (%s), want POST /dbs/d/colls/c/docs (docs)", got.Method, got.Path, got.resource())
	}
	if got.Header["x-ms-documentdb-partitionkey"] != `["p"]` {
		t.Errorf("partition key header = %q, want [\"p\"]", got.Header["x-ms-documentdb-partitionkey"])
	}
	if _, ok := got.Header["authorization"]; ok || strings.Contains(line.String(), "secret") {
		t.Error("the signature was recorded")
	}
	if !strings.HasPrefix(body, got.Body) || len(got.Body) != maxBody {
		t.Errorf("recorded body of %d bytes, want the first %d", len(got.Body), maxBody)
	}
}

func TestSentRequestResource(t *testing.T) {
	for path, want := range map[string]string{
		"/dbs/d/colls/c/docs":        "docs",
		"/dbs/d/colls/c/docs/a":      "docs/{id}",
		"/dbs/d/colls/c/pkranges":    "pkranges",
		"/dbs/d/colls":               "colls",
		"/dbs/d/colls/c":             "colls/{id}",
		"/dbs/d/colls/c/docs/a%20b/": "docs/{id}",
		"/dbs":                       "dbs",
	} {
		if got := (sentRequest{Path: path}).resource(); got != want {
			t.Errorf("resource of %s = %q, want %q", path, got, want)
		}
	}
}

func TestRequestLacks(t *testing.T) {
	read := sentRequest{Method: "GET", Path: "/dbs/d/colls/c/docs/a",
		Header: map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "if-none-match": `"e1"`}}
	tests := []struct {
		want request
		sent sentRequest
		lack string // "" if sent is a want
	}{
		{pointRead, read, ""},
		{pointRead.with("If-None-Match"), read, ""},
		{pointRead.with("If-Match"), read, "If-Match"},
		{pointRead.with("!If-None-Match"), read, "no if-none-match"},
		{pointRead.with("x-ms-documentdb-partitionkey: [\"q\"]"), read, `x-ms-documentdb-partitionkey: ["q"]`},
		{pointRead.holding("x"), read, `"x" in the body`},
		{patch, read, "PATCH docs/{id}"},
		{create, sentRequest{Method: "POST", Path: "/dbs/d/colls/c/docs",
			Header: map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-is-upsert": "True"}}, "no x-ms-documentdb-is-upsert"},
		{batch, sentRequest{Method: "POST", Path: "/dbs/d/colls/c/docs", Header: map[string]string{
			"x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": "True", "x-ms-documentdb-partitionkey": `["p"]`}}, ""},
	}
	for _, tt := range tests {
		got := strings.Join(tt.want.lacks(tt.sent), "; ")
		if got != tt.lack {
			t.Errorf("%s, of %s %s: lacks %q, want %q", tt.want, tt.sent.Method, tt.sent.Path, got, tt.lack)
		}
	}
	if p := unsent(sent(pointRead.with("x-ms-signature")), []sentRequest{read}); len(p) != 1 || !strings.Contains(p[0], "keeps no x-ms-signature") {
		t.Errorf("a request naming an unrecorded header: problems %q, want one saying the recording keeps no such header", p)
	}
}

// TestWireGapsStateRecordedRequests keeps each declared gap checkable: it
// states a request, and names only headers the recording keeps.
func TestWireGapsStateRecordedRequests(t *testing.T) {
	for name, g := range wireGaps {
		if len(g.sent) == 0 {
			t.Errorf("gap %s states no request", name)
		}
		for _, r := range g.sent {
			if h := r.unrecorded(); h != "" {
				t.Errorf("gap %s states %s: the recording keeps no %s", name, r, h)
			}
		}
	}
}
