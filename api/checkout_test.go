package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"shop/domain"
)

type orderBody struct {
	ID         string
	UserID     string
	Status     string
	TotalCents int64
	ItemCount  int
	Items      []domain.OrderLine
	Customer   domain.Customer
}

func checkout(s *shop, tok, key string, body any) response {
	s.t.Helper()
	return s.do(req{method: "POST", path: "/v1/checkout", token: tok, body: body, header: map[string]string{"Idempotency-Key": key}})
}

func TestCheckout(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	ctx := context.Background()

	t.Run("EmptyCartIs409", func(t *testing.T) {
		checkout(s, alice, "empty", address).want(409)
	})
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)

	t.Run("MissingKeyIs400", func(t *testing.T) {
		s.do(req{method: "POST", path: "/v1/checkout", token: alice, body: address}).want(400)
	})
	t.Run("KeyTooLongIs400", func(t *testing.T) {
		long := make([]byte, 256)
		for i := range long {
			long[i] = 'k'
		}
		checkout(s, alice, string(long), address).want(400)
	})
	t.Run("KeyWithSlashIs400", func(t *testing.T) {
		checkout(s, alice, "a/b", address).want(400)
	})
	t.Run("BadCountryNamesTheField", func(t *testing.T) {
		bad := map[string]any{"shippingAddress": map[string]any{"name": "A", "line1": "B", "city": "C", "postalCode": "D", "country": "XX"}}
		p := decodeBody[problemBody](t, checkout(s, alice, "bad", bad).want(400))
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/shippingAddress/country" {
			t.Errorf("errors = %+v, want /shippingAddress/country", p.Errors)
		}
	})

	first := checkout(s, alice, "order-1", address).want(201)
	o := decodeBody[orderBody](t, first)
	t.Run("Placed", func(t *testing.T) {
		if o.Status != domain.StatusPlaced || o.TotalCents != 2*3999+5999 || o.ItemCount != 3 || o.UserID != "alice" {
			t.Errorf("order = %+v", o)
		}
		if got, want := first.Header().Get("Location"), "/v1/orders/"+o.ID; got != want {
			t.Errorf("Location = %s, want %s", got, want)
		}
		if o.Customer != (domain.Customer{Name: "User alice", Email: "alice@example.com"}) {
			t.Errorf("customer = %+v", o.Customer)
		}
	})
	t.Run("CartIsReset", func(t *testing.T) {
		c := decodeBody[cartBody](t, s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200))
		if len(c.Items) != 0 {
			t.Errorf("cart after checkout = %+v, want empty", c)
		}
	})
	t.Run("SummaryCountsIt", func(t *testing.T) {
		sum := decodeBody[struct{ TotalOrders, TotalSpentCents, AverageOrderCents int64 }](t,
			s.do(req{method: "GET", path: "/v1/me/summary", token: alice}).want(200))
		if sum.TotalOrders != 1 || sum.TotalSpentCents != o.TotalCents || sum.AverageOrderCents != o.TotalCents {
			t.Errorf("summary = %+v", sum)
		}
	})
	t.Run("ReplayAnswersTheSameOrder", func(t *testing.T) {
		again := checkout(s, alice, "order-1", address).want(201)
		if again.Body.String() != first.Body.String() {
			t.Errorf("replay body = %s\nwant %s", again.Body, first.Body)
		}
		if again.Header().Get("Location") != first.Header().Get("Location") {
			t.Errorf("replay Location = %s", again.Header().Get("Location"))
		}
	})
	t.Run("ReplayIgnoresSpacingAndKeyOrder", func(t *testing.T) {
		body := `{ "shippingAddress": {"country":"GB","postalCode":"N1 9GU","city":"London","line1":"1 Analytical St","name":"Ada Lovelace"} }`
		checkout(s, alice, "order-1", body).want(201)
	})
	t.Run("SameKeyOtherBodyIs422", func(t *testing.T) {
		other := map[string]any{"shippingAddress": map[string]any{"name": "Ada", "line1": "2 Other St", "city": "Paris", "postalCode": "75001", "country": "FR"}}
		checkout(s, alice, "order-1", other).want(422)
	})
	t.Run("KeysArePerUser", func(t *testing.T) {
		bob := token(t, "bob", false)
		s.do(req{method: "PUT", path: "/v1/cart/items/book-2", token: bob, body: map[string]int{"quantity": 1}}).want(200)
		b := decodeBody[orderBody](t, checkout(s, bob, "order-1", address).want(201))
		if b.ID == o.ID || b.UserID != "bob" {
			t.Errorf("bob's order = %+v, want his own", b)
		}
	})
	t.Run("UnavailableLineIs409NamingIt", func(t *testing.T) {
		s.do(req{method: "PUT", path: "/v1/cart/items/book-2", token: alice, body: map[string]int{"quantity": 1}}).want(200)
		// What the products feed does to open carts after a delete.
		if _, err := s.repos.Carts.Update(ctx, "alice", "", func(c *domain.Cart) error {
			c.Items[0].Available = false
			c.Recompute(c.LastUpdated)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		p := decodeBody[problemBody](t, checkout(s, alice, "order-2", address).want(409))
		if p.Detail != "products no longer available: book-2" {
			t.Errorf("detail = %q, want it to name book-2", p.Detail)
		}
	})
}

// TestCheckoutConcurrentDuplicates: 20 identical checkouts at once make
// exactly one order; the others replay it or are told it is in flight.
func TestCheckoutConcurrentDuplicates(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)

	const n = 20
	codes := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := checkout(s, alice, "same", address)
			codes[i] = r.Code
			if r.Code == http.StatusCreated {
				ids[i] = decodeBody[orderBody](t, r).ID
			}
		})
	}
	wg.Wait()
	created, inFlight := 0, 0
	orderID := ""
	for i, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
			if orderID == "" {
				orderID = ids[i]
			}
			if ids[i] != orderID {
				t.Errorf("two different orders: %s and %s", orderID, ids[i])
			}
		case http.StatusConflict:
			inFlight++
		default:
			t.Errorf("checkout %d = %d, want 201 or 409", i, c)
		}
	}
	if created == 0 {
		t.Fatal("no checkout succeeded")
	}
	items, _, err := s.repos.Orders.Page(context.Background(), "alice", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Errorf("orders = %d, want exactly 1 (201: %d, 409: %d)", len(items), created, inFlight)
	}
	// After the race, a retry replays.
	if got := decodeBody[orderBody](t, checkout(s, alice, "same", address).want(201)); got.ID != items[0].ID {
		t.Errorf("replay = %s, want %s", got.ID, items[0].ID)
	}
}
