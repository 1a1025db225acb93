package cosmos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// What the adapter sends, as the wire check sees it. In the child process
// TestWire starts, TestContract puts a recorder under the azcosmos client
// (wrapTransport): each request it sends becomes one line on standard
// output, which test2json gives to the test running at the time, and
// readRun to that test's result. A declared gap then states the requests
// its test must have sent (wireGap.sent), so that a gap cannot hide the
// adapter no longer sending what the gap is about: a read without
// If-None-Match, a query or a batch without its partition key.

// requestPrefix starts each line the recorder writes.
const requestPrefix = "wire request: "

// recordedHeaders are the request headers the recording keeps: those that
// say what a request asks of Cosmos. The rest (date, signature, version,
// user agent) say nothing a gap is about.
var recordedHeaders = []string{
	"x-ms-documentdb-partitionkey",
	"if-none-match",
	"if-match",
	"x-ms-session-token",
	"x-ms-documentdb-query",
	"content-type",
	"x-ms-documentdb-query-enablecrosspartition",
	"x-ms-max-item-count",
	"x-ms-continuation",
	"a-im",
	"if-modified-since",
	"x-ms-cosmos-is-batch-request",
	"x-ms-cosmos-batch-atomic",
	"x-ms-documentdb-partitionkeyrangeid",
	"x-ms-documentdb-is-upsert",
}

// Bounds of a recorded line. A line stays below PIPE_BUF (4096 bytes on
// Linux), so that one write puts it whole into the pipe to test2json,
// never mixed with the testing package's own lines; the body is cut
// further when its escapes in JSON would make the line longer.
const (
	maxHeaderValue = 96
	maxBody        = 1536
	maxLine        = 4000
)

// sentRequest is one request as the recorder saw it.
type sentRequest struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"` // recordedHeaders present, by lower-case name
	Body   string            `json:"body,omitempty"`   // its first maxBody bytes
}

// resource is the request's kind of resource, written as the REST API's
// paths are: "docs" for a container's items (create, query, batch),
// "docs/{id}" for one item, likewise "colls", "colls/{id}", "pkranges".
func (r sentRequest) resource() string {
	segs := strings.Split(strings.Trim(r.Path, "/"), "/")
	if len(segs)%2 == 0 {
		return segs[len(segs)-2] + "/{id}"
	}
	return segs[len(segs)-1]
}

// recorder is an http.RoundTripper that writes each request to w, as
// requestPrefix and the request's JSON on one line, then sends it on.
type recorder struct {
	next http.RoundTripper
	w    io.Writer
}

func (rec recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r := sentRequest{Method: req.Method, Path: req.URL.Path}
	for _, h := range recordedHeaders {
		if v := req.Header.Get(h); v != "" {
			if r.Header == nil {
				r.Header = map[string]string{}
			}
			r.Header[h] = cut(v, maxHeaderValue)
		}
	}
	if req.Body != nil && req.Body != http.NoBody {
		// The body is read here, so the request sent on carries a copy.
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("record the request body: %w", err)
		}
		r.Body = cut(string(b), maxBody)
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	line, err := json.Marshal(r)
	for err == nil && len(requestPrefix)+len(line) >= maxLine {
		r.Body = cut(r.Body, len(r.Body)/2)
		line, err = json.Marshal(r)
	}
	if err != nil {
		return nil, fmt.Errorf("record the request: %w", err)
	}
	if _, err := rec.w.Write(append([]byte(requestPrefix), append(line, '\n')...)); err != nil {
		return nil, fmt.Errorf("record the request: %w", err)
	}
	return rec.next.RoundTrip(req)
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// request is what a declared gap says its test sent: a method on a kind
// of resource (sentRequest.resource), with headers, each written "name"
// (present), "name: value" (present with that value, in any case) or
// "!name" (absent), and, if body is set, a body holding that text.
type request struct {
	method   string
	resource string
	header   []string
	body     string
}

func (w request) String() string {
	s := w.method + " " + w.resource
	if len(w.header) > 0 {
		s += " with " + strings.Join(w.header, ", ")
	}
	if w.body != "" {
		s += fmt.Sprintf(" and %q in the body", w.body)
	}
	return s
}

// lacks says what of w the sent request r lacks: nil if r is such a
// request.
func (w request) lacks(r sentRequest) []string {
	if r.Method != w.method || r.resource() != w.resource {
		return []string{w.method + " " + w.resource}
	}
	var missing []string
	for _, h := range w.header {
		name, value, withValue := strings.Cut(h, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		if absent, ok := strings.CutPrefix(name, "!"); ok {
			if _, sent := r.Header[absent]; sent {
				missing = append(missing, "no "+absent)
			}
			continue
		}
		got, sent := r.Header[name]
		if !sent || (withValue && !strings.EqualFold(got, strings.TrimSpace(value))) {
			missing = append(missing, h)
		}
	}
	if w.body != "" && !strings.Contains(r.Body, w.body) {
		missing = append(missing, fmt.Sprintf("%q in the body", w.body))
	}
	return missing
}

// unrecorded returns a header w names that the recording does not keep:
// w could never be met, whatever the adapter sent.
func (w request) unrecorded() string {
	for _, h := range w.header {
		name, _, _ := strings.Cut(h, ":")
		name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "!")
		if !slices.Contains(recordedHeaders, name) {
			return name
		}
	}
	return ""
}

// unsent says, for each request of want that none of sent is, what is
// missing: what the closest sent request of the same method and resource
// lacks, or that there was none.
func unsent(want []request, sent []sentRequest) []string {
	var problems []string
	for _, w := range want {
		if h := w.unrecorded(); h != "" {
			problems = append(problems, fmt.Sprintf("states %s, but the recording keeps no %s header", w, h))
			continue
		}
		var closest []string
		same := 0
		for _, r := range sent {
			missing := w.lacks(r)
			if len(missing) == 0 {
				closest = nil
				same = -1
				break
			}
			if r.Method != w.method || r.resource() != w.resource {
				continue
			}
			if same++; closest == nil || len(missing) < len(closest) {
				closest = missing
			}
		}
		switch {
		case same < 0:
		case same == 0:
			problems = append(problems, fmt.Sprintf("sent no %s %s at all (%d requests recorded), where the gap states %s",
				w.method, w.resource, len(sent), w))
		default:
			problems = append(problems, fmt.Sprintf("sent no %s: of its %d %s %s, the closest lacks %s",
				w, same, w.method, w.resource, strings.Join(closest, ", ")))
		}
	}
	return problems
}
