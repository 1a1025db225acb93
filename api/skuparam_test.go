package api_test

import "testing"

// TestOneSKUPerLine: a line or a stock names one variant; ?sku= given
// twice is refused, never read as the first of them.
func TestOneSKUPerLine(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	admin := token(t, "admin", true)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1?sku=a&sku=b", token: alice, body: map[string]int{"quantity": 1}}).want(400)
	s.do(req{method: "DELETE", path: "/v1/cart/items/book-1?sku=a&sku=b", token: alice}).want(400)
	s.do(req{method: "GET", path: "/v1/admin/products/book-1/stock?sku=a&sku=b", token: admin}).want(400)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1?sku=a%2Fb", token: alice, body: map[string]int{"quantity": 1}}).want(400)
	// A product without variants has no SKU: 404, and the cart is as it was.
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1?sku=a", token: alice, body: map[string]int{"quantity": 1}}).want(404)
}
