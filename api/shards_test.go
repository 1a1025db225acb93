package api_test

import (
	"slices"
	"strings"
	"testing"
)

type layoutBody struct {
	Shards, ShardsMade int
	Available          int64
	Units              []int64
}

// TestStockShards: an admin splits a product's stock into shards and
// merges it back; while split the stock reads as the sum of its shards,
// a count is refused (409), and a checkout takes from one shard. Bad
// input is a problem, never a 500.
func TestStockShards(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	alice := token(t, "alice", false)
	s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
		"productId": "lamp", "name": "Lamp", "priceCents": 1000, "categoryId": "books", "stock": 10,
	}}).want(201)
	shards := func(method string, body any) layoutBody {
		t.Helper()
		return decodeBody[layoutBody](t, s.do(req{method: method, path: "/v1/admin/products/lamp/stock/shards", token: admin, body: body}).want(200))
	}
	if l := shards("GET", nil); l.Shards != 1 || l.ShardsMade != 1 || !slices.Equal(l.Units, []int64{10}) {
		t.Errorf("a stock never split: %+v", l)
	}
	if l := shards("PUT", map[string]int{"shards": 4}); l.Shards != 4 || l.Available != 10 || !slices.Equal(l.Units, []int64{3, 3, 2, 2}) {
		t.Errorf("split into 4: %+v, want 10 units as 3, 3, 2, 2", l)
	}
	got := decodeBody[stockBody](t, s.do(req{method: "GET", path: "/v1/admin/products/lamp/stock", token: admin}).want(200))
	if got.Available != 10 {
		t.Errorf("the stock of a split product reads %d, want the sum 10", got.Available)
	}
	s.do(req{method: "PUT", path: "/v1/admin/products/lamp/stock", token: admin, body: map[string]int{"available": 5}}).want(409)

	s.do(req{method: "PUT", path: "/v1/cart/items/lamp", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	checkout(s, alice, "k1", address).want(201)
	if l := shards("GET", nil); l.Available != 8 {
		t.Errorf("after a sale of 2: %+v, want 8 left", l)
	}
	if l := shards("PUT", map[string]int{"shards": 1}); l.Shards != 1 || l.ShardsMade != 4 || !slices.Equal(l.Units, []int64{8, 0, 0, 0}) {
		t.Errorf("merged: %+v, want the 8 units in shard 0", l)
	}
	// A checkout right after the merge, whose claim may still count 4
	// shards (the count is read again after a second): its take finds its
	// shard drained and moves on to shard 0.
	s.do(req{method: "PUT", path: "/v1/cart/items/lamp", token: alice, body: map[string]int{"quantity": 3}}).want(200)
	checkout(s, alice, "k2", address).want(201)
	if l := shards("GET", nil); !slices.Equal(l.Units, []int64{5, 0, 0, 0}) {
		t.Errorf("a sale of 3 after the merge: %v, want 5 left in shard 0", l.Units)
	}
	s.do(req{method: "PUT", path: "/v1/admin/products/lamp/stock", token: admin, body: map[string]int{"available": 5}}).want(200)

	for _, tc := range []struct {
		name, path string
		body       any
		token      string
		want       int
	}{
		{"Zero", "lamp/stock/shards", map[string]int{"shards": 0}, admin, 400},
		{"TooMany", "lamp/stock/shards", map[string]int{"shards": 65}, admin, 400},
		{"AString", "lamp/stock/shards", map[string]string{"shards": "4"}, admin, 400},
		{"Missing", "lamp/stock/shards", map[string]int{}, admin, 400},
		{"Extra", "lamp/stock/shards", map[string]int{"shards": 2, "units": 3}, admin, 400},
		{"NotJSON", "lamp/stock/shards", "{", admin, 400},
		{"Huge", "lamp/stock/shards", `{"shards": 2, "x": "` + strings.Repeat("a", 2<<20) + `"}`, admin, 413},
		{"UnknownProduct", "nope/stock/shards", map[string]int{"shards": 2}, admin, 404},
		{"UnknownSKU", "lamp/stock/shards?sku=lamp-xl", map[string]int{"shards": 2}, admin, 404},
		{"TwoSKUs", "lamp/stock/shards?sku=a&sku=b", map[string]int{"shards": 2}, admin, 400},
		{"NotAnAdmin", "lamp/stock/shards", map[string]int{"shards": 2}, alice, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(req{method: "PUT", path: "/v1/admin/products/" + tc.path, token: tc.token, body: tc.body}).want(tc.want)
			if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Errorf("Content-Type %q, want problem+json", ct)
			}
		})
	}
}
