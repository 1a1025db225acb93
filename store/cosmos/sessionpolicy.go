package cosmos

import (
	"errors"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"shop/store"
)

const (
	headerSessionToken = "x-ms-session-token"
	headerSubstatus    = "x-ms-substatus"
	headerContentPath  = "x-ms-content-path"
	// substatusReadSessionNotAvailable on a 404: no replica has reached
	// the session token the read carried.
	substatusReadSessionNotAvailable = "1002"
)

// sessionPolicy keeps sessions on the wire, for every call the adapter
// makes (point operations, batches, patches, queries, change-feed reads)
// without each of them taking part: the SDK has session-token fields on
// some options and responses, not on the change feed's, and not on the
// errors that carry a token (409, 412, 404).
//
// It is a per-call policy, so it runs once per HTTP request, outside the
// SDK's retries: it sets the token once, and sees the answer the retries
// ended on, as the .NET SDK's gateway mode does. Requests that are not on
// a container's documents (account, database, container, partition key
// ranges) pass untouched: master resources take no session token.
type sessionPolicy struct{ s *sessions }

func (p sessionPolicy) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	db, coll, ok := documentsOf(raw.URL.Path)
	if !ok {
		return req.Next()
	}
	client := store.SessionFrom(raw.Context())
	if readsDocuments(raw) {
		// Reads only: a write goes to the primary replica of the write
		// region, which has every write already.
		mine := parseClient(client.Token())[coll]
		if tok := p.s.tokenFor(db, coll, mine); tok != "" {
			raw.Header.Set(headerSessionToken, tok)
		}
	}
	resp, err := req.Next()
	if answer := answered(resp, err); answer != nil {
		p.observe(db, coll, answer, client)
	}
	return resp, err
}

// answered is the service's answer to a request: the response, or the
// one inside the error the SDK's retry policy ends a retried failure with
// (404 substatus 1002 among them). Nil when nothing was answered.
func answered(resp *http.Response, err error) *http.Response {
	if resp != nil {
		return resp
	}
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return re.RawResponse
	}
	return nil
}

// observe captures the response's token, by the .NET SDK's rule: from
// every success (304 included), and of the failures from 404, 409 and 412
// only, which the service answers after reading the partition. A 404 with
// substatus 1002 means no replica reached the token sent: it is forgotten,
// the process's and the client's (see sessions.forget).
func (p sessionPolicy) observe(db, coll string, resp *http.Response, client *store.Session) {
	status := resp.StatusCode
	if status == http.StatusNotFound && resp.Header.Get(headerSubstatus) == substatusReadSessionNotAvailable {
		p.s.forget(db, coll)
		client.Update(func(tok string) string { return withoutContainer(tok, coll) })
		return
	}
	switch {
	case status < http.StatusBadRequest:
	case status == http.StatusNotFound, status == http.StatusConflict, status == http.StatusPreconditionFailed:
	default:
		return
	}
	got := parseHeader(resp.Header.Get(headerSessionToken))
	if len(got) == 0 {
		return
	}
	p.s.capture(db, coll, resp.Header.Get(headerContentPath), got)
	client.Update(func(tok string) string { return withResponse(tok, coll, got) })
}

// documentsOf returns the database and container of a request on a
// container's documents: /dbs/{db}/colls/{coll}/docs[/{id}].
func documentsOf(path string) (db, coll string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) < 5 || segs[0] != "dbs" || segs[2] != "colls" || segs[4] != "docs" || segs[1] == "" || segs[3] == "" {
		return "", "", false
	}
	return segs[1], segs[3], true
}

// readsDocuments reports whether the request reads: a GET (point read,
// change feed) or a query (a POST of application/query+json).
func readsDocuments(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		return strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json")
	}
	return false
}
