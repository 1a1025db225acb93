package api_test

import (
	"fmt"
	"testing"
)

// TestAdminOrderStatusMachine: a status the machine does not allow from
// the order's current one is a 409 that says in words where the order
// can go instead; only a value that is not
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
	conflict := func(t *testing.T, to, want string) {
		p := decodeBody[problemBody](t, set(s.on(t), to).want(409))
		if want := fmt.Sprintf(want, o.ID); p.Detail != want {
			t.Errorf("detail = %q, want %q", p.Detail, want)
		}
	}

	t.Run("PlacedToPlacedIs409", func(t *testing.T) { conflict(t, "placed", "order %s is already placed") })
	set(s, "shipped").want(200)
	t.Run("ShippedToPlacedIs409", func(t *testing.T) {
		conflict(t, "placed", "order %s is shipped, so it can be delivered or cancelled next, not placed")
	})
	t.Run("ShippedToAuthorizedIs409", func(t *testing.T) {
		conflict(t, "authorized", "order %s is shipped, so it can be delivered or cancelled next, not authorized")
	})
	set(s, "delivered").want(200)
	t.Run("DeliveredToCancelledIs409", func(t *testing.T) {
		conflict(t, "cancelled", "order %s is delivered, which is final: it can no longer be cancelled")
	})
	t.Run("NotAStatusIs400", func(t *testing.T) {
		for _, v := range []string{"bogus", "Shipped", "", " shipped"} {
			p := decodeBody[problemBody](t, set(s.on(t), v).want(400))
			if len(p.Errors) != 1 || p.Errors[0].Pointer != "/status" {
				t.Errorf("%q: errors = %+v, want one at /status", v, p.Errors)
			}
		}
	})
}
