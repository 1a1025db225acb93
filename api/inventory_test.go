package api_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/reference-shop/shop/api/client"
)

type stockBody struct {
	ProductID string
	SKU       string
	Available int64
	Status    string
}

// TestStockAndCheckout: a product created with 2 units sells 2, a
// checkout of more is refused whole with the short lines named, a cancel
// returns the units once, and a count is an admin's PUT.
func TestStockAndCheckout(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	alice := token(t, "alice", false)
	s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
		"productId": "lamp", "name": "Lamp", "priceCents": 1000, "categoryId": "books", "stock": 2,
	}}).want(201)
	s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
		"productId": "uncounted", "name": "Uncounted", "priceCents": 500, "categoryId": "books",
	}}).want(201)
	stock := func(id string) stockBody {
		t.Helper()
		return decodeBody[stockBody](t, s.do(req{method: "GET", path: "/v1/admin/products/" + id + "/stock", token: admin}).want(200))
	}
	if got := stock("lamp"); got.Available != 2 || got.Status != "low_stock" {
		t.Errorf("lamp stock = %+v, want 2, low_stock", got)
	}
	if got := stock("uncounted"); got.Available != 0 || got.Status != "sold_out" {
		t.Errorf("a product created without stock = %+v, want 0, sold_out", got)
	}

	// Three lamps and a book: refused whole, the lamp named, nothing taken.
	s.do(req{method: "PUT", path: "/v1/cart/items/lamp", token: alice, body: map[string]int{"quantity": 3}}).want(200)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	_, err := client.OK(s.client(alice).CheckoutWithResponse(t.Context(), &client.CheckoutParams{IdempotencyKey: "k1"}, client.CheckoutRequest{ShippingAddress: clientAddress, PaymentMethod: "pm_card_visa"}))
	var p *client.Error
	if !errors.As(err, &p) || p.Status != http.StatusConflict || p.Type != client.ProblemOutOfStock || len(p.Items) != 1 ||
		p.Items[0].ProductID != "lamp" || p.Items[0].Requested != 3 || p.Items[0].Available != 2 {
		t.Errorf("out-of-stock checkout: %v, want a 409 out-of-stock naming the lamp", err)
	}
	if got := stock("lamp"); got.Available != 2 {
		t.Errorf("lamp stock after the refusal = %d, want 2: nothing reserved", got.Available)
	}
	if got := cartQuantities(t, s, alice); got["lamp"] != 3 || got["book-1"] != 1 {
		t.Errorf("cart after the refusal = %v, want it unchanged", got)
	}

	// Two lamps sell, and the stock is gone.
	s.do(req{method: "PUT", path: "/v1/cart/items/lamp", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	o := decodeBody[orderBody](t, checkout(s, alice, "k2", address).want(201))
	if got := stock("lamp"); got.Available != 0 || got.Status != "sold_out" {
		t.Errorf("lamp stock after the sale = %+v, want 0, sold_out", got)
	}
	// A replay reserves nothing twice.
	checkout(s, alice, "k2", address).want(201)
	if got := stock("lamp"); got.Available != 0 {
		t.Errorf("lamp stock after a replay = %d, want 0", got.Available)
	}

	// The cancel returns the units, once.
	s.do(req{method: "POST", path: "/v1/orders/" + o.ID + "/cancel", token: alice}).want(200)
	s.do(req{method: "POST", path: "/v1/orders/" + o.ID + "/cancel", token: alice}).want(409)
	if got := stock("lamp"); got.Available != 2 {
		t.Errorf("lamp stock after the cancel = %d, want 2", got.Available)
	}

	// An admin's count, with If-Match: the ETag read, then a stale one.
	boss := s.client(admin)
	r, err := client.OK(boss.GetStockWithResponse(t.Context(), "lamp", nil))
	if err != nil {
		t.Fatal(err)
	}
	etag := client.ETagOf(r.HTTPResponse)
	count := func(n int) error {
		_, err := client.OK(boss.SetStockWithResponse(t.Context(), "lamp", &client.SetStockParams{IfMatch: &etag}, client.StockRequest{Available: n}))
		return err
	}
	if err := count(50); err != nil {
		t.Fatalf("count with the ETag read: %v", err)
	}
	if err := count(60); !errors.As(err, &p) || p.Status != http.StatusPreconditionFailed {
		t.Errorf("count with a stale ETag: %v, want a 412", err)
	}
	if got := stock("lamp"); got.Available != 50 || got.Status != "in_stock" {
		t.Errorf("lamp stock after the count = %+v, want 50, in_stock", got)
	}

	// Bounds and unknown products.
	s.do(req{method: "PUT", path: "/v1/admin/products/lamp/stock", token: admin, body: map[string]int{"available": -1}}).want(400)
	s.do(req{method: "PUT", path: "/v1/admin/products/lamp/stock", token: admin, body: map[string]int{"available": 1_000_001}}).want(400)
	s.do(req{method: "PUT", path: "/v1/admin/products/nope/stock", token: admin, body: map[string]int{"available": 1}}).want(404)
	s.do(req{method: "GET", path: "/v1/admin/products/nope/stock", token: admin}).want(404)
	s.do(req{method: "GET", path: "/v1/admin/products/lamp/stock", token: alice}).want(403)
	// A product from before stock was counted sells without a limit.
	s.do(req{method: "GET", path: "/v1/admin/products/book-2/stock", token: admin}).want(404)
}
