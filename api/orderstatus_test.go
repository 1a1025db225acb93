package api_test

import (
	"fmt"
	"testing"
)

// TestAdminOrderStatusMachine: a status the machine does not allow from
// the order's current one is a 409 naming both; only a value that is not
// a status at all is a 400.
func TestAdminOrderStatusMachine(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice, admin := token(t, "alice", false), token(t, "boss", true)
	o := placeOrder(s, alice, "k1", 1)
	path := "/v1/admin/orders/alice/" + o.ID
	set := func(s *shop, status string) response {
		return s.do(req{method: "PATCH", path: path, token: admin, body: map[string]string{"status": status}})
	}
	conflict := func(t *testing.T, from, to string) {
		p := decodeBody[problemBody](t, set(s.on(t), to).want(409))
		if want := fmt.Sprintf("order %s is %s and cannot become %s", o.ID, from, to); p.Detail != want {
			t.Errorf("detail = %q, want %q", p.Detail, want)
		}
	}

	t.Run("PlacedToPlacedIs409", func(t *testing.T) { conflict(t, "placed", "placed") })
	set(s, "shipped").want(200)
	t.Run("ShippedToPlacedIs409", func(t *testing.T) { conflict(t, "shipped", "placed") })
	t.Run("ShippedToCancelledIs409", func(t *testing.T) { conflict(t, "shipped", "cancelled") })
	t.Run("NotAStatusIs400", func(t *testing.T) {
		for _, v := range []string{"bogus", "Shipped", "", " shipped"} {
			p := decodeBody[problemBody](t, set(s.on(t), v).want(400))
			if len(p.Errors) != 1 || p.Errors[0].Pointer != "/status" {
				t.Errorf("%q: errors = %+v, want one at /status", v, p.Errors)
			}
		}
	})
}
