package api

import (
	"reflect"
	"testing"

	"github.com/reference-shop/shop/domain"
)

// TestPrescanOfAMap: a map field (a variant's attributes) takes any key,
// but still refuses a key given twice, a null and a value of the wrong
// nesting; the struct around it still refuses an unknown field.
func TestPrescanOfAMap(t *testing.T) {
	typ := reflect.TypeFor[productCreateRequest]()
	for _, tc := range []struct {
		body, pointer string // pointer "" means accepted
	}{
		{`{"variants":[{"sku":"m","attributes":{"size":"M","colour":"navy"},"priceCents":1}]}`, ""},
		{`{"variants":[{"sku":"m","attributes":{"size":"M","size":"L"},"priceCents":1}]}`, "/variants/0/attributes/size"},
		{`{"variants":[{"sku":"m","attributes":{"size":null},"priceCents":1}]}`, "/variants/0/attributes/size"},
		{`{"variants":[{"sku":"m","attributes":{},"colour":"navy"}]}`, "/variants/0/colour"},
		{`{"variants":[{"sku":"m","attributes":{"a/b":"M"},"priceCents":1}]}`, ""},
	} {
		err := prescan([]byte(tc.body), typ)
		if tc.pointer == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.body, err)
			}
			continue
		}
		e, ok := err.(*domain.Error)
		if !ok || len(e.Fields) != 1 || e.Fields[0].Pointer != tc.pointer {
			t.Errorf("%s: %v, want refused at %s", tc.body, err, tc.pointer)
		}
	}
}
