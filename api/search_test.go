package api_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// indexProducts runs the products feed handler over the current version
// of each product, as the feed workers would.
func (s *shop) indexProducts(ids ...string) {
	s.t.Helper()
	h := feedworkers.NewHandlers(s.store, writes.New(repo.New(s.store, 0), nil, nil), feedworkers.HandlersConfig{})
	var b changefeed.Batch
	for _, id := range ids {
		it, err := s.store.Container(store.ProductsContainer).Read(s.t.Context(), id, id)
		if err != nil {
			s.t.Fatal(err)
		}
		b.Items = append(b.Items, it.Item)
	}
	if err := h.Products(s.t.Context(), b); err != nil {
		s.t.Fatal(err)
	}
}

type searchPage struct {
	Items []struct {
		ID string `json:"id"`
	} `json:"items"`
	Continuation *string `json:"continuation"`
}

func (s *shop) search(q string, limit string) []string {
	s.t.Helper()
	var ids []string
	cont := ""
	for {
		path := "/v1/search?q=" + url.QueryEscape(q) + "&limit=" + limit
		if cont != "" {
			path += "&continuation=" + url.QueryEscape(cont)
		}
		r := s.do(req{method: "GET", path: path}).want(200)
		if got := r.ops(); got != "1" {
			s.t.Errorf("search %q: X-Store-Operations %s, want 1", q, got)
		}
		page := decodeBody[searchPage](s.t, r)
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.Continuation == nil {
			return ids
		}
		cont = *page.Continuation
	}
}

// TestSearchFindsByNameCategoryAndTags: created through the admin API and
// indexed by the products feed, products are found by the words of their
// name, category name and tags, folded alike on both sides, every word
// ANDed, best rated first then by name, each page ONE store operation.
func TestSearchFindsByNameCategoryAndTags(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
		"productId": "mug-1", "name": "Café mug", "priceCents": 900, "categoryId": "games", "tags": []string{"Ceramic", "gifts"},
	}}).want(201)
	s.do(req{method: "POST", path: "/v1/products", token: admin, body: map[string]any{
		"productId": "mug-2", "name": "Travel Mugs", "priceCents": 1900, "categoryId": "books",
	}}).want(201)
	s.indexProducts("book-1", "book-2", "game-1", "mug-1", "mug-2")

	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"mug", []string{"mug-1", "mug-2"}},
		{"MUGS", []string{"mug-1", "mug-2"}},
		{"cafe", []string{"mug-1"}},
		{"ceramic gift", []string{"mug-1"}},
		{"books", []string{"book-1", "book-2", "mug-2"}}, // book-1 is rated: first
		{"travel book", []string{"mug-2"}},
		{"the mug of games", []string{"mug-1"}},
		{"partition cosmos", []string{}},
		{"unheard", []string{}},
	} {
		t.Run(tc.q, func(t *testing.T) {
			got := s.search(tc.q, "1")
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("search %q = %v, want %v", tc.q, got, tc.want)
			}
		})
	}

	// A rename and a tag change reach the index through the feed.
	s.do(req{method: "PATCH", path: "/v1/products/mug-1", token: admin, header: map[string]string{"Content-Type": "application/merge-patch+json"},
		body: `{"name": "Espresso cup", "tags": ["porcelain"]}`}).want(200)
	s.indexProducts("mug-1")
	if got := s.search("cafe", "5"); len(got) != 0 {
		t.Errorf("after the rename, search cafe = %v, want none", got)
	}
	if got := s.search("porcelain espresso", "5"); !slices.Equal(got, []string{"mug-1"}) {
		t.Errorf("after the rename, search porcelain espresso = %v, want [mug-1]", got)
	}
}

// TestSearchRefusesBadQueries: each is a 400 problem, never a store read.
func TestSearchRefusesBadQueries(t *testing.T) {
	s := newShop(t)
	for _, tc := range []struct{ name, query string }{
		{"missing", ""},
		{"empty", "q="},
		{"six words", "q=" + url.QueryEscape("red blue oak mug lamp box")},
		{"1000 characters", "q=" + strings.Repeat("a", 1000)},
		{"control character", "q=mug%00"},
		{"only stop words", "q=the+and+of"},
		{"bad limit", "q=mug&limit=0"},
		{"bad continuation", "q=mug&continuation=nonsense"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(req{method: "GET", path: "/v1/search?" + tc.query}).want(400)
			if got := r.Header().Get("Content-Type"); got != "application/problem+json" {
				t.Errorf("Content-Type %q, want application/problem+json", got)
			}
		})
	}
}
