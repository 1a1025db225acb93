package writes_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/writes"
)

// cartBeforeCommits holds every commit of a reservation (its patch to
// committed) until the cart has been settled (a replace of the cart
// without a checkout's marker), or the call's context ends.
type cartBeforeCommits struct {
	store.Store
	once    sync.Once
	settled chan struct{}
}

func (s *cartBeforeCommits) Container(name string) store.Container {
	return cartGate{Container: s.Store.Container(name), name: name, s: s}
}

type cartGate struct {
	store.Container
	name string
	s    *cartBeforeCommits
}

func (c cartGate) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	r, err := c.Container.Replace(ctx, pk, id, item, opts)
	if err == nil && c.name == store.CartsContainer && !bytes.Contains(item, []byte(`"pendingCheckout"`)) {
		c.s.once.Do(func() { close(c.s.settled) })
	}
	return r, err
}

func (c cartGate) Patch(ctx context.Context, pk, id string, ops []store.PatchOp, opts *store.PatchOptions) (store.ItemResponse, error) {
	if c.name == store.InventoryContainer && len(ops) == 1 && ops[0].Path == "/state" && ops[0].Value == domain.ReservationCommitted {
		select {
		case <-c.s.settled:
		case <-ctx.Done():
			return store.ItemResponse{}, ctx.Err()
		}
	}
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

// TestAPlacedOrdersEffectsGoAtOnce: the effects of a placed order, its
// reservations committed and its cart settled, touch different
// documents, and none waits for another (the units were taken at the
// reserve; a commit neither takes nor returns any), so the checkout
// makes them at once and the store can commit them together. Held until
// the cart is settled, the commits do not hold the cart up.
func TestAPlacedOrdersEffectsGoAtOnce(t *testing.T) {
	s := newShop(t, map[string]int64{"p1": 5, "p2": 5})
	s.fill("u1", 1, "p1", "p2")
	gate := &cartBeforeCommits{Store: s.st, settled: make(chan struct{})}
	w := s.writes(gate)
	// Long enough for any machine; the commits wait for the cart at most
	// this long.
	writes.SetBound(w, time.Minute)
	o, err := w.Checkout(t.Context(), checkout("u1", "k", "pm_card_visa"))
	if err != nil || o.Status != domain.StatusPlaced {
		t.Fatalf("checkout: %v %s", err, o.Status)
	}
	select {
	case <-gate.settled:
	default:
		t.Fatal("the cart was not settled by the checkout")
	}
	held, _, err := s.repos.Inventory.Held(t.Context(), 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 0 {
		t.Errorf("reservations still held after the checkout: %+v, want every one committed", held)
	}
	s.settle(false)
	s.check()
}
