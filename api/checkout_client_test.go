package api_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/reference-shop/shop/api/client"
	"github.com/reference-shop/shop/domain"
)

// TestCheckout: through the generated client, as a Go caller checks out.
// Requests the client cannot send (a missing key, other spacing) go raw.
func TestCheckout(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	c := s.client(alice)
	ctx := context.Background()
	place := func(c *client.ClientWithResponses, key string, addr client.Address) (*client.CheckoutResponse, error) {
		return client.OK(c.CheckoutWithResponse(ctx, &client.CheckoutParams{IdempotencyKey: key}, client.CheckoutRequest{ShippingAddress: addr, PaymentMethod: "pm_card_visa"}))
	}
	problem := func(t *testing.T, err error, status int) *client.Error {
		t.Helper()
		var e *client.Error
		if !errors.As(err, &e) || e.Status != status {
			t.Fatalf("err = %v, want a %d problem", err, status)
		}
		return e
	}

	t.Run("EmptyCartIs409", func(t *testing.T) {
		_, err := place(c, "empty", clientAddress)
		problem(t, err, http.StatusConflict)
	})
	for _, line := range []struct {
		product  string
		quantity int
	}{{"book-1", 2}, {"game-1", 1}} {
		if _, err := client.OK(c.PutCartItemWithResponse(ctx, line.product, nil, client.CartItemRequest{Quantity: line.quantity})); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("MissingKeyIs400", func(t *testing.T) {
		s.do(req{method: "POST", path: "/v1/checkout", token: alice, body: address}).want(400)
	})
	t.Run("KeyTooLongIs400", func(t *testing.T) {
		_, err := place(c, strings.Repeat("k", 256), clientAddress)
		problem(t, err, http.StatusBadRequest)
	})
	t.Run("KeyWithSlashIs400", func(t *testing.T) {
		_, err := place(c, "a/b", clientAddress)
		problem(t, err, http.StatusBadRequest)
	})
	t.Run("BadCountryNamesTheField", func(t *testing.T) {
		bad := client.Address{Name: "A", Line1: "B", City: "C", PostalCode: "D", Country: "XX"}
		_, err := place(c, "bad", bad)
		if e := problem(t, err, http.StatusBadRequest); len(e.Errors) != 1 || e.Errors[0].Pointer != "/shippingAddress/country" {
			t.Errorf("errors = %+v, want /shippingAddress/country", e.Errors)
		}
	})

	first, err := place(c, "order-1", clientAddress)
	if err != nil {
		t.Fatal(err)
	}
	o := first.JSON201
	t.Run("Placed", func(t *testing.T) {
		if o.Status != domain.StatusPlaced || o.TotalCents != 2*3999+5999 || o.ItemCount != 3 || o.UserID != "alice" {
			t.Errorf("order = %+v", o)
		}
		if got, want := first.Headers201.Location, "/v1/orders/"+o.ID; got != want {
			t.Errorf("Location = %s, want %s", got, want)
		}
		if o.Customer.Name != "User alice" || o.Customer.Email != "alice@example.com" {
			t.Errorf("customer = %+v", o.Customer)
		}
		if cost, err := client.CostOf(first.HTTPResponse); err != nil || cost.Operations < 2 || cost.RequestUnits <= 0 {
			t.Errorf("cost = %+v, %v: want the checkout's writes counted", cost, err)
		}
	})
	t.Run("CartIsReset", func(t *testing.T) {
		r, err := client.OK(c.GetCartWithResponse(ctx))
		if err != nil || len(r.JSON200.Items) != 0 {
			t.Errorf("cart after checkout = %+v, %v; want empty", r.JSON200, err)
		}
	})
	t.Run("SummaryCountsIt", func(t *testing.T) {
		r, err := client.OK(c.GetMySummaryWithResponse(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if sum := r.JSON200; sum.TotalOrders != 1 || sum.TotalSpentCents != o.TotalCents || sum.AverageOrderCents != o.TotalCents || sum.LastOrderAt == nil {
			t.Errorf("summary = %+v", sum)
		}
	})
	t.Run("ReplayAnswersTheSameOrder", func(t *testing.T) {
		again, err := place(c, "order-1", clientAddress)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Body, first.Body) {
			t.Errorf("replay body = %s\nwant %s", again.Body, first.Body)
		}
		if again.Headers201.Location != first.Headers201.Location {
			t.Errorf("replay Location = %s", again.Headers201.Location)
		}
	})
	t.Run("ReplayIgnoresSpacingAndKeyOrder", func(t *testing.T) {
		body := `{ "paymentMethod": "pm_card_visa", "shippingAddress": {"country":"GB","postalCode":"N1 9GU","city":"London","line1":"1 Analytical St","name":"Ada Lovelace"} }`
		checkout(s, alice, "order-1", body).want(201)
	})
	t.Run("SameKeyOtherBodyIs422", func(t *testing.T) {
		other := client.Address{Name: "Ada", Line1: "2 Other St", City: "Paris", PostalCode: "75001", Country: "FR"}
		_, err := place(c, "order-1", other)
		problem(t, err, http.StatusUnprocessableEntity)
	})
	t.Run("KeysArePerUser", func(t *testing.T) {
		bob := s.client(token(t, "bob", false))
		if _, err := client.OK(bob.PutCartItemWithResponse(ctx, "book-2", nil, client.CartItemRequest{Quantity: 1})); err != nil {
			t.Fatal(err)
		}
		b, err := place(bob, "order-1", clientAddress)
		if err != nil {
			t.Fatal(err)
		}
		if b.JSON201.ID == o.ID || b.JSON201.UserID != "bob" {
			t.Errorf("bob's order = %+v, want his own", b.JSON201)
		}
	})
	t.Run("UnavailableLineIs409NamingIt", func(t *testing.T) {
		if _, err := client.OK(c.PutCartItemWithResponse(ctx, "book-2", nil, client.CartItemRequest{Quantity: 1})); err != nil {
			t.Fatal(err)
		}
		// What the products feed does to open carts after a delete.
		if _, err := s.repos.Carts.Update(ctx, "alice", "", func(c *domain.Cart) error {
			c.Items[0].Available = false
			c.Recompute(c.LastUpdated)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		_, err := place(c, "order-2", clientAddress)
		if e := problem(t, err, http.StatusConflict); e.Detail != "products no longer available: book-2" {
			t.Errorf("detail = %q, want it to name book-2", e.Detail)
		}
	})
}

// TestCheckoutConcurrentDuplicates: 20 identical checkouts at once make
// exactly one order; the others replay it or are told it is in flight.
func TestCheckoutConcurrentDuplicates(t *testing.T) {
	s := newShop(t)
	s.fixture()
	c := s.client(token(t, "alice", false))
	ctx := t.Context()
	if _, err := client.OK(c.PutCartItemWithResponse(ctx, "book-1", nil, client.CartItemRequest{Quantity: 1})); err != nil {
		t.Fatal(err)
	}
	place := func() (*client.CheckoutResponse, error) {
		return client.OK(c.CheckoutWithResponse(ctx, &client.CheckoutParams{IdempotencyKey: "same"}, client.CheckoutRequest{ShippingAddress: clientAddress, PaymentMethod: "pm_card_visa"}))
	}

	const n = 20
	codes := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := place()
			var e *client.Error
			switch {
			case err == nil:
				codes[i], ids[i] = r.StatusCode(), r.JSON201.ID
			case errors.As(err, &e):
				codes[i] = e.Status
			default:
				t.Errorf("checkout %d: %v", i, err)
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
	page, err := s.repos.Orders.Page(context.Background(), "alice", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	items, err := page.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Errorf("orders = %d, want exactly 1 (201: %d, 409: %d)", len(items), created, inFlight)
	}
	// After the race, a retry replays.
	r, err := place()
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON201.ID != items[0].ID {
		t.Errorf("replay = %s, want %s", r.JSON201.ID, items[0].ID)
	}
}
