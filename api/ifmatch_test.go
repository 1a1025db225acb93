package api_test

import (
	"testing"
)

// TestIfMatchAnyAndLists: If-Match * matches any current representation
// (412 only when there is none), a list matches if one of its entity tags
// does, and the comparison is strong (RFC 9110 §13.1.1), on every route
// that honours If-Match.
func TestIfMatchAnyAndLists(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice, admin := token(t, "alice", false), token(t, "boss", true)
	ifMatch := func(v string) map[string]string { return map[string]string{"If-Match": v} }
	putLine := func(s *shop, tok, product, im string) response {
		return s.do(req{method: "PUT", path: "/v1/cart/items/" + product, token: tok, body: map[string]int{"quantity": 1}, header: ifMatch(im)})
	}

	t.Run("CartStarWithoutCartIs412", func(t *testing.T) {
		s := s.on(t)
		bob := token(t, "bob", false)
		putLine(s, bob, "book-1", "*").want(412)
		if etag := s.do(req{method: "GET", path: "/v1/cart", token: bob}).want(200).Header().Get("ETag"); etag != "" {
			t.Errorf("the cart was created (ETag %s)", etag)
		}
	})
	etag := putLine(s, alice, "book-1", "").want(200).Header().Get("ETag")
	t.Run("CartPutStar", func(t *testing.T) {
		s := s.on(t)
		etag = putLine(s, alice, "book-2", "*").want(200).Header().Get("ETag")
	})
	t.Run("CartPutListWithCurrent", func(t *testing.T) {
		s := s.on(t)
		etag = putLine(s, alice, "game-1", `"stale", `+etag).want(200).Header().Get("ETag")
	})
	t.Run("CartPutListWithoutCurrentIs412", func(t *testing.T) {
		s := s.on(t)
		putLine(s, alice, "game-1", `"a", "b"`).want(412)
	})
	t.Run("CartPutWeakIs412", func(t *testing.T) {
		s := s.on(t)
		putLine(s, alice, "game-1", "W/"+etag).want(412)
	})
	t.Run("CartDeleteStar", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "DELETE", path: "/v1/cart/items/game-1", token: alice, header: ifMatch("*")}).want(200)
	})
	t.Run("CartDeleteStarWithoutCartIs412", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "DELETE", path: "/v1/cart/items/game-1", token: token(t, "carol", false), header: ifMatch("*")}).want(412)
	})

	o1 := placeOrder(s, alice, "k1", 1)
	o2 := placeOrder(s, alice, "k2", 1)
	t.Run("OrderCancelStar", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "POST", path: "/v1/orders/" + o1.ID + "/cancel", token: alice, header: ifMatch("*")}).want(200)
	})
	t.Run("AdminOrderPatchStar", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "PATCH", path: "/v1/admin/orders/alice/" + o2.ID, token: admin,
			body: map[string]string{"status": "shipped"}, header: ifMatch("*")}).want(200)
	})
	t.Run("AdminOrderPatchList", func(t *testing.T) {
		s := s.on(t)
		cur := s.do(req{method: "GET", path: "/v1/orders/" + o2.ID, token: alice}).want(200).Header().Get("ETag")
		s.do(req{method: "PATCH", path: "/v1/admin/orders/alice/" + o2.ID, token: admin,
			body: map[string]string{"status": "delivered"}, header: ifMatch(`"x",` + cur)}).want(200)
	})

	patch := func(s *shop, im string) response {
		return s.do(req{method: "PATCH", path: "/v1/products/book-2", token: admin, body: `{"priceCents":1234}`,
			header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": im}})
	}
	t.Run("ProductPatchStar", func(t *testing.T) {
		s := s.on(t)
		patch(s, "*").want(200)
	})
	t.Run("ProductPatchList", func(t *testing.T) {
		s := s.on(t)
		cur := s.do(req{method: "GET", path: "/v1/products/book-2"}).want(200).Header().Get("ETag")
		patch(s, `"x" , `+cur+`, "y"`).want(200)
		patch(s, `"x", "y"`).want(412)
	})
	t.Run("ProductDeleteStar", func(t *testing.T) {
		s := s.on(t)
		s.do(req{method: "DELETE", path: "/v1/products/game-1", token: admin, header: ifMatch("*")}).want(204)
	})
}
