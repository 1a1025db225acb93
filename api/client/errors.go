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
	// RetryAfter is the answer's Retry-After (a 429's or a 503's, or a
	// proxy's), seconds or an HTTP date; 0 without one.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail)
}

// The problem types the shop answers: the Type of an *Error, one per
// error code (openapi.yaml's description lists them; a test of package api
// fails when the shop answers a code without its constant here).
const (
	ProblemNotFound             = "https://shop.example/problems/not-found"              // 404
	ProblemConflict             = "https://shop.example/problems/conflict"               // 409: the id is taken, or the state does not allow it
	ProblemOutOfStock           = "https://shop.example/problems/out-of-stock"           // 409: Items says which checkout lines
	ProblemPaymentDeclined      = "https://shop.example/problems/payment-declined"       // 402: DeclineCode says why
	ProblemPrecondition         = "https://shop.example/problems/precondition"           // 412: If-Match no longer matches
	ProblemInvalid              = "https://shop.example/problems/invalid"                // 400: Errors says which fields
	ProblemTooLarge             = "https://shop.example/problems/too-large"              // 413
	ProblemUnprocessable        = "https://shop.example/problems/unprocessable"          // 422: e.g. an Idempotency-Key sent with another body
	ProblemUnauthorized         = "https://shop.example/problems/unauthorized"           // 401
	ProblemForbidden            = "https://shop.example/problems/forbidden"              // 403
	ProblemTooManyRequests      = "https://shop.example/problems/too-many-requests"      // 429: retry after RetryAfter
	ProblemUnavailable          = "https://shop.example/problems/unavailable"            // 503: retry after RetryAfter
	ProblemPartitionFull        = "https://shop.example/problems/partition-full"         // 507: a retry does not help
	ProblemInternal             = "https://shop.example/problems/internal"               // 500
	ProblemUnsupportedMediaType = "https://shop.example/problems/unsupported-media-type" // 415
	ProblemMethodNotAllowed     = "https://shop.example/problems/method-not-allowed"     // 405
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
//	r, err := client.OK(c.GetProductWithResponse(ctx, id))
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
		e.RetryAfter, _ = RetryAfterOf(h)
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

// Value is OK for a caller who wants the answer's body alone: the decoded
// body of a success (the JSON200 or JSON201 field of the answer, per its
// status), or OK's error. T names the body's type, and the call its
// answer:
//
//	product, err := client.Value[client.Product](c.GetProductWithResponse(ctx, id))
//
// A success without a body of type T (a 204, or the wrong T) is an error.
func Value[T any, R Response](r R, err error) (*T, error) {
	if _, err := OK(r, err); err != nil {
		return nil, err
	}
	v := reflect.Indirect(reflect.ValueOf(r))
	if v.Kind() == reflect.Struct {
		f := v.FieldByName("JSON" + strconv.Itoa(r.StatusCode()))
		if f.IsValid() {
			if body, ok := f.Interface().(*T); ok && body != nil {
				return body, nil
			}
		}
	}
	var zero T
	return nil, fmt.Errorf("client: a %d answer with no %T body", r.StatusCode(), zero)
}
