package client

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"time"
)

// Error is an answer other than a success: its RFC 9457 problem (Type,
// Title, Status, Detail, and the fields or checkout lines it names), what
// the request cost, and how long to wait before a retry. OK returns it;
// errors.As finds it:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Type == client.ProblemOutOfStock { ... }
type Error struct {
	Problem
	// Cost is zero when the answer carried no cost headers (a proxy's).
	Cost Cost
	// RetryAfter is the Retry-After of a 429 or 503; 0 otherwise.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail)
}

// The problem types the shop answers, one per error code (openapi.yaml
// lists them all); these are the ones a caller acts on.
const (
	ProblemNotFound     = "https://shop.example/problems/not-found"
	ProblemConflict     = "https://shop.example/problems/conflict"
	ProblemOutOfStock   = "https://shop.example/problems/out-of-stock"
	ProblemPrecondition = "https://shop.example/problems/precondition"
	ProblemInvalid      = "https://shop.example/problems/invalid"
)

// Response is what every XxxWithResponse answer has.
type Response interface {
	StatusCode() int
	ContentType() string
	GetBody() []byte
}

// OK passes on a call's answer when it is a success (2xx), and otherwise
// returns an *Error: the problem+json the shop sent, or, for an answer
// that is not one (a proxy's), a problem of type about:blank with the
// status. It takes the call's two results as they come:
//
//	r, err := client.OK(c.GetProductWithResponse(ctx, id, nil))
func OK[R Response](r R, err error) (R, error) {
	if err != nil {
		return r, err
	}
	code := r.StatusCode()
	if code >= 200 && code < 300 {
		return r, nil
	}
	e := &Error{Problem: Problem{Type: "about:blank", Title: http.StatusText(code), Status: code}}
	if mt, _, _ := mime.ParseMediaType(r.ContentType()); mt == "application/problem+json" {
		var p Problem
		if json.Unmarshal(r.GetBody(), &p) == nil && p.Status == code {
			e.Problem = p
		}
	}
	if h := httpResponseOf(r); h != nil {
		e.Cost, _ = CostOf(h)
		if s, err := strconv.Atoi(h.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return r, e
}

// httpResponseOf returns the HTTPResponse field that every generated
// answer has: a generic function cannot name a field, so it is looked up
// by name (on the error path only).
func httpResponseOf(r any) *http.Response {
	v := reflect.Indirect(reflect.ValueOf(r))
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("HTTPResponse")
	if !f.IsValid() {
		return nil
	}
	h, _ := f.Interface().(*http.Response)
	return h
}
