package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBOLA: user data is keyed by the token's sub, so user B holding user
// A's ids reaches nothing of A's (404) and changes nothing.
func TestBOLA(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice, bob := token(t, "alice", false), token(t, "bob", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	o := decodeBody[orderBody](t, checkout(s, alice, "a-1", address).want(201))
	s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)

	before := snapshotOf(s, alice, o.ID)
	for _, tc := range []struct {
		name, method, path string
		body               any
		header             map[string]string
		want               int
	}{
		{"ReadOrder", "GET", "/v1/orders/" + o.ID, nil, nil, 404},
		{"CancelOrder", "POST", "/v1/orders/" + o.ID + "/cancel", nil, nil, 404},
		{"ReplayAlicesKey", "POST", "/v1/checkout", address, map[string]string{"Idempotency-Key": "a-1"}, 409},
		{"OwnCartOnly", "GET", "/v1/cart", nil, nil, 200},
		{"OwnOrdersOnly", "GET", "/v1/orders", nil, nil, 200},
		{"OwnSummaryOnly", "GET", "/v1/me/summary", nil, nil, 200},
		{"DeleteLineOfOwnCart", "DELETE", "/v1/cart/items/game-1", nil, nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(req{method: tc.method, path: tc.path, token: bob, body: tc.body, header: tc.header}).want(tc.want)
			if tc.want != 200 {
				return
			}
			body := r.Body.String()
			for _, leak := range []string{o.ID, `"alice"`, "game-1"} {
				if strings.Contains(body, leak) {
					t.Errorf("bob's response shows %s: %s", leak, body)
				}
			}
		})
	}
	if diff := cmp.Diff(before, snapshotOf(s, alice, o.ID)); diff != "" {
		t.Errorf("alice's data changed (-before +after):\n%s", diff)
	}
}

// snapshotOf is everything of a user's the API shows.
func snapshotOf(s *shop, tok, orderID string) []string {
	s.t.Helper()
	var out []string
	for _, p := range []string{"/v1/cart", "/v1/orders", "/v1/me/summary", "/v1/orders/" + orderID} {
		out = append(out, s.do(req{method: "GET", path: p, token: tok}).want(200).Body.String())
	}
	return out
}
