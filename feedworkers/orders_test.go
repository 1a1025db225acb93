package feedworkers_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// placeOrder checks out the user's cart the way the API does (marker on
// the cart with If-Match, then the order batch) but stops before settling
// the cart: a checkout that crashed between the two containers.
func placeOrder(t *testing.T, repos *repo.Set, userID, orderID string) domain.Order {
	t.Helper()
	cart, err := repos.Carts.Update(t.Context(), userID, "", func(c *domain.Cart) error {
		c.MarkPending(orderID, now)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := domain.Address{Name: "A", Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"}
	o, err := domain.NewOrder(orderID, cart, domain.Customer{Name: "A", Email: "a@example.com"}, addr, "key-"+orderID, now)
	if err != nil {
		t.Fatal(err)
	}
	o.Status = domain.StatusPlaced
	o, err = repos.Orders.Open(t.Context(), o, domain.Idempotency{Key: "key-" + orderID, RequestHash: "h", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// cartLines returns the user's cart as product id → quantity.
func cartLines(t *testing.T, repos *repo.Set, userID string) (map[string]int, domain.Cart) {
	t.Helper()
	c, err := repos.Carts.Get(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, l := range c.Items {
		lines[l.ProductID] = l.Quantity
	}
	return lines, c
}

func TestOrdersHandlerSettlesThePaidLines(t *testing.T) {
	tests := []struct {
		name string
		// after runs between the order batch and the handler.
		after     func(t *testing.T, repos *repo.Set, coffee, tea domain.Product)
		wantLines map[string]int
	}{
		{"checkout crashed before settling the cart", func(*testing.T, *repo.Set, domain.Product, domain.Product) {}, map[string]int{}},
		{"the owner added a product and raised a paid quantity since", func(t *testing.T, repos *repo.Set, coffee, tea domain.Product) {
			addToCart(t, repos, "u1", tea, 3)
			addToCart(t, repos, "u1", coffee, 5)
		}, map[string]int{"tea": 3, "coffee": 3}},
		{"the owner lowered a paid quantity since", func(t *testing.T, repos *repo.Set, coffee, _ domain.Product) {
			addToCart(t, repos, "u1", coffee, 1)
		}, map[string]int{}},
		{"the price fan-out refreshed a paid line since", func(t *testing.T, repos *repo.Set, coffee, _ domain.Product) {
			coffee.PriceCents, coffee.PriceVersion, coffee.Version = 1200, coffee.PriceVersion+1, coffee.Version+1
			if _, err := repos.Carts.Update(t.Context(), "u1", "", func(c *domain.Cart) error {
				c.ApplyProduct(coffee, now)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}, map[string]int{}},
		{"the order was cancelled before the feed ran", func(t *testing.T, repos *repo.Set, _, _ domain.Product) {
			if _, err := repos.Orders.SetStatus(t.Context(), "u1", "o1", "", domain.StatusCancelled, now); err != nil {
				t.Fatal(err)
			}
		}, map[string]int{}},
		{"the checkout settled, then the owner added a paid product again", func(t *testing.T, repos *repo.Set, coffee, _ domain.Product) {
			o, err := repos.Orders.Get(t.Context(), "u1", "o1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := repos.Carts.Update(t.Context(), "u1", "", func(c *domain.Cart) error {
				c.Settle(o, now)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			addToCart(t, repos, "u1", coffee, 2)
		}, map[string]int{"coffee": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			repos := repo.New(st, 0)
			h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
			coffee := createProduct(t, repos, "coffee", "drinks", 1000)
			tea := createProduct(t, repos, "tea", "drinks", 500)
			addToCart(t, repos, "u1", coffee, 2)
			placeOrder(t, repos, "u1", "o1")
			tt.after(t, repos, coffee, tea)
			item := raw(t, st, "orders", "u1", "o1")
			// Delivery is at least once: the second run must change nothing.
			for run := range 2 {
				if err := h.Orders(t.Context(), changefeed.Batch{Items: [][]byte{item}}); err != nil {
					t.Fatal(err)
				}
				lines, c := cartLines(t, repos, "u1")
				if diff := cmp.Diff(tt.wantLines, lines); diff != "" {
					t.Errorf("run %d: cart lines (-want +got):\n%s", run+1, diff)
				}
				if c.Pending != nil {
					t.Errorf("run %d: marker %+v, want it cleared", run+1, c.Pending)
				}
			}
		})
	}
}

func TestOrdersHandlerLeavesAnotherCheckoutsMarker(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	coffee := createProduct(t, repos, "coffee", "drinks", 1000)
	addToCart(t, repos, "u1", coffee, 2)
	placeOrder(t, repos, "u1", "o1")
	first := raw(t, st, "orders", "u1", "o1")
	if err := h.Orders(t.Context(), changefeed.Batch{Items: [][]byte{first}}); err != nil {
		t.Fatal(err)
	}
	// The owner fills the cart again and a second checkout marks it; a
	// late redelivery of the first order must not touch the new lines.
	addToCart(t, repos, "u1", coffee, 4)
	placeOrder(t, repos, "u1", "o2")
	if err := h.Orders(t.Context(), changefeed.Batch{Items: [][]byte{first}}); err != nil {
		t.Fatal(err)
	}
	lines, c := cartLines(t, repos, "u1")
	if diff := cmp.Diff(map[string]int{"coffee": 4}, lines); diff != "" {
		t.Errorf("cart lines (-want +got):\n%s", diff)
	}
	if !c.IsPending("o2") {
		t.Errorf("marker = %+v, want o2's", c.Pending)
	}
}

func TestOrdersByStatusHoldsOneSummaryPerOrder(t *testing.T) {
	// Versions of the order as the feed may deliver them: v[0] placed,
	// v[1] shipped, v[2] delivered.
	tests := []struct {
		name    string
		final   string
		batches func(v [][]byte) [][][]byte
	}{
		{"in order", domain.StatusDelivered, func(v [][]byte) [][][]byte { return [][][]byte{{v[0]}, {v[1]}, {v[2]}} }},
		{"late shipped after delivered", domain.StatusDelivered, func(v [][]byte) [][][]byte { return [][][]byte{{v[2]}, {v[1]}, {v[0]}} }},
		{"duplicates and reordering in one batch", domain.StatusDelivered, func(v [][]byte) [][][]byte {
			return [][][]byte{{v[1], v[2], v[1], v[0], v[2], v[0]}}
		}},
		{"duplicated batches", domain.StatusDelivered, func(v [][]byte) [][][]byte {
			return [][][]byte{{v[0], v[1]}, {v[0], v[1]}, {v[2]}, {v[1]}, {v[2]}}
		}},
		{"cancelled", domain.StatusCancelled, func(v [][]byte) [][][]byte { return [][][]byte{{v[1]}, {v[0]}, {v[1]}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			st := newStore(t)
			repos := repo.New(st, 0)
			h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
			addToCart(t, repos, "u1", createProduct(t, repos, "p1", "coffee", 1000), 2)
			o := placeOrder(t, repos, "u1", "o1")
			versions := [][]byte{raw(t, st, "orders", "u1", "o1")}
			steps := []string{domain.StatusShipped, domain.StatusDelivered}
			if tt.final == domain.StatusCancelled {
				steps = []string{domain.StatusCancelled}
			}
			for _, s := range steps {
				if _, err := repos.Orders.SetStatus(ctx, "u1", "o1", "", s, now); err != nil {
					t.Fatal(err)
				}
				versions = append(versions, raw(t, st, "orders", "u1", "o1"))
			}
			for _, batch := range tt.batches(versions) {
				if err := h.OrdersToStatusView(ctx, decodeOrders(t, batch)); err != nil {
					t.Fatal(err)
				}
			}
			var holders []string
			for _, s := range []string{domain.StatusPlaced, domain.StatusShipped, domain.StatusDelivered, domain.StatusCancelled} {
				sum, err := repos.OrderSummaries.Get(ctx, repos.OrderSummaries.Key(s, o), "o1")
				if domain.IsCode(err, domain.ENOTFOUND) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				holders = append(holders, sum.StatusDay)
				if got, want := sum.SourceVersion, int64(len(versions)); got != want {
					t.Errorf("summary sourceVersion = %d, want %d", got, want)
				}
			}
			want := []string{repos.OrderSummaries.Key(tt.final, o)}
			if diff := cmp.Diff(want, holders); diff != "" {
				t.Errorf("partitions holding the order (-want +got):\n%s", diff)
			}
		})
	}
}

func decodeOrders(t *testing.T, items [][]byte) []domain.Order {
	t.Helper()
	out := make([]domain.Order, 0, len(items))
	for _, it := range items {
		o, err := repo.Decode[domain.Order](it)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}
