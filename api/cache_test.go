package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestCachedPagesUnderThrottle: on a store whose clock stands still, so no
// spent budget ever refills, the home page and a category page read at
// full speed turn into 503s without the cache, and stay 200 with it (one
// read each, then hits at 0 RU); one user's cart writes are still 503
// with Retry-After: writes cannot be cached away.
func TestCachedPagesUnderThrottle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache *readcache.Cache
		want  func(status map[int]int) bool
		says  string
	}{
		{"NoCache", nil, func(s map[int]int) bool { return s[503] > 0 }, "some 503s: the budget is spent"},
		{"Cache", readcache.New(readcache.Config{MaxAge: time.Hour}), func(s map[int]int) bool { return s[200] == len(screens)*100 }, "200 every time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frozen := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
			s := newShop(t, func(o *options) {
				o.storeNow = func() time.Time { return frozen }
				o.cache = tc.cache
			})
			s.fixture()
			// 40 RU/s per container: 10 per physical partition.
			s.store.(*embedded.Store).SetThroughput(40)
			status := map[int]int{}
			for range 100 {
				for _, path := range screens {
					r := s.do(req{method: "GET", path: path})
					status[r.Code]++
				}
			}
			if !tc.want(status) {
				t.Errorf("%d reads of %v answered %v, want %s", 100*len(screens), screens, status, tc.says)
			}

			writes := map[int]int{}
			alice := token(t, "alice", false)
			for i := range 30 {
				r := s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": i%5 + 1}})
				writes[r.Code]++
				if r.Code == 503 && r.Header().Get("Retry-After") == "" {
					t.Error("a throttled cart write without Retry-After")
				}
			}
			if writes[503] == 0 || writes[200]+writes[503] != 30 {
				t.Errorf("30 cart writes answered %v, want 503s and nothing but 200 besides", writes)
			}
		})
	}
}

// screens are the hot read screens the cache serves.
var screens = []string{"/v1/categories", "/v1/categories/books/products", "/v1/products/book-1"}

// TestCacheFollowsChanges: two instances, each with its own cache and its
// own follower of the change feed, serve a change of the categories
// document and of a product once their followers have read it, well
// within the max age, though each had the old version cached.
func TestCacheFollowsChanges(t *testing.T) {
	a := newShop(t, func(o *options) {
		o.cache = readcache.New(readcache.Config{MaxAge: time.Hour, PollEvery: 20 * time.Millisecond})
	})
	a.fixture()
	// Instance b serves the same store with a cache of its own.
	cacheB := readcache.New(readcache.Config{MaxAge: time.Hour, PollEvery: 20 * time.Millisecond})
	b := &shop{t: t, store: a.store, repos: a.repos,
		handler: api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(a.store), 0), nil, nil), Store: a.store, Secret: testSecret, Cache: cacheB})}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, c := range []*readcache.Cache{a.cache, cacheB} {
		if err := c.Follow(ctx, a.store, changefeed.Follow); err != nil {
			t.Fatal(err)
		}
	}

	for _, s := range []*shop{a, b} {
		for _, path := range screens {
			s.do(req{method: "GET", path: path}).want(200)
			if r := s.do(req{method: "GET", path: path}).want(200); r.ops() != "0" {
				t.Fatalf("%s: second visit %s ops, want a hit", path, r.ops())
			}
		}
	}

	admin := token(t, "boss", true)
	a.do(req{method: "PUT", path: "/v1/categories/books", token: admin, body: map[string]string{"name": "Livres"}}).want(200)
	if _, err := a.repos.Products.Update(context.Background(), "book-1", "", func(p *domain.Product) error {
		p.PriceCents = 1234
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*shop{"a": a, "b": b} {
		seen(t, s, "/v1/categories", `"name":"Livres"`)
		seen(t, s, "/v1/products/book-1", `"priceCents":1234`)
		// The categories document changed: every category page is read again.
		if r := s.do(req{method: "GET", path: "/v1/categories/books/products"}).want(200); r.ops() != "1" {
			t.Errorf("instance %s: category page after the index changed: %s ops, want a new read", name, r.ops())
		}
	}
}

// seen waits until path's body holds want, as served from the cache.
func seen(t *testing.T, s *shop, path, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := s.do(req{method: "GET", path: path}).want(200)
		if strings.Contains(r.Body.String(), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %s after 5 s, want %s", path, r.Body, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCacheHeadersOverHTTP: a hit says its age and bound, and its ETag is
// the miss's, through a real server.
func TestCacheHeadersOverHTTP(t *testing.T) {
	s := newShop(t, func(o *options) { o.cache = readcache.New(readcache.Config{MaxAge: 7 * time.Second}) })
	s.fixture()
	srv := httptest.NewServer(s.handler)
	t.Cleanup(srv.Close)
	get := func() *http.Response {
		res, err := http.Get(srv.URL + "/v1/products/book-1")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	miss, hit := get(), get()
	if miss.Header.Get("ETag") == "" || hit.Header.Get("ETag") != miss.Header.Get("ETag") {
		t.Errorf("ETag: miss %q, hit %q; want the same, set", miss.Header.Get("ETag"), hit.Header.Get("ETag"))
	}
	timing := hit.Header.Get("Server-Timing")
	var age, bound float64
	if _, err := fmt.Sscanf(timing, `cache;desc="hit, age %f s, max %f s"`, &age, &bound); err != nil || bound != 7 || age < 0 || age > 7 {
		t.Errorf("hit: Server-Timing = %q, want its age and max 7.00 s", timing)
	}
	if n, _ := strconv.Atoi(hit.Header.Get("Content-Length")); n == 0 {
		t.Errorf("hit: Content-Length %q", hit.Header.Get("Content-Length"))
	}
}

// TestCacheKeyIsThePage: the spellings of one page's parameters (a limit
// with leading zeros or a plus sign, the default sort named or left out,
// parameters in another order) are one entry, so a client cannot make
// every request a miss, each a query on the category's partition, by
// spelling the same page another way.
func TestCacheKeyIsThePage(t *testing.T) {
	s := newShop(t, func(o *options) { o.cache = readcache.New(readcache.Config{MaxAge: time.Hour}) })
	s.fixture()
	s.do(req{method: "GET", path: "/v1/categories/books/products?limit=10"}).want(200)
	for _, path := range []string{
		"/v1/categories/books/products?limit=010",
		"/v1/categories/books/products?limit=0000010",
		"/v1/categories/books/products?limit=%2B10",
		"/v1/categories/books/products?sort=name&limit=10",
		"/v1/categories/books/products?limit=10&continuation=",
	} {
		r := s.do(req{method: "GET", path: path}).want(200)
		if got := r.Header().Get("X-Store-Operations"); got != "0" {
			t.Errorf("GET %s after ?limit=10: X-Store-Operations %s, Server-Timing %q; want 0, a hit",
				path, got, r.Header().Get("Server-Timing"))
		}
	}
	s.do(req{method: "GET", path: "/v1/categories/books/products"}).want(200)
	if r := s.do(req{method: "GET", path: "/v1/categories/books/products?limit=" + strconv.Itoa(store.DefaultPageSize)}).want(200); r.Header().Get("X-Store-Operations") != "0" {
		t.Errorf("the default limit spelled out: X-Store-Operations %s, want 0, the entry of no limit", r.Header().Get("X-Store-Operations"))
	}
}
