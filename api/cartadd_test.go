package api_test

import "testing"

// TestCartAddAddsToTheLine: POST /v1/cart/items/{id} adds to the line's
// quantity, so "Add to cart" twice holds two, and an add past 99 is a 409
// that says what the cart holds, leaving the line as it was.
func TestCartAddAddsToTheLine(t *testing.T) {
	s := newShop(t)
	s.fixture()
	bob := token(t, "bob", false)
	add := func(q int) response {
		return s.do(req{method: "POST", path: "/v1/cart/items/book-1", token: bob, body: map[string]int{"quantity": q}})
	}
	quantity := func(r response) int {
		for _, l := range decodeBody[cartBody](t, r).Items {
			if l.ProductID == "book-1" {
				return l.Quantity
			}
		}
		return 0
	}

	if got, want := quantity(add(1).want(200)), 1; got != want {
		t.Fatalf("after one add: quantity %d, want %d", got, want)
	}
	if got, want := quantity(add(2).want(200)), 3; got != want {
		t.Fatalf("after adding 2 more: quantity %d, want %d", got, want)
	}
	p := decodeBody[problemBody](t, add(97).want(409))
	if want := "your cart already holds 3 of Go in Practice, and a line holds at most 99"; p.Detail != want {
		t.Errorf("detail = %q, want %q", p.Detail, want)
	}
	if got, want := quantity(s.do(req{method: "GET", path: "/v1/cart", token: bob}).want(200)), 3; got != want {
		t.Errorf("after the refused add: quantity %d, want it unchanged at %d", got, want)
	}
	add(0).want(400)
}
