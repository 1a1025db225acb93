package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// populated returns a T with every field set, embedded documents and system
// properties included, and one element in every slice: the worst case for
// a view that might pass a stored field through. Every value differs from
// the others, so a view that swaps two fields shows it too.
func populated[T any]() T {
	var v T
	n := 0
	populate(reflect.ValueOf(&v).Elem(), &n)
	return v
}

func populate(v reflect.Value, n *int) {
	*n++
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 10, *n, 0, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		populate(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		populate(v.Index(0), n)
	case reflect.Array:
		for i := range v.Len() {
			populate(v.Index(i), n)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				populate(v.Field(i), n)
			}
		}
	}
}

// viewsOfPopulated is every response view, each made from a fully
// populated document.
func viewsOfPopulated() map[string]any {
	return map[string]any{
		"categories":     viewCategories(populated[domain.Categories]()),
		"category":       viewCategory(populated[domain.Category]()),
		"product":        viewProduct(populated[domain.Product]()),
		"productSummary": viewProductSummary(populated[domain.ProductSummary]()),
		"review":         viewReview(populated[domain.Review]()),
		"cart":           viewCart(populated[domain.Cart]()),
		"order":          viewOrder(populated[domain.Order]()),
		"orderListItem":  viewOrderListItem(populated[repo.OrderListItem]()),
		"summary":        viewSummary(populated[domain.CustomerSummary]()),
		"orderSummary":   viewOrderSummary(populated[domain.OrderSummary]()),
		"subscription":   viewSubscription(populated[domain.Subscription](), time.Time{}),
		"delivery":       viewDelivery(populated[domain.Delivery]()),
	}
}

// internalFields are properties of stored documents that are bookkeeping,
// system properties or partition plumbing: no response may carry one.
var internalFields = []string{
	"_etag", "_ts", "ttl", "type", "schemaVersion", "version", "sourceVersion",
	"productVersion", "priceVersionSeen", "pendingCheckout", "productIds", "previousCategoryId",
	"deleted", "idempotencyKey", "cartEtag", "statusDay", "requestHash",
	// A subscription's secrets leave only in the create's and the
	// rotation's answers; a delivery's claim is the dispatcher's.
	"secrets", "secret", "claimedBy", "claimedUntil",
}

func TestViewsCarryNoInternalField(t *testing.T) {
	for name, view := range viewsOfPopulated() {
		b, err := json.Marshal(view)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var body any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, key := range keysOf(body) {
			if slices.Contains(internalFields, key) {
				t.Errorf("the %s view carries %q: %s", name, key, b)
			}
		}
	}
}

// keysOf lists the object keys at every depth of a decoded JSON value.
func keysOf(v any) []string {
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			keys = append(keys, k)
			keys = append(keys, keysOf(e)...)
		}
	case []any:
		for _, e := range v {
			keys = append(keys, keysOf(e)...)
		}
	}
	return keys
}
