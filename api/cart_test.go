package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

type cartBody struct {
	UserID string
	Items  []struct {
		ProductID      string
		Name           string
		UnitPriceCents int64
		Quantity       int
		LineTotalCents int64
		Available      bool
	}
	ItemCount     int
	SubtotalCents int64
}

func TestCart(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)

	empty := s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200)
	if got := decodeBody[cartBody](t, empty); got.UserID != "alice" || len(got.Items) != 0 {
		t.Fatalf("new user's cart = %+v, want empty", got)
	}

	put := s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 3}}).want(200)
	etag := put.Header().Get("ETag")
	got := decodeBody[cartBody](t, put)
	if got.ItemCount != 3 || got.SubtotalCents != 3*3999 || got.Items[0].Name != "Go in Practice" || got.Items[0].LineTotalCents != 3*3999 {
		t.Errorf("cart = %+v, want 3 x book-1 at 39.99", got)
	}
	if etag == "" {
		t.Fatal("PUT answered no ETag")
	}

	t.Run("IfMatchCurrentSucceeds", func(t *testing.T) {
		r := s.do(req{method: "PUT", path: "/v1/cart/items/game-1", token: alice, body: map[string]int{"quantity": 1},
			header: map[string]string{"If-Match": etag}}).want(200)
		etag = r.Header().Get("ETag")
	})
	t.Run("IfMatchStaleIs412", func(t *testing.T) {
		s.do(req{method: "PUT", path: "/v1/cart/items/book-2", token: alice, body: map[string]int{"quantity": 1},
			header: map[string]string{"If-Match": `"stale"`}}).want(412)
	})
	t.Run("GetAnswersETag", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200)
		if got := r.Header().Get("ETag"); got != etag {
			t.Errorf("ETag = %s, want %s", got, etag)
		}
	})
	t.Run("UnknownProductIs404", func(t *testing.T) {
		s.do(req{method: "PUT", path: "/v1/cart/items/nope", token: alice, body: map[string]int{"quantity": 1}}).want(404)
	})
	t.Run("QuantityBounds", func(t *testing.T) {
		for _, q := range []int{0, 100, -1} {
			r := s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": q}}).want(400)
			if p := decodeBody[problemBody](t, r); len(p.Errors) != 1 || p.Errors[0].Pointer != "/quantity" {
				t.Errorf("quantity %d: errors = %+v, want /quantity", q, p.Errors)
			}
		}
	})
	t.Run("DeleteLine", func(t *testing.T) {
		r := s.do(req{method: "DELETE", path: "/v1/cart/items/game-1", token: alice}).want(200)
		got := decodeBody[cartBody](t, r)
		if len(got.Items) != 1 || got.Items[0].ProductID != "book-1" {
			t.Errorf("cart = %+v, want only book-1", got)
		}
	})
	t.Run("DeleteMissingLineAnswersTheCart", func(t *testing.T) {
		r := s.do(req{method: "DELETE", path: "/v1/cart/items/game-1", token: alice}).want(200)
		if got := decodeBody[cartBody](t, r); len(got.Items) != 1 {
			t.Errorf("cart = %+v, want book-1 still there", got)
		}
	})
}

// TestCartConcurrentPuts: 50 writers on one cart, each a different
// product; the server's own If-Match retries lose none of them.
func TestCartConcurrentPuts(t *testing.T) {
	s := newShop(t)
	s.fixture()
	const n = 50
	for i := range n {
		s.adminCreateProduct(fmt.Sprintf("bulk-%02d", i), int64(100+i))
	}
	alice := token(t, "alice", false)
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			r := s.do(req{method: "PUT", path: fmt.Sprintf("/v1/cart/items/bulk-%02d", i), token: alice, body: map[string]int{"quantity": 1}})
			codes[i] = r.Code
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("PUT bulk-%02d = %d", i, c)
		}
	}
	got := decodeBody[cartBody](t, s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(200))
	seen := map[string]bool{}
	for _, l := range got.Items {
		seen[l.ProductID] = true
	}
	want := map[string]bool{}
	for i := range n {
		want[fmt.Sprintf("bulk-%02d", i)] = true
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("cart lines (-want +got):\n%s", diff)
	}
	if got.ItemCount != n {
		t.Errorf("itemCount = %d, want %d", got.ItemCount, n)
	}
}

// adminCreateProduct creates a product in the books category through the
// admin route.
func (s *shop) adminCreateProduct(id string, price int64) {
	s.t.Helper()
	s.do(req{method: "POST", path: "/v1/products", token: token(s.t, "boss", true), body: map[string]any{
		"productId": id, "name": "Product " + id, "priceCents": price, "categoryId": "books",
	}}).want(http.StatusCreated)
}

// hookedStore runs hook once, right after the first read of a products
// item that it is armed for: the moment a cart PUT has read the product
// and not yet written the cart.
type hookedStore struct {
	store.Store
	armed atomic.Pointer[func()]
}

func (s *hookedStore) Container(name string) store.Container {
	c := s.Store.Container(name)
	if name != store.ProductsContainer {
		return c
	}
	return hookedContainer{c, s}
}

type hookedContainer struct {
	store.Container
	s *hookedStore
}

func (c hookedContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	return c.ReadIfNoneMatch(ctx, pk, id, "")
}

// ReadIfNoneMatch is hooked too: Products.Get reads through it.
func (c hookedContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	r, err := c.Container.ReadIfNoneMatch(ctx, pk, id, etag)
	if hook := c.s.armed.Swap(nil); hook != nil {
		(*hook)()
	}
	return r, err
}

// TestCartPutRacingAPriceChangeKeepsTheNewPrice: an admin changes the
// price after a cart PUT read the product and before it wrote the cart,
// and the price fan-out runs to the end in between (it finds no cart
// holding the product yet). The line must still end at the new price: no
// write pins an old copy.
func TestCartPutRacingAPriceChangeKeepsTheNewPrice(t *testing.T) {
	hooked := &hookedStore{}
	s := newShop(t, func(o *options) {
		o.wrap = func(st store.Store) store.Store { hooked.Store = st; return hooked }
	})
	s.fixture()
	h := feedworkers.NewHandlers(s.store, writes.New(repo.New(s.store, 0), nil, nil), feedworkers.HandlersConfig{})
	price := int64(2499)
	change := func() {
		// The window this test is about: the PUT has read the product and
		// not yet written the cart.
		if c, err := s.repos.Carts.Get(t.Context(), "alice"); err != nil || len(c.Items) != 0 {
			t.Errorf("the hook ran after the PUT wrote the cart (%+v, %v), not between its read and its write", c.Items, err)
		}
		p, err := s.repos.Products.Update(t.Context(), "book-1", "", func(p *domain.Product) error {
			p.Apply(domain.ProductChange{PriceCents: &price}, time.Now())
			return nil
		})
		if err != nil {
			t.Error(err)
			return
		}
		item, err := s.store.Container(store.ProductsContainer).Read(t.Context(), p.ID, p.ID)
		if err != nil {
			t.Error(err)
			return
		}
		if err := h.Products(t.Context(), changefeed.Batch{Items: [][]byte{item.Item}}); err != nil {
			t.Error(err)
		}
	}
	hooked.armed.Store(&change)
	alice := token(t, "alice", false)
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": 1}}).want(200)
	if hooked.armed.Load() != nil {
		t.Fatal("the PUT never read the product")
	}
	c, err := s.repos.Carts.Get(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 1 || c.Items[0].UnitPriceCents != 2499 || c.Items[0].PriceVersion != 2 {
		t.Errorf("cart lines = %+v, want book-1 at 2499 cents, priceVersion 2", c.Items)
	}
}
