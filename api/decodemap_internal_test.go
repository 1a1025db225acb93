package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
)

// TestDecodeMapKeys: a body field that is a map (a variant's attributes)
// takes any key, its values scanned as the map's element type; a struct
// still refuses a key it has no field for, inside a map's values or
// around them.
func TestDecodeMapKeys(t *testing.T) {
	decodeBody := func(body string) (productCreateRequest, error) {
		r := httptest.NewRequest("POST", "/v1/products", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return decode[productCreateRequest](r)
	}
	variant := func(fields string) string {
		return `{"name": "Tee", "categoryId": "books", "variants": [{"sku": "tee-m", "priceCents": 1999, ` + fields + `}]}`
	}

	req, err := decodeBody(variant(`"attributes": {"size": "M", "colour": "navy"}`))
	if err != nil {
		t.Fatalf("attributes refused: %v", err)
	}
	if got := req.Variants[0].Attributes; got["size"] != "M" || got["colour"] != "navy" || len(got) != 2 {
		t.Errorf("attributes = %v", got)
	}
	for name, body := range map[string]string{
		"NullValue":      variant(`"attributes": {"size": null}`),
		"NumberValue":    variant(`"attributes": {"size": 1}`),
		"RepeatedKey":    variant(`"attributes": {"size": "M", "size": "L"}`),
		"UnknownField":   variant(`"attributes": {"size": "M"}, "colour": "navy"`),
		"CaseOfAField":   variant(`"attributes": {"size": "M"}, "SKU": "x"`),
		"UnknownOutside": `{"name": "Tee", "categoryId": "books", "priceCents": 1, "attributes": {"size": "M"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeBody(body); !domain.IsCode(err, domain.EINVALID) {
				t.Errorf("decode(%s) = %v, want EINVALID", body, err)
			}
		})
	}
}
