package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// renderedAt is what the product page serves from c for product id when
// the store answers that etag is still current.
func renderedAt(c *renderCache, id, etag string) ([]byte, bool) {
	e, body := c.latest(id)
	return body, e != "" && e == etag
}

func TestRenderCacheBounds(t *testing.T) {
	body := func(n int) []byte { return []byte(strings.Repeat("x", n)) }
	t.Run("Entries", func(t *testing.T) {
		c := newRenderCache(2, 1<<20)
		c.put("a", `"1"`, body(10))
		c.put("b", `"1"`, body(10))
		renderedAt(c, "a", `"1"`) // a is now the most recently used
		c.put("c", `"1"`, body(10))
		if _, ok := renderedAt(c, "b", `"1"`); ok {
			t.Error("b kept: the least recently used must go first")
		}
		for _, id := range []string{"a", "c"} {
			if _, ok := renderedAt(c, id, `"1"`); !ok {
				t.Errorf("%s evicted", id)
			}
		}
		if n, b := c.size(); n != 2 || b != 20 {
			t.Errorf("size %d entries %d bytes, want 2, 20", n, b)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		c := newRenderCache(100, 800)
		for i := range 10 {
			c.put(fmt.Sprint(i), `"1"`, body(100))
		}
		if n, b := c.size(); n != 8 || b != 800 {
			t.Errorf("size %d entries %d bytes, want 8, 800", n, b)
		}
		c.put("big", `"1"`, body(101)) // over an eighth of the bound
		if _, ok := renderedAt(c, "big", `"1"`); ok {
			t.Error("a body over an eighth of the bound was kept")
		}
	})
	t.Run("NewETagReplaces", func(t *testing.T) {
		c := newRenderCache(10, 1<<20)
		c.put("a", `"1"`, body(10))
		if _, ok := renderedAt(c, "a", `"2"`); ok {
			t.Error("a body served for another _etag")
		}
		c.put("a", `"2"`, body(30))
		if got, ok := renderedAt(c, "a", `"2"`); !ok || len(got) != 30 {
			t.Errorf("get = %d bytes, %v; want the new render", len(got), ok)
		}
		if _, ok := renderedAt(c, "a", `"1"`); ok {
			t.Error("the old render is still served")
		}
		if n, b := c.size(); n != 1 || b != 30 {
			t.Errorf("size %d entries %d bytes, want 1, 30", n, b)
		}
	})
	t.Run("NilAndNoETag", func(t *testing.T) {
		var nilCache *renderCache
		nilCache.put("a", `"1"`, body(1))
		if _, ok := renderedAt(nilCache, "a", `"1"`); ok {
			t.Error("a nil cache cached")
		}
		c := newRenderCache(10, 1<<20)
		c.put("a", "", body(1))
		if _, ok := renderedAt(c, "a", ""); ok {
			t.Error("a body without an _etag was cached")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		c := newRenderCache(16, 1<<20)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 500 {
					id, etag := fmt.Sprint(i%32), fmt.Sprint(g%3)
					if b, ok := renderedAt(c, id, etag); ok && string(b) != id+"/"+etag {
						t.Errorf("get(%s, %s) = %q", id, etag, b)
					}
					c.put(id, etag, []byte(id+"/"+etag))
				}
			})
		}
		wg.Wait()
		if n, _ := c.size(); n > 16 {
			t.Errorf("%d entries, bound 16", n)
		}
	})
}

// TestProductPageCache: the product page with its cache answers exactly
// what it answers without one (the same bytes and headers, the same one
// read and its charge), before and after the product changes, and a
// deleted product is gone from both.
func TestProductPageCache(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := migrations.Apply(ctx, st, io.Discard); err != nil {
		t.Fatal(err)
	}
	repos := repo.New(store.Metered(st), 0)
	when := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := repos.Products.Create(ctx, domain.Product{
		Meta: domain.Meta{ID: "p-1"}, Name: "Coffee & Tea <mugs>", Description: "Two mugs.",
		CategoryID: "kitchen", CategoryName: "Kitchen", PriceCents: 1299, Currency: "EUR",
		TopReviews: []domain.TopReview{{ID: "r1", UserID: "u1", UserName: "Ann", Rating: 5,
			Title: "Nice", Body: "Très bien", CreatedAt: when}},
		ReviewStats: domain.ReviewStats{Count: 1, Average: 5, Histogram: [5]int{0, 0, 0, 0, 1}},
		LastUpdated: when,
	}); err != nil {
		t.Fatal(err)
	}
	cache := newRenderCache(renderCacheEntries, renderCacheBytes)
	router := func(c *renderCache) http.Handler {
		r := chi.NewRouter()
		r.With(withCost(false)).Get("/v1/products/{productId}", handleProduct(repos.Products, c))
		return r
	}
	cached, uncached := router(cache), router(nil)
	get := func(h http.Handler) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/products/p-1", nil))
		return rec
	}
	same := func(step string) {
		t.Helper()
		want := get(uncached)
		for i, got := range []*httptest.ResponseRecorder{get(cached), get(cached)} {
			if got.Code != want.Code || got.Body.String() != want.Body.String() {
				t.Errorf("%s, cached #%d: %d %q\nwant %d %q", step, i+1, got.Code, got.Body, want.Code, want.Body)
			}
			for _, h := range []string{"Etag", "Content-Type", "Content-Length", "X-Store-Operations", "X-Request-Charge"} {
				if g, w := got.Header().Get(h), want.Header().Get(h); g != w {
					t.Errorf("%s, cached #%d: %s = %q, want %q", step, i+1, h, g, w)
				}
			}
			if g := got.Header().Get("Server-Timing"); !strings.HasPrefix(g, "store;dur=") || !strings.HasSuffix(g, `;desc="1 op, `+want.Header().Get("X-Request-Charge")+` RU"`) {
				t.Errorf("%s, cached #%d: Server-Timing = %q, want the one read's", step, i+1, g)
			}
		}
		if want.Code == http.StatusOK && want.Header().Get("X-Store-Operations") != "1" {
			t.Errorf("%s: X-Store-Operations = %q, want 1", step, want.Header().Get("X-Store-Operations"))
		}
	}

	same("first read")
	if n, _ := cache.size(); n != 1 {
		t.Fatalf("%d entries cached, want 1", n)
	}
	before := get(cached)
	if _, err := repos.Products.Update(ctx, "p-1", "", func(p *domain.Product) error {
		p.PriceCents = 999
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after := get(cached)
	if after.Header().Get("Etag") == before.Header().Get("Etag") || !strings.Contains(after.Body.String(), `"priceCents":999`) {
		t.Errorf("after the update: ETag %s (was %s), body %s; want the new render",
			after.Header().Get("Etag"), before.Header().Get("Etag"), after.Body)
	}
	same("after an update")
	if _, err := repos.Products.Update(ctx, "p-1", "", func(p *domain.Product) error {
		p.Deleted = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rec := get(cached); rec.Code != http.StatusNotFound {
		t.Errorf("deleted product: %d, want 404", rec.Code)
	}
	same("after the deletion")
}

// recordingStore records the point reads, each with the ETag it named
// as If-None-Match ("" for a plain read).
type recordingStore struct {
	store.Store
	mu    sync.Mutex
	reads []recordedRead
}

type recordedRead struct {
	ifNoneMatch string
	store.ItemResponse
}

func (s *recordingStore) Container(name string) store.Container {
	return recordingContainer{s.Store.Container(name), s}
}

type recordingContainer struct {
	store.Container
	s *recordingStore
}

func (c recordingContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	r, err := c.Container.Read(ctx, pk, id)
	c.s.record("", r)
	return r, err
}

func (c recordingContainer) ReadIfNoneMatch(ctx context.Context, pk, id, etag string) (store.ItemResponse, error) {
	r, err := c.Container.ReadIfNoneMatch(ctx, pk, id, etag)
	c.s.record(etag, r)
	return r, err
}

func (s *recordingStore) record(etag string, r store.ItemResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, recordedRead{etag, r})
}

// TestProductPageReadsIfNoneMatch: once a product is rendered, the page's
// one read names the render's _etag, and the store sends no document
// while it is current.
func TestProductPageReadsIfNoneMatch(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := migrations.Apply(ctx, st, io.Discard); err != nil {
		t.Fatal(err)
	}
	rec := &recordingStore{Store: st}
	repos := repo.New(store.Metered(rec), 0)
	if _, err := repos.Products.Create(ctx, domain.Product{Meta: domain.Meta{ID: "p-1"}, Name: "Mug",
		CategoryID: "kitchen", CategoryName: "Kitchen", PriceCents: 1299, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.With(withCost(false)).Get("/v1/products/{productId}", handleProduct(repos.Products, newRenderCache(renderCacheEntries, renderCacheBytes)))
	var bodies []string
	for range 3 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/products/p-1", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("product page: %d %s", w.Code, w.Body)
		}
		bodies = append(bodies, w.Body.String())
	}
	if len(rec.reads) != 3 {
		t.Fatalf("%d reads, want one per page (3)", len(rec.reads))
	}
	etag := rec.reads[0].ETag
	for i, rd := range rec.reads {
		// The first page has nothing rendered; the next ones name its
		// render's _etag and get no document back.
		want := i > 0
		if sent := rd.ifNoneMatch != ""; sent != want || (want && rd.ifNoneMatch != etag) {
			t.Errorf("read %d: If-None-Match %q; want %q", i+1, rd.ifNoneMatch, map[bool]string{true: etag}[want])
		}
		if rd.NotModified != want || (rd.Item == nil) != want {
			t.Errorf("read %d: not modified %v with %d bytes; want not modified %v", i+1, rd.NotModified, len(rd.Item), want)
		}
	}
	if bodies[1] != bodies[0] || bodies[2] != bodies[0] {
		t.Errorf("the pages differ:\n%s\n%s\n%s", bodies[0], bodies[1], bodies[2])
	}
}
