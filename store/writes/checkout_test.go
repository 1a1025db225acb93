package writes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"shop/domain"
	"shop/store"
	"shop/store/writes"
)

// hooked is a store that lets a test step in before a cart is replaced
// (onCartReplace, with the cart about to be written).
type hooked struct {
	store.Store
	onCartReplace func(c domain.Cart)
	// failCartReplace, when it returns an error, fails the replace with
	// it instead of writing.
	failCartReplace func(c domain.Cart) error
}

func (s *hooked) Container(name string) store.Container {
	return hookedContainer{s.Store.Container(name), s, name}
}

type hookedContainer struct {
	store.Container
	s    *hooked
	name string
}

func (c hookedContainer) Replace(ctx context.Context, pk, id string, item []byte, opts *store.WriteOptions) (store.ItemResponse, error) {
	if c.name == store.CartsContainer && c.s.onCartReplace != nil {
		var cart domain.Cart
		if err := json.Unmarshal(item, &cart); err != nil {
			return store.ItemResponse{}, err
		}
		c.s.onCartReplace(cart)
	}
	if c.name == store.CartsContainer && c.s.failCartReplace != nil {
		var cart domain.Cart
		if err := json.Unmarshal(item, &cart); err != nil {
			return store.ItemResponse{}, err
		}
		if err := c.s.failCartReplace(cart); err != nil {
			return store.ItemResponse{}, err
		}
	}
	return c.Container.Replace(ctx, pk, id, item, opts)
}

// waitLong is how long a hook waits for what the test expects to happen
// meanwhile, before it gives up and lets the call go on (so that old
// code, which does one thing after the other, fails instead of hanging).
const waitLong = 5 * time.Second

// stockedShop is a store with product p1 (5 units in stock) and u1's cart
// holding 2 of it, the write protocols over st wrapped by hooked.
func stockedShop(t *testing.T) (*writes.Writes, *store.Repos, *hooked) {
	t.Helper()
	raw := openStore(t)
	repos := store.NewRepos(raw)
	p := domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
	if _, err := writes.New(repos, nil).CreateProduct(t.Context(), p, 5); err != nil {
		t.Fatal(err)
	}
	h := &hooked{Store: raw}
	ws := writes.New(store.NewRepos(h), nil)
	if _, err := ws.SetCartLine(t.Context(), "u1", "p1", 2, ""); err != nil {
		t.Fatal(err)
	}
	return ws, repos, h
}

// TestCheckoutAnswersBeforeItSettlesTheCart: once the order batch has
// committed the order stands, so the checkout answers and settles the
// cart after. Nobody sees the paid lines meanwhile: the cart screen's
// read finds the marker and settles first.
func TestCheckoutAnswersBeforeItSettlesTheCart(t *testing.T) {
	ws, repos, h := stockedShop(t)
	answered := make(chan struct{})
	var settle sync.Once
	h.onCartReplace = func(c domain.Cart) {
		if c.Pending != nil {
			return
		}
		// The first settle waits for the answer.
		settle.Do(func() {
			select {
			case <-answered:
			case <-time.After(waitLong):
			}
		})
	}
	done := make(chan error, 1)
	var o domain.Order
	go func() {
		var err error
		o, err = ws.Checkout(t.Context(), req)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(waitLong / 2):
		t.Fatal("the checkout did not answer before its cart was settled")
	}
	close(answered)
	if err != nil {
		t.Fatal(err)
	}
	// What the user sees next, settled or not yet.
	c, err := ws.Cart(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 0 || c.Pending != nil {
		t.Errorf("cart after the answer = %d lines, marker %+v; want the paid line gone", len(c.Items), c.Pending)
	}
	ws.Wait()
	c, err = repos.Carts.Get(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 0 || c.Pending != nil {
		t.Errorf("stored cart = %d lines, marker %+v; want settled by order %s", len(c.Items), c.Pending, o.ID)
	}
}

// TestConcurrentCheckoutsOfOneCartRefuseOnlyWhatIsShort: checkouts of
// one cart at once (tabs, each with its own key) behave as if one ran
// after the other, refusals included. The cart holds 4 of p1 (5 in
// stock) and 24 of p2 (12 in stock): every checkout is refused for p2
// alone. A checkout that took its units before its marker was in (at the
// same time as it) held p1's 4 units, for a moment, from the others,
// which then named p1 too: TestShopAgainstModel found it.
func TestConcurrentCheckoutsOfOneCartRefuseOnlyWhatIsShort(t *testing.T) {
	ws, repos, _ := stockedShop(t)
	p2 := domain.Product{Meta: domain.Meta{ID: "p2"}, Name: "Cup", CategoryID: "c", PriceCents: 900, Currency: "USD", PriceVersion: 1, Version: 1}
	if _, err := ws.CreateProduct(t.Context(), p2, 12); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetCartLine(t.Context(), "u1", "p1", 4, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetCartLine(t.Context(), "u1", "p2", 24, ""); err != nil {
		t.Fatal(err)
	}
	want := []domain.Shortage{{ProductID: "p2", Requested: 24, Available: 12}}
	for round := range 20 {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				r := req
				r.Key = fmt.Sprintf("round-%d-tab-%d", round, i)
				_, err := ws.Checkout(t.Context(), r)
				if got := shortages(err); !slices.Equal(got, want) {
					t.Errorf("round %d, tab %d: checkout = %v, want refused for %+v alone", round, i, err, want)
				}
			})
		}
		wg.Wait()
	}
	if s, err := repos.Inventory.Stock(t.Context(), "p1"); err != nil || s.Available != 5 {
		t.Errorf("p1 stock = %d (%v), want 5: nothing taken", s.Available, err)
	}
}

// shortages is what an out-of-stock refusal names, nil for any other
// answer.
func shortages(err error) []domain.Shortage {
	e, ok := errors.AsType[*domain.Error](err)
	if !ok {
		return nil
	}
	return e.Shortages
}

// TestSettleAfterAnswerRetriesFromTheStoredCart: the settle after the
// answer starts from the cart the checkout marked, and a store that is
// unavailable for its write makes it try again. The try again reads the
// cart anew: the first try's settle changed its copy of the lines (the
// paid line deleted in place), and writing that copy would leave a line
// of no product in the cart.
func TestSettleAfterAnswerRetriesFromTheStoredCart(t *testing.T) {
	ws, repos, h := stockedShop(t)
	var failed sync.Once
	h.failCartReplace = func(c domain.Cart) error {
		var err error
		if c.Pending == nil {
			failed.Do(func() { err = domain.Errorf(domain.EUNAVAILABLE, "injected: the settle's first write") })
		}
		return err
	}
	if _, err := ws.Checkout(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	ws.Wait()
	c, err := repos.Carts.Get(t.Context(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Pending != nil || len(c.Items) != 0 || c.ItemCount != 0 {
		t.Errorf("cart after the settle: pending %v, lines %+v, item count %d; want settled and empty", c.Pending, c.Items, c.ItemCount)
	}
}
