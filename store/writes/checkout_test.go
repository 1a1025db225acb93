package writes_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// waitLong is how long a hook waits for what the test expects to happen
// meanwhile, before it gives up and lets the call go on (so that old
// code, which does one thing after the other, fails instead of hanging).
const waitLong = 5 * time.Second

// stockedShop is a store with product p1 (5 units in stock) and u1's cart
// holding 2 of it, and the write protocols over it.
func stockedShop(t *testing.T) (*writes.Writes, *repo.Set) {
	t.Helper()
	raw := openStore(t)
	repos := repo.New(raw, 0)
	ws := writes.New(repos, paymentstest.Embedded(t), nil)
	p := domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Tea", CategoryID: "c", PriceCents: 500, Currency: "USD", PriceVersion: 1, Version: 1}
	if _, err := ws.CreateProduct(t.Context(), p, 5, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetCartLine(t.Context(), "u1", "p1", "", 2, ""); err != nil {
		t.Fatal(err)
	}
	return ws, repos
}

// TestConcurrentCheckoutsOfOneCartRefuseOnlyWhatIsShort: checkouts of
// one cart at once (tabs, each with its own key) behave as if one ran
// after the other, refusals included. The cart holds 4 of p1 (5 in
// stock) and 24 of p2 (12 in stock): every checkout is refused for p2
// alone. A checkout that took its units before its marker was in (at the
// same time as it) held p1's 4 units, for a moment, from the others,
// which then named p1 too: TestShopAgainstModel found it.
func TestConcurrentCheckoutsOfOneCartRefuseOnlyWhatIsShort(t *testing.T) {
	ws, repos := stockedShop(t)
	p2 := domain.Product{Meta: domain.Meta{ID: "p2"}, Name: "Cup", CategoryID: "c", PriceCents: 900, Currency: "USD", PriceVersion: 1, Version: 1}
	if _, err := ws.CreateProduct(t.Context(), p2, 12, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetCartLine(t.Context(), "u1", "p1", "", 4, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetCartLine(t.Context(), "u1", "p2", "", 24, ""); err != nil {
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
	if s, err := repos.Inventory.Stock(t.Context(), "p1", ""); err != nil || s.Available != 5 {
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
