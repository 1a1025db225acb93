// Package client is a typed Go client of the shop's HTTP API, generated
// from openapi.yaml (api/openapi.yaml) by oapi-codegen, with a thin layer
// written by hand for what the API promises beyond its schemas.
//
// # An answer is not an error
//
// A generated XxxWithResponse call returns an error only when no answer
// came (the connection, the context): a 404, a 409 or a 503 is an answer,
// returned with a nil error, its problem in ApplicationProblemJSON404 and
// the like. Wrap the call in OK to have every answer but a 2xx as an
// error, or in Value to have the body of a success alone:
//
//	r, err := client.OK(c.GetProductWithResponse(ctx, id))   // r.JSON200, r.HTTPResponse
//	p, err := client.Value[client.Product](c.GetProductWithResponse(ctx, id))
//	var e *client.Error
//	if errors.As(err, &e) && e.Type == client.ProblemNotFound { ... }
//
// # Generated
//
// shop.gen.go holds a type per schema (Product, Cart, Order, Problem,
// ProblemFieldError, ProblemItem, ...), a Params type per operation that
// has parameters other than its path (Idempotency-Key, If-Match, limit,
// continuation, sort), and two clients: Client, whose methods return the
// *http.Response, and ClientWithResponses, whose XxxWithResponse methods
// decode the body for each status (JSON200, ApplicationProblemJSON409,
// ...) and the declared headers (Headers200, ...). Enum values are
// constants named with their type (AvailabilityStatusInStock,
// ListCategoryProductsParamsSortPrice, OrderStatusPlaced). Never edit it:
// change openapi.yaml or oapi-codegen.yaml, then regenerate with
//
//	go generate ./api/client      # or go generate ./...
//
// which runs the generator kept in go.mod as a tool (go tool oapi-codegen),
// so it needs nothing but the module proxy. TestGeneratedCodeIsCurrent
// fails when shop.gen.go is not what the spec and oapi-codegen.yaml make.
//
// The X-Session-Token request header, which every route takes, is no
// operation's parameter in the spec (it belongs to a client's session,
// not to one call), so a call without other parameters takes none:
// Sessions sends it.
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
//   - OK and Value: an answer other than a success as an *Error, which
//     errors.As finds, with Type (one of the Problem constants), Title,
//     Status, Detail, the fields or lines it names, its Cost and, for a
//     429 or 503, its RetryAfter.
//   - Bearer: the Authorization header of a signed-in call, per call or for
//     every call of a client (WithRequestEditorFn).
//   - Sessions and WithSessions: the X-Session-Token a response hands
//     back, kept and sent with the next request, so that any instance
//     reads what the client wrote.
//   - Retry and WithRetry: a GET, or a request with an Idempotency-Key,
//     sent again when answered 429 or 503, after its Retry-After, within
//     a RetryPolicy's bounds.
//   - Pages, and CategoryProducts, SearchResults, Reviews and Orders over
//     it: a list's items as an iter.Seq2, page after page.
//   - NewIdempotencyKey: a fresh Idempotency-Key for a checkout; send the
//     same key again to get the same order back.
//   - CostOf: what a response says it cost (X-Store-Operations,
//     X-Request-Charge, Server-Timing); SessionTokenOf, RetryAfterOf and
//     ETagOf read the session token, the wait before a retry and the ETag
//     to send as If-Match.
//
// A client and a call read:
//
//	var session client.Sessions
//	c, _ := client.NewClientWithResponses("http://localhost:8080",
//		client.WithRetry(client.RetryPolicy{}), client.WithSessions(&session),
//		client.WithRequestEditorFn(client.Bearer(token)))
//	r, err := client.OK(c.CheckoutWithResponse(ctx,
//		&client.CheckoutParams{IdempotencyKey: key}, client.CheckoutRequest{ShippingAddress: addr, PaymentMethod: "pm_card_visa"}))
//	var e *client.Error
//	if errors.As(err, &e) && e.Type == client.ProblemOutOfStock { ... }
//	order := r.JSON201
//	cost, _ := client.CostOf(r.HTTPResponse)
//
// The program in ./example browses, pages a category, fills a cart (a
// product sold in variants in one of them: PutCartItemParams.Sku, the SKU
// its page lists in Product.Variants) and checks out with it.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml -o shop.gen.go ../openapi.yaml
