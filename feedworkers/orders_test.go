package feedworkers_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/domain"
	"shop/feedworkers"
	"shop/store"
)

// placeOrder commits a checkout of the user's cart the way the API does,
// but stops before resetting the cart: a checkout that crashed there.
func placeOrder(t *testing.T, repos *store.Repos, userID, orderID string) domain.Order {
	t.Helper()
	cart, err := repos.Carts.Get(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	addr := domain.Address{Name: "A", Line1: "1 Main St", City: "Town", PostalCode: "1000", Country: "BE"}
	o, err := domain.NewOrder(orderID, cart, domain.Customer{Name: "A", Email: "a@example.com"}, addr, "key-"+orderID, now)
	if err != nil {
		t.Fatal(err)
	}
	o, err = repos.Orders.Place(t.Context(), o, domain.Idempotency{Key: "key-" + orderID, RequestHash: "h", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOrdersHandlerResetsOnlyUntouchedCarts(t *testing.T) {
	tests := []struct {
		name string
		// after runs between the checkout and the handler.
		after     func(t *testing.T, repos *store.Repos, p domain.Product)
		wantItems int
	}{
		{"checkout crashed before resetting the cart", func(*testing.T, *store.Repos, domain.Product) {}, 0},
		{"the owner changed the cart since", func(t *testing.T, repos *store.Repos, p domain.Product) {
			addToCart(t, repos, "u1", p, 5)
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			repos := store.NewRepos(st)
			h := feedworkers.NewHandlers(st, feedworkers.HandlersConfig{})
			p := createProduct(t, repos, "p1", "coffee", 1000)
			addToCart(t, repos, "u1", p, 2)
			placeOrder(t, repos, "u1", "o1")
			tt.after(t, repos, p)
			item := raw(t, st, "orders", "u1", "o1")
			for range 2 {
				if err := h.Orders(t.Context(), [][]byte{item}); err != nil {
					t.Fatal(err)
				}
				cart, err := repos.Carts.Get(t.Context(), "u1")
				if err != nil {
					t.Fatal(err)
				}
				if got := len(cart.Items); got != tt.wantItems {
					t.Errorf("cart lines = %d, want %d", got, tt.wantItems)
				}
			}
		})
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
			repos := store.NewRepos(st)
			h := feedworkers.NewHandlers(st, feedworkers.HandlersConfig{})
			addToCart(t, repos, "u1", createProduct(t, repos, "p1", "coffee", 1000), 2)
			o := placeOrder(t, repos, "u1", "o1")
			versions := [][]byte{raw(t, st, "orders", "u1", "o1")}
			steps := []string{domain.StatusShipped, domain.StatusDelivered}
			if tt.final == domain.StatusCancelled {
				steps = []string{domain.StatusCancelled}
			}
			for _, s := range steps {
				if _, err := repos.Orders.SetStatus(ctx, "u1", "o1", "", s); err != nil {
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
				sum, err := repos.OrderSummaries.Get(ctx, domain.StatusDay(s, o.CreatedAt), "o1")
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
			want := []string{domain.StatusDay(tt.final, o.CreatedAt)}
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
		o, err := store.Decode[domain.Order](it)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}
