package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
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

// crashedCheckout leaves what a checkout of the user's cart leaves when
// its process dies just after its order was placed: the claim on the
// cart, and the order placed, its cart not yet settled.
func crashedCheckout(t *testing.T, s *shop, userID, orderID string) domain.Order {
	t.Helper()
	o := crashedCheckoutAfter(t, s, userID, orderID, 0)
	if t.Failed() {
		t.FailNow()
	}
	return o
}

// crashedCheckoutAfter is crashedCheckout with the order opened
// authorized at once and placed delay later (a checkout still in
// progress meanwhile); it reports failures with t.Error, so a goroutine
// may run it.
func crashedCheckoutAfter(t *testing.T, s *shop, userID, orderID string, delay time.Duration) domain.Order {
	t.Helper()
	ctx := t.Context()
	cart, err := s.repos.Carts.Update(ctx, userID, "", func(c *domain.Cart) error {
		c.MarkPending(orderID, time.Now())
		return nil
	})
	if err != nil {
		t.Error(err)
		return domain.Order{}
	}
	var addr domain.Address
	b, _ := json.Marshal(address["shippingAddress"])
	_ = json.Unmarshal(b, &addr)
	o, err := domain.NewOrder(orderID, cart, domain.Customer{Name: "User " + userID}, addr, "crashed-"+orderID, time.Now())
	if err != nil {
		t.Error(err)
		return domain.Order{}
	}
	o.Status = domain.StatusAuthorized
	if o, err = s.repos.Orders.Open(ctx, o, domain.Idempotency{Key: "crashed-" + orderID, RequestHash: "h", CreatedAt: o.CreatedAt}); err != nil {
		t.Error(err)
		return domain.Order{}
	}
	time.Sleep(delay)
	if err := o.Move(domain.StatusPlaced, time.Now()); err != nil {
		t.Error(err)
	}
	if o, err = s.repos.Orders.Move(ctx, o, domain.StatusAuthorized); err != nil {
		t.Error(err)
	}
	return o
}

// cartQuantities is the caller's cart screen as product id → quantity.
func cartQuantities(t *testing.T, s *shop, tok string) map[string]int {
	t.Helper()
	c := decodeBody[cartBody](t, s.do(req{method: "GET", path: "/v1/cart", token: tok}).want(200))
	q := map[string]int{}
	for _, l := range c.Items {
		q[l.ProductID] = l.Quantity
	}
	return q
}

func orderQuantities(o orderBody) map[string]int {
	q := map[string]int{}
	for _, l := range o.Items {
		q[l.ProductID] = l.Quantity
	}
	return q
}

// TestCheckoutCrashedBeforeSettlingChargesOnce: a checkout commits its
// order and stops before taking the paid lines out of the cart; the user
// then adds a product and sets a paid line's quantity. The user's first
// change settles the order before it applies (as if the checkout had
// finished first), so the quantities are the user's, and whoever settles
// first, the change or the orders feed, the next order holds only
// what was not paid for, and the cart ends empty.
func TestCheckoutCrashedBeforeSettlingChargesOnce(t *testing.T) {
	tests := []struct {
		name string
		// feedFirst runs the orders feed handler before the next checkout
		// (otherwise after it, as a late delivery).
		feedFirst bool
	}{
		{"orders feed settles first", true},
		{"next checkout settles first", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newShop(t)
			s.fixture()
			alice := token(t, "alice", false)
			ctx := t.Context()
			s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
			s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)
			first := crashedCheckout(t, s, "alice", "o-crashed")

			// The user goes on shopping before anyone settles the cart.
			s.do(req{method: "PUT", path: "/v1/cart/items/book-2", token: alice, body: map[string]int{"quantity": 1}}).want(200)
			s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 3}}).want(200)

			h := feedworkers.NewHandlers(s.store, writes.New(repo.New(s.store, 0), nil, nil), feedworkers.HandlersConfig{})
			feed := func() {
				t.Helper()
				item, err := s.store.Container("orders").Read(ctx, "alice", first.ID)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Orders(ctx, changefeed.Batch{Items: [][]byte{item.Item}}); err != nil {
					t.Fatal(err)
				}
			}
			unpaid := map[string]int{"book-1": 3, "book-2": 1}
			if tt.feedFirst {
				feed()
				if diff := cmp.Diff(unpaid, cartQuantities(t, s, alice)); diff != "" {
					t.Errorf("cart after the orders feed (-want +got):\n%s", diff)
				}
			}
			second := decodeBody[orderBody](t, checkout(s, alice, "next", address).want(201))
			if diff := cmp.Diff(unpaid, orderQuantities(second)); diff != "" {
				t.Errorf("next order (-want +got):\n%s", diff)
			}
			if got, want := second.TotalCents, int64(3*3999+2999); got != want {
				t.Errorf("next order total = %d, want %d", got, want)
			}
			if !tt.feedFirst {
				feed()
			}
			if got := cartQuantities(t, s, alice); len(got) != 0 {
				t.Errorf("cart after both orders = %v, want empty", got)
			}
			checkout(s, alice, "again", address).want(409)
		})
	}
}

// TestCartReadSettlesAPlacedCheckout: the checkout answers before it
// settles the cart, so the cart screen's read can come first. It finds the
// marker, sees the order committed, and settles before it answers: the
// paid lines never show, and that read costs the order's point read and
// the settle's write on top of its own read (the cart it read is where
// the settle starts, so no second cart read).
func TestCartReadSettlesAPlacedCheckout(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	crashedCheckout(t, s, "alice", "o-placed")

	r := s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200)
	if c := decodeBody[cartBody](t, r); len(c.Items) != 0 {
		t.Errorf("cart = %+v, want the paid lines gone", c.Items)
	}
	if got, want := r.Header().Get("X-Store-Operations"), "3"; got != want {
		t.Errorf("X-Store-Operations = %s, want %s: the cart, the order, the settle", got, want)
	}
	r = s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200)
	if got, want := r.Header().Get("X-Store-Operations"), "1"; got != want {
		t.Errorf("X-Store-Operations of the next read = %s, want %s", got, want)
	}
}

// TestCheckoutVoidsAMarkerWithoutOrder: a marker whose order never
// committed (the process died before its batch) is resolved by the next
// checkout: the dead checkout's order id is voided, so its batch can never
// commit late, and the next order holds the whole cart.
func TestCheckoutVoidsAMarkerWithoutOrder(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	cart, err := s.repos.Carts.Update(t.Context(), "alice", "", func(c *domain.Cart) error {
		c.MarkPending("o-never-committed", time.Now().Add(-time.Minute))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	o := decodeBody[orderBody](t, checkout(s, alice, "k", address).want(201))
	if diff := cmp.Diff(map[string]int{"book-1": 2}, orderQuantities(o)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// The cart as the user sees it: the checkout settles it after its
	// answer, and the read settles first if it has not yet.
	if got := cartQuantities(t, s, alice); len(got) != 0 {
		t.Errorf("cart after checkout = %v, want empty", got)
	}
	// The dead checkout's batch, arriving late, is refused as a whole.
	var addr domain.Address
	b, _ := json.Marshal(address["shippingAddress"])
	_ = json.Unmarshal(b, &addr)
	late, err := domain.NewOrder("o-never-committed", cart, domain.Customer{Name: "A"}, addr, "late", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.Orders.Open(t.Context(), late, domain.Idempotency{Key: "late", RequestHash: "h"}); !errors.Is(err, repo.ErrOrderExists) {
		t.Errorf("late batch of the voided checkout = %v, want ErrOrderExists", err)
	}
	checkout(s, alice, "k2", address).want(409)
}

// TestCartChangeWaitsForACheckoutInProgress: a cart change that finds the
// claim of a checkout whose order is in progress waits for it, and once
// the order is placed, settles it and applies the change to what is
// left.
func TestCartChangeWaitsForACheckoutInProgress(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 2}}).want(200)
	done := make(chan domain.Order)
	go func() {
		// A checkout whose order is placed 100 ms after it opened.
		o := crashedCheckoutAfter(t, s, "alice", "o-slow", 100*time.Millisecond)
		done <- o
	}()
	// Wait for the order in progress, then change the cart.
	for {
		if o, err := s.repos.Orders.Get(t.Context(), "alice", "o-slow"); err == nil && o.InProgress() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	got := decodeBody[cartBody](t, s.do(req{method: "PUT", path: "/v1/cart/items/book-2", token: alice, body: map[string]int{"quantity": 1}}).want(200))
	<-done
	if len(got.Items) != 1 || got.Items[0].ProductID != "book-2" {
		t.Errorf("cart after the PUT = %+v, want only book-2: the checkout came first", got.Items)
	}
}

// TestCheckoutConcurrentKeysPayOnce: two tabs, or rapid clicks, check out
// the same cart at once, each with its own Idempotency-Key. As if they ran
// one after the other: one order, and the cart is empty for the rest.
func TestCheckoutConcurrentKeysPayOnce(t *testing.T) {
	for _, n := range []int{2, 10} {
		t.Run(fmt.Sprintf("%d at once", n), func(t *testing.T) {
			s := newShop(t)
			s.fixture()
			for round := range 10 {
				user := fmt.Sprintf("u%d", round)
				tok := token(t, user, false)
				s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: tok, body: map[string]int{"quantity": 2}}).want(200)
				s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: tok, body: map[string]int{"quantity": 1}}).want(200)
				codes := make([]int, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() { codes[i] = checkout(s, tok, fmt.Sprintf("k%d", i), address).Code })
				}
				wg.Wait()
				created := 0
				for i, c := range codes {
					switch c {
					case http.StatusCreated:
						created++
					case http.StatusConflict:
					default:
						t.Errorf("round %d: checkout %d = %d, want 201 or 409", round, i, c)
					}
				}
				page, err := s.repos.Orders.Page(t.Context(), user, 100, "")
				if err != nil {
					t.Fatal(err)
				}
				items, err := page.Decode()
				if err != nil {
					t.Fatal(err)
				}
				sum, err := s.repos.Orders.Summary(t.Context(), user)
				if err != nil {
					t.Fatal(err)
				}
				if created != 1 || len(items) != 1 || sum.TotalOrders != 1 {
					t.Errorf("round %d: %d × 201, %d orders, summary %d; want one of each", round, created, len(items), sum.TotalOrders)
				}
				if got := cartQuantities(t, s, tok); len(got) != 0 {
					t.Errorf("round %d: cart after checkout = %v, want empty", round, got)
				}
			}
		})
	}
}
