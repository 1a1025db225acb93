package api_test

import (
	"bytes"
	"encoding/xml"
	"net/url"
	"testing"

	"github.com/reference-shop/shop/domain"
)

// TestProductImage: a product's picture is drawn by the shop from its
// category and name, the same bytes every time; the URL the document
// stores names the version, which is cached for a year; a stale version
// gets the current picture, uncached; an unknown product is a 404 problem.
func TestProductImage(t *testing.T) {
	s := newShop(t)
	s.fixture()
	p, err := s.repos.Products.Get(t.Context(), "book-1")
	if err != nil {
		t.Fatal(err)
	}
	path := domain.DrawnImageURL(p)

	first := s.do(req{method: "GET", path: path}).want(200)
	if got, want := first.Header().Get("Content-Type"), "image/svg+xml"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got, want := first.Header().Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
		t.Errorf("Cache-Control = %q, want %q", got, want)
	}
	if got, want := first.ops(), "1"; got != want {
		t.Errorf("store operations = %s, want %s (one point read)", got, want)
	}
	if err := xml.Unmarshal(first.Body.Bytes(), new(struct{ XMLName xml.Name })); err != nil {
		t.Errorf("the picture is not well-formed XML: %v", err)
	}
	again := s.do(req{method: "GET", path: path}).want(200)
	if !bytes.Equal(first.Body.Bytes(), again.Body.Bytes()) {
		t.Error("two reads of the same version drew different pictures")
	}

	stale := s.do(req{method: "GET", path: "/v1/products/book-1/image.svg?v=" + url.QueryEscape("old")}).want(200)
	if got, want := stale.Header().Get("Cache-Control"), "no-cache"; got != want {
		t.Errorf("a stale version: Cache-Control = %q, want %q", got, want)
	}
	other := s.do(req{method: "GET", path: "/v1/products/book-2/image.svg"}).want(200)
	if bytes.Equal(first.Body.Bytes(), other.Body.Bytes()) {
		t.Error("two products of different names drew the same picture")
	}
	s.do(req{method: "GET", path: "/v1/products/nope/image.svg"}).want(404)
}
