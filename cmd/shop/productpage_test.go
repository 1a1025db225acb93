package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// pageRead is one product page as a client saw it.
type pageRead struct {
	code        int
	etag, ctype string
	body        []byte
}

func (s *liveShop) readPage(id string) (pageRead, error) {
	resp, err := s.client.Get(s.URL + "/v1/products/" + id)
	if err != nil {
		return pageRead{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return pageRead{resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Content-Type"), b}, err
}

// pageBodies checks that one ETag is always one body, whichever client
// read it and whether the page came from its render cache or not.
type pageBodies struct {
	t      *testing.T
	mu     sync.Mutex
	byETag map[string]string
}

func (b *pageBodies) see(what string, etag string, body []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if etag == "" {
		b.t.Errorf("%s: 200 without an ETag: %s", what, body)
		return
	}
	if prev, ok := b.byETag[etag]; ok && prev != string(body) {
		b.t.Errorf("%s: ETag %s with two bodies:\n%s\n%s", what, etag, prev, body)
		return
	}
	b.byETag[etag] = string(body)
}

// TestProductPageUnderAdminWrites: clients read one product page, many at
// once, while an admin raises its price step by step, customers review it
// (the reviews feed rewrites its embedded stats, so its _etag) and at last
// the admin deletes it. The page keeps a render per _etag (the product
// page's cache) and reads with If-None-Match; none of that may show:
//   - a read sent after a price change returned shows that price or a
//     later one, and no client sees the price go back;
//   - an ETag is always the same body, the very body the admin's PATCH
//     answered with that ETag;
//   - once the delete returned, every read is a 404 problem.
//
// Then products are read for the first time by many clients at once.
func TestProductPageUnderAdminWrites(t *testing.T) {
	const (
		readers   = 8
		reviewers = 6
		changes   = 40
		start     = 500
	)
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
	id := s.catalog(1)[0]
	admin := liveToken(t, "boss", true)
	bodies := &pageBodies{t: t, byETag: map[string]string{}}

	// written is the price of the last PATCH that returned; deleting is
	// set as the DELETE is sent, deleted once it returned.
	var written atomic.Int64
	written.Store(start)
	var deleting, deleted atomic.Bool
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	// Before the shop stops, also when the test fails early.
	finish := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	t.Cleanup(finish)
	for r := range readers {
		wg.Go(func() {
			last := int64(start)
			for {
				select {
				case <-stop:
					return
				default:
				}
				floor, gone := written.Load(), deleted.Load()
				p, err := s.readPage(id)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				reads.Add(1)
				switch {
				case p.code == http.StatusNotFound && deleting.Load():
					if p.ctype != "application/problem+json" {
						t.Errorf("reader %d: 404 of the deleted product as %q: %s", r, p.ctype, p.body)
					}
					continue
				case gone:
					t.Errorf("reader %d: %d %s after the delete returned, want 404", r, p.code, p.body)
					return
				case p.code != http.StatusOK:
					t.Errorf("reader %d: %d %s", r, p.code, p.body)
					return
				}
				bodies.see(fmt.Sprintf("reader %d", r), p.etag, p.body)
				var v liveProduct
				if err := json.Unmarshal(p.body, &v); err != nil {
					t.Errorf("reader %d: %s: %v", r, p.body, err)
					return
				}
				if v.PriceCents < floor || v.PriceCents < last {
					t.Errorf("reader %d: price %d (ETag %s) after %d was written and %d was read: an older version",
						r, v.PriceCents, p.etag, floor, last)
				}
				last = v.PriceCents
			}
		})
	}
	for u := range reviewers {
		wg.Go(func() {
			tok := liveToken(t, fmt.Sprintf("fan-%d", u), false)
			code, b := s.do("POST", "/v1/products/"+id+"/reviews", tok,
				map[string]any{"rating": 1 + u%5, "title": fmt.Sprintf("Review %d", u)}, nil)
			if code != http.StatusCreated {
				t.Errorf("review %d: %d %s", u, code, b)
			}
		})
	}

	patched := map[string]string{} // ETag -> the PATCH's body
	for i := 1; i <= changes; i++ {
		price := int64(start + i)
		resp, err := s.client.Do(patchRequest(t, s.URL+"/v1/products/"+id, admin, price))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("PATCH price %d: %d %v %s", price, resp.StatusCode, err, b)
		}
		patched[resp.Header.Get("ETag")] = string(b)
		written.Store(price)
	}
	deleting.Store(true)
	s.must("DELETE", "/v1/products/"+id, admin, nil, nil, http.StatusNoContent, nil)
	deleted.Store(true)
	// The readers read the deleted product a few more times.
	for n := reads.Load(); reads.Load() < n+2*readers && !t.Failed(); {
		if p, err := s.readPage(id); err != nil || p.code != http.StatusNotFound {
			t.Fatalf("after the delete: %d %v %s", p.code, err, p.body)
		}
	}
	finish()
	for etag, want := range patched {
		bodies.see("the admin's PATCH", etag, []byte(want))
	}
	t.Logf("%d reads of %s during %d price changes, %d reviews and the delete", reads.Load(), id, changes, reviewers)

	t.Run("FirstReadsAtOnce", func(t *testing.T) {
		for round := range 10 {
			p := fmt.Sprintf("new-%d", round)
			price := int64(700 + round)
			s.must("POST", "/v1/products", admin, map[string]any{
				"productId": p, "name": "New " + p, "priceCents": price, "categoryId": "tea", "stock": 10,
			}, nil, http.StatusCreated, nil)
			begin := make(chan struct{})
			var wg sync.WaitGroup
			for r := range readers {
				wg.Go(func() {
					<-begin
					pr, err := s.readPage(p)
					if err != nil || pr.code != http.StatusOK {
						t.Errorf("%s, reader %d: %d %v %s", p, r, pr.code, err, pr.body)
						return
					}
					bodies.see(fmt.Sprintf("%s, reader %d", p, r), pr.etag, pr.body)
					var v liveProduct
					if err := json.Unmarshal(pr.body, &v); err != nil || v.ID != p || v.PriceCents != price {
						t.Errorf("%s, reader %d: %s (%v), want %s at %d", p, r, pr.body, err, p, price)
					}
				})
			}
			close(begin)
			wg.Wait()
		}
	})
}

func patchRequest(t *testing.T, url, tok string, price int64) *http.Request {
	t.Helper()
	r, err := http.NewRequest("PATCH", url, strings.NewReader(fmt.Sprintf(`{"priceCents":%d}`, price)))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/merge-patch+json")
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}
