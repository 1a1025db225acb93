package api_test

import (
	"net/http"
	"strconv"
	"testing"
)

// bodyRoutes is every route that reads a request body, with a body it
// accepts and the media type it wants.
func bodyRoutes() []struct{ name, method, path, body, mediaType string } {
	const json, mergePatch = "application/json", "application/merge-patch+json"
	return []struct{ name, method, path, body, mediaType string }{
		{"Review", "POST", "/v1/products/book-2/reviews", `{"rating":5,"title":"Good"}`, json},
		{"CartPut", "PUT", "/v1/cart/items/book-1", `{"quantity":1}`, json},
		{"Checkout", "POST", "/v1/checkout", `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"A","line1":"B","city":"C","postalCode":"D","country":"GB"}}`, json},
		{"ProductCreate", "POST", "/v1/products", `{"name":"Tea","priceCents":100,"categoryId":"books"}`, json},
		{"ProductPatch", "PATCH", "/v1/products/book-1", `{"name":"Tea"}`, mergePatch},
		{"CategoryPut", "PUT", "/v1/categories/books", `{"name":"Books"}`, json},
		{"OrderStatus", "PATCH", "/v1/admin/orders/alice/o-none", `{"status":"shipped"}`, json},
		{"DevToken", "POST", "/v1/dev/token", `{"userId":"alice"}`, json},
		{"WebhookCreate", "POST", "/v1/admin/webhooks", `{"url":"https://r.example.com/","eventTypes":["order.placed"]}`, json},
		{"WebhookPatch", "PATCH", "/v1/admin/webhooks/wh-none", `{"paused":true}`, mergePatch},
		{"WebhookRotate", "POST", "/v1/admin/webhooks/wh-none/rotate-secret", `{"overlapSeconds":60}`, json},
	}
}

// TestBodyMediaType: a body is read only as the media type of its route,
// with no parameter but charset=utf-8; anything else, or a body without a
// Content-Type, is a 415 problem.
func TestBodyMediaType(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	for _, rt := range bodyRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			for i, tc := range []struct {
				contentType string
				refused     bool
			}{
				{"text/plain", true},
				{"application/x-www-form-urlencoded", true},
				{"application/xml", true},
				{"application/json; charset=utf-16", true},
				{rt.mediaType + "; charset=utf-16", true},
				{rt.mediaType + "; boundary=x", true},
				{rt.mediaType + "x", true},
				{"", true}, // a body without a Content-Type
				{rt.mediaType, false},
				{rt.mediaType + "; charset=utf-8", false},
				{rt.mediaType + ";charset=UTF-8", false},
			} {
				h := map[string]string{"Content-Type": tc.contentType, "Idempotency-Key": "k-" + strconv.Itoa(i)}
				r := s.on(t).do(req{method: rt.method, path: rt.path, token: admin, body: rt.body, header: h})
				if got := r.Code == http.StatusUnsupportedMediaType; got != tc.refused {
					t.Errorf("Content-Type %q: status %d, want 415: %v; body: %s", tc.contentType, r.Code, tc.refused, r.Body)
					continue
				}
				if tc.refused {
					if p := decodeBody[problemBody](t, r); p.Type != "https://shop.example/problems/unsupported-media-type" {
						t.Errorf("Content-Type %q: problem = %+v", tc.contentType, p)
					}
				}
			}
		})
	}
}

// TestEmptyBodyWithoutContentTypeIs400: with no body there is no media
// type to check; the missing body is the error.
func TestEmptyBodyWithoutContentTypeIs400(t *testing.T) {
	s := newShop(t)
	s.fixture()
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: token(t, "alice", false)}).want(400)
}
