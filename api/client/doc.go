// Package client is a typed Go client of the shop's HTTP API, generated
// from openapi.yaml (api/openapi.yaml) by oapi-codegen, with a thin layer
// written by hand for what the API promises beyond its schemas.
//
// # Generated
//
// shop.gen.go holds a type per schema (Product, Cart, Order, Problem, ...),
// a Params type per operation (its headers and query: Idempotency-Key,
// If-Match, X-Session-Token, limit, continuation), and two clients: Client,
// whose methods return the *http.Response, and ClientWithResponses, whose
// XxxWithResponse methods decode the body for each status (JSON200,
// ApplicationProblemJSON409, ...) and the declared headers (Headers200, ...).
// Never edit it: change openapi.yaml, then regenerate with
//
//	go generate ./api/client      # or go generate ./...
//
// which runs the generator kept in go.mod as a tool (go tool oapi-codegen),
// so it needs nothing but the module proxy. TestGeneratedCodeIsCurrent
// fails when shop.gen.go is not what the spec and oapi-codegen.yaml make.
//
// # Why oapi-codegen
//
// openapi.yaml is OpenAPI 3.1. oapi-codegen v2.8.2 reads 3.1 as such: a
// type array with null (`type: [string, 'null']`: a cart never written, a
// last page's continuation) is a pointer, nil for null; enums become typed
// constants; the response headers are parsed per status. Its code is
// net/http and encoding/json, with one small runtime module for parameter
// encoding. ogen v1.24.0 reads the 3.1 spec too (null in a type array is
// its NilDateTime, OptNilString, ...), but the code it generates for this
// spec does not compile (the optional ETag of GET /v1/cart and the required
// one of the cart writes become one field of one CartHeaders type), and it
// is four and a half times larger (84,553 lines against 18,468) and brings
// its own JSON encoder and error packages. oapi-codegen needed no change of
// the spec.
//
// # Written by hand
//
//   - Bearer: the Authorization header of a signed-in call, per call or for
//     every call of a client (WithRequestEditorFn).
//   - NewIdempotencyKey: a fresh Idempotency-Key for a checkout; send the
//     same key again to get the same order back.
//   - CostOf: what a response says it cost (X-Store-Operations,
//     X-Request-Charge, Server-Timing); SessionTokenOf and ETagOf read the
//     session token to send back and the ETag to send as If-Match.
//   - OK: a call's answer, or its problem+json as an *Error, which
//     errors.As finds, with Type, Title, Status and Detail.
//
// A call reads:
//
//	c, _ := client.NewClientWithResponses("http://localhost:8080",
//		client.WithRequestEditorFn(client.Bearer(token)))
//	r, err := client.OK(c.CheckoutWithResponse(ctx,
//		&client.CheckoutParams{IdempotencyKey: key}, client.CheckoutRequest{ShippingAddress: addr, PaymentMethod: "pm_card_visa"}))
//	var e *client.Error
//	if errors.As(err, &e) && e.Status == http.StatusConflict { ... }
//	order, cost := r.JSON201, client.CostOf(r.HTTPResponse)
//
// The program in ./example browses, fills a cart and checks out with it.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml -o shop.gen.go ../openapi.yaml
