package api

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"pgregory.net/rapid"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// TestRenderedPagesAreTheEncodedPages: a page written from kept renders
// (writePage) is byte for byte the page the handlers encoded before
// renders existed (encode of pageOf of the decoded views), the first time
// a document is shown and every time after, for documents of any text
// (HTML's characters, quotes, non-ASCII, escapes) and any continuation.
func TestRenderedPagesAreTheEncodedPages(t *testing.T) {
	text := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"Coffee & Tea", `<b>"x"</b>`, "café ☕", "a\u2028b", "\\", ""}))
	rs := newRenders(64, 1<<20)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		var docs [][]byte
		for range n {
			s := domain.ProductSummary{
				Meta:          domain.Meta{ID: rapid.StringMatching(`p-[0-9]{1,4}`).Draw(t, "id"), Type: domain.TypeProductSummary, ETag: rapid.String().Draw(t, "etag")},
				CategoryID:    "c",
				CategoryName:  text.Draw(t, "category"),
				Name:          text.Draw(t, "name"),
				PriceCents:    rapid.Int64().Draw(t, "price"),
				Currency:      "USD",
				ImageURL:      text.Draw(t, "image"),
				AverageRating: rapid.Float64Range(0, 5).Draw(t, "rating"),
				ReviewCount:   rapid.IntRange(0, 1e6).Draw(t, "reviews"),
				StockStatus:   rapid.SampledFrom([]string{"", "in_stock", "sold_out"}).Draw(t, "status"),
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, b)
		}
		page := repo.Page[domain.ProductSummary]{Items: docs, Next: rapid.OneOf(rapid.Just(""), text).Draw(t, "next")}

		decoded, err := page.Decode()
		if err != nil {
			t.Fatal(err)
		}
		want := httptest.NewRecorder()
		encode(want, 200, pageOf(mapSlice(decoded, viewProductSummary), page.Next))
		for round := range 2 { // made, then kept
			got := httptest.NewRecorder()
			writePage(got, httptest.NewRequest("GET", "/", nil), rs, "productSummary", page, viewProductSummary)
			if got.Body.String() != want.Body.String() {
				t.Fatalf("round %d:\n got %s\nwant %s", round, got.Body, want.Body)
			}
			if got.Header().Get("Content-Type") != want.Header().Get("Content-Type") || got.Code != want.Code {
				t.Fatalf("round %d: %d %q, want %d %q", round, got.Code, got.Header().Get("Content-Type"), want.Code, want.Header().Get("Content-Type"))
			}
		}
	})
}

// TestRendersFollowTheDocument: a document written again (other bytes,
// the same id) is rendered afresh, and one view's render of a document is
// never another view's.
func TestRendersFollowTheDocument(t *testing.T) {
	rs := newRenders(64, 1<<20)
	doc := func(name string) []byte {
		b, _ := json.Marshal(domain.ProductSummary{Meta: domain.Meta{ID: "p-1", ETag: name}, Name: name})
		return b
	}
	nameOf := func(s domain.ProductSummary) string { return s.Name }
	idOf := func(s domain.ProductSummary) string { return s.ID }
	for _, tc := range []struct {
		view string
		f    func(domain.ProductSummary) string
		doc  []byte
		want string
	}{
		{"name", nameOf, doc("old"), `"old"`},
		{"name", nameOf, doc("new"), `"new"`},
		{"id", idOf, doc("new"), `"p-1"`},
		{"name", nameOf, doc("new"), `"new"`},
	} {
		got, err := renderDoc(rs, tc.view, tc.doc, tc.f)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s of %s: %s, %v; want %s", tc.view, tc.doc, got, err, tc.want)
		}
	}
	if _, err := renderDoc(rs, "name", []byte(`{"name":`), nameOf); err == nil {
		t.Error("a document that does not decode rendered")
	}
}

// TestRenderedDocsAreTheEncodedDocs: writeDoc writes what encode of the
// view wrote, made or kept.
func TestRenderedDocsAreTheEncodedDocs(t *testing.T) {
	text := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"Coffee & Tea", `<i>"x"</i>`, "café"}))
	rs := newRenders(64, 1<<20)
	rapid.Check(t, func(t *rapid.T) {
		var c domain.Categories
		c.ID, c.Type = domain.CategoriesID, domain.TypeCategories
		for range rapid.IntRange(0, 5).Draw(t, "categories") {
			c.Items = append(c.Items, domain.Category{ID: rapid.StringMatching(`[a-z]{1,8}`).Draw(t, "id"), Name: text.Draw(t, "name"), ProductCount: rapid.IntRange(0, 1000).Draw(t, "count")})
		}
		doc, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		want := httptest.NewRecorder()
		encode(want, 200, viewCategories(c))
		for round := range 2 {
			got := httptest.NewRecorder()
			writeDoc(got, httptest.NewRequest("GET", "/", nil), rs, "categories", doc, viewCategories)
			if got.Body.String() != want.Body.String() || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
				t.Fatalf("round %d:\n got %s\nwant %s", round, got.Body, want.Body)
			}
		}
	})
}
