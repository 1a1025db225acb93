package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestBadInput: nothing a client sends can smuggle a field past decode.
func TestBadInput(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	admin := token(t, "boss", true)
	deep := strings.Repeat(`{"shippingAddress":`, 20) + "{}" + strings.Repeat("}", 20)

	for _, tc := range []struct {
		name        string
		method      string
		path        string
		tok         string
		body        string
		contentType string
		want        int
		pointer     string
	}{
		{"BrokenQueryString", "GET", "/v1/orders?continuation=%zz", alice, "", "", 400, ""},
		{"BrokenQueryStringOnAPage", "GET", "/v1/categories/books/products?limit=5&sort=%", "", "", "", 400, ""},
		{"TooLarge", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":1,"x":"` + strings.Repeat("a", 70<<10) + `"}`, "", 413, ""},
		{"Malformed", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":`, "", 400, ""},
		{"Empty", "PUT", "/v1/cart/items/book-1", alice, ``, "", 400, ""},
		{"TwoValues", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":1}{"quantity":2}`, "", 400, ""},
		{"NotAnObject", "PUT", "/v1/cart/items/book-1", alice, `[1]`, "", 400, ""},
		{"WrongType", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":"2"}`, "", 400, "/quantity"},
		{"Fraction", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":1.5}`, "", 400, "/quantity"},
		{"NestedWrongType", "POST", "/v1/checkout", alice, `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"A","line1":"B","city":"C","postalCode":5,"country":"GB"}}`, "", 400, "/shippingAddress/postalCode"},
		{"UnknownField", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":1,"priceCents":1}`, "", 400, "/priceCents"},
		{"CaseVariantField", "PUT", "/v1/cart/items/book-1", alice, `{"Quantity":1}`, "", 400, "/Quantity"},
		{"DuplicateKey", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":1,"quantity":99}`, "", 400, "/quantity"},
		{"NullField", "PUT", "/v1/cart/items/book-1", alice, `{"quantity":null}`, "", 400, "/quantity"},
		{"MissingField", "PUT", "/v1/cart/items/book-1", alice, `{}`, "", 400, "/quantity"},
		{"CheckoutCannotSetUserID", "POST", "/v1/checkout", alice, `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"A","line1":"B","city":"C","postalCode":"D","country":"GB"},"userId":"bob"}`, "", 400, "/userId"},
		{"CheckoutCannotSetTotal", "POST", "/v1/checkout", alice, `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"A","line1":"B","city":"C","postalCode":"D","country":"GB"},"totalCents":1}`, "", 400, "/totalCents"},
		{"NestedUnknownField", "POST", "/v1/checkout", alice, `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"A","line1":"B","city":"C","postalCode":"D","country":"GB","status":"shipped"}}`, "", 400, "/shippingAddress/status"},
		{"NestedCaseVariant", "POST", "/v1/checkout", alice, `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"A","line1":"B","city":"C","postalCode":"D","Country":"GB"}}`, "", 400, "/shippingAddress/Country"},
		{"TooDeep", "POST", "/v1/checkout", alice, deep, "", 400, ""},
		{"ValidationListsEveryField", "POST", "/v1/checkout", alice, `{"paymentMethod":"pm_card_visa","shippingAddress":{"name":"","line1":"B","city":"C","postalCode":"D","country":"gb"}}`, "", 400, "/shippingAddress/name"},
		{"PatchCaseVariantPrice", "PATCH", "/v1/products/book-1", admin, `{"PriceCents":1}`, "application/merge-patch+json", 400, "/PriceCents"},
		{"PatchCannotSetPriceVersion", "PATCH", "/v1/products/book-1", admin, `{"priceVersion":9}`, "application/merge-patch+json", 400, "/priceVersion"},
		{"PatchNullName", "PATCH", "/v1/products/book-1", admin, `{"name":null}`, "application/merge-patch+json", 400, "/name"},
		{"PatchZeroPrice", "PATCH", "/v1/products/book-1", admin, `{"priceCents":0}`, "application/merge-patch+json", 400, "/priceCents"},
		{"PatchNeedsMergePatchType", "PATCH", "/v1/products/book-1", admin, `{"name":"x"}`, "application/json", 415, ""},
		{"ReviewCannotSetUserName", "POST", "/v1/products/book-1/reviews", alice, `{"rating":5,"title":"t","userName":"admin"}`, "", 400, "/userName"},
		{"CreateProductReservedID", "POST", "/v1/products", admin, `{"productId":"categories","name":"x","priceCents":1,"categoryId":"books"}`, "", 400, "/productId"},
		{"CreateProductUnknownCategory", "POST", "/v1/products", admin, `{"name":"x","priceCents":1,"categoryId":"nope"}`, "", 400, "/categoryId"},
		{"CreateProductCannotSetPriceVersion", "POST", "/v1/products", admin, `{"name":"x","priceCents":1,"categoryId":"books","priceVersion":7}`, "", 400, "/priceVersion"},
		{"BadPathID", "GET", "/v1/products/" + strings.Repeat("p", 129), "", "", "", 400, ""},
		{"BadPathIDCharacters", "GET", "/v1/products/a%20b", "", "", "", 400, ""},
		{"BadLimit", "GET", "/v1/orders?limit=abc", alice, "", "", 400, ""},
		{"ZeroLimit", "GET", "/v1/orders?limit=0", alice, "", "", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Idempotency-Key": "k-" + tc.name}
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			var body any
			if tc.body != "" || tc.method != "GET" {
				body = tc.body
			}
			r := s.do(req{method: tc.method, path: tc.path, token: tc.tok, body: body, header: h}).want(tc.want)
			p := decodeBody[problemBody](t, r)
			if !strings.HasPrefix(p.Type, "https://shop.example/problems/") || p.Status != tc.want {
				t.Errorf("problem = %+v", p)
			}
			if tc.pointer == "" {
				return
			}
			if len(p.Errors) == 0 || p.Errors[0].Pointer != tc.pointer {
				t.Errorf("errors = %+v, want the first at %s", p.Errors, tc.pointer)
			}
		})
	}
	t.Run("NothingChanged", func(t *testing.T) {
		got := decodeBody[cartBody](t, s.do(req{method: "GET", path: "/v1/cart", token: alice}).want(http.StatusOK))
		if len(got.Items) != 0 {
			t.Errorf("cart = %+v, want untouched", got)
		}
		p := decodeBody[struct {
			PriceCents   int64
			PriceVersion int64
			Name         string
		}](t, s.do(req{method: "GET", path: "/v1/products/book-1"}).want(http.StatusOK))
		if p.PriceCents != 3999 || p.PriceVersion != 1 || p.Name != "Go in Practice" {
			t.Errorf("product = %+v, want untouched", p)
		}
	})
}
