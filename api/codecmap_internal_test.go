package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
)

// TestBodyMapsTakeAnyKey: a variant's attributes are a map whose keys the
// admin names ("size", "colour"), not fields of a struct: the body's
// strict reading (prescan) accepts any key there and still checks each
// value, on the create and on the merge patch alike.
func TestBodyMapsTakeAnyKey(t *testing.T) {
	const variants = `"variants":[{"sku":"M","attributes":{"size":"M","colour":"Navy"},"priceCents":1999},{"sku":"L","attributes":{"size":"L","colour":"Navy"},"priceCents":2199}]`
	post := func(body string) *http.Request {
		r := httptest.NewRequest("POST", "/v1/products", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	c, err := decode[productCreateRequest](post(`{"name":"Tee","categoryId":"books",` + variants + `}`))
	if err != nil || len(c.Variants) != 2 || c.Variants[1].Attributes["colour"] != "Navy" {
		t.Errorf("create: %+v, %v; want 2 variants with their attributes", c, err)
	}
	patch := httptest.NewRequest("PATCH", "/v1/products/tee", strings.NewReader(`{`+variants+`}`))
	patch.Header.Set("Content-Type", "application/merge-patch+json")
	p, err := decode[productPatch](patch)
	if err != nil || p.Variants == nil || len(*p.Variants) != 2 {
		t.Errorf("patch: %+v, %v; want 2 variants", p, err)
	}
	for _, body := range []string{
		`{"name":"Tee","categoryId":"books","variants":[{"sku":"M","attributes":{"size":null},"priceCents":1999}]}`,
		`{"name":"Tee","categoryId":"books","variants":[{"sku":"M","attributes":{"size":["M"]},"priceCents":1999}]}`,
		`{"name":"Tee","categoryId":"books","variants":[{"sku":"M","attributes":{"size":"M"},"priceCents":1999,"colour":"Navy"}]}`,
	} {
		if _, err := decode[productCreateRequest](post(body)); domain.ErrorCode(err) != domain.EINVALID {
			t.Errorf("%s: %v, want invalid", body, err)
		}
	}
}
