package cosmos

import (
	"errors"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/reference-shop/shop/store"
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
// ended on, as the .NET SDK's gateway mode does. A client's token (the
// request's store.Session) only narrows what that one request waits for:
// when it proves ahead of every replica, the read is tried once more
// with the instance's own tokens, and nothing the client sent reaches
// the instance's state. Requests that are not on
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
	if !readsDocuments(raw) {
		// A write goes to the primary replica of the write region, which
		// has every write already: it carries no token.
		resp, err := req.Next()
		p.observe(db, coll, answered(resp, err), client, true)
		return resp, err
	}
	own := p.s.tokenFor(db, coll, nil)
	sent := p.s.tokenFor(db, coll, parseClient(client.Token())[coll])
	setSession(raw, sent)
	resp, err := req.Next()
	answer, last := answered(resp, err), sent
	if sent != own && notReached(answer) {
		// The client's token is ahead of every replica: a token of a
		// container since deleted and created again, or one made up. It
		// may only narrow what its own request waits for, so it is
		// dropped from the client's session and the read is tried once
		// more with the instance's own tokens; the instance's state is
		// left as it was.
		client.Update(func(tok string) string { return withoutContainer(tok, coll) })
		if err := req.RewindBody(); err != nil { // a query's SQL, sent again
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		setSession(raw, own)
		resp, err = req.Next()
		answer, last = answered(resp, err), own
	}
	p.observe(db, coll, answer, client, last == own)
	return resp, err
}

// setSession sets the request's x-ms-session-token ("": none).
func setSession(r *http.Request, token string) {
	if token == "" {
		r.Header.Del(headerSessionToken)
		return
	}
	r.Header.Set(headerSessionToken, token)
}

// notReached reports whether the answer is a 404 with substatus 1002: no
// replica has reached the session token the read carried.
func notReached(resp *http.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound &&
		resp.Header.Get(headerSubstatus) == substatusReadSessionNotAvailable
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
// substatus 1002 means no replica reached the token sent; ownSent says
// the instance's own tokens were all it sent (no client's token ahead of
// them): only then are they forgotten, the process's and the client's
// (see sessions.forget). A client's header never changes the instance's
// tokens except through the service's answer.
func (p sessionPolicy) observe(db, coll string, resp *http.Response, client *store.Session, ownSent bool) {
	if resp == nil {
		return
	}
	if notReached(resp) {
		if ownSent {
			p.s.forget(db, coll)
		}
		client.Update(func(tok string) string { return withoutContainer(tok, coll) })
		return
	}
	status := resp.StatusCode
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
