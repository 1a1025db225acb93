package loadbench

import (
	"fmt"
	"net/http"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/reference-shop/shop/api/client"
)

// preparedMix is a mix over n products and users as prepareMix builds it,
// without a shop: the tokens are made up.
func preparedMix(tb testing.TB, n, checkouts int) *mixTargets {
	tb.Helper()
	const base = "http://127.0.0.1:8080"
	m := &mixTargets{}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p-%04d", i)
	}
	var err error
	if m.products, err = productURLs(base, ids); err != nil {
		tb.Fatal(err)
	}
	for _, id := range ids {
		u, err := urlOf(client.NewPutCartItemRequestWithBody(base, id, nil, "", nil))
		if err != nil {
			tb.Fatal(err)
		}
		m.cartURLs = append(m.cartURLs, u)
		m.cartHeaders = append(m.cartHeaders, http.Header{"Authorization": {"Bearer t-" + id}, "Content-Type": {"application/json"}})
	}
	for _, id := range []string{"books", "games", "tea"} {
		u, err := urlOf(client.NewListCategoryProductsRequest(base, id, nil))
		if err != nil {
			tb.Fatal(err)
		}
		m.categories = append(m.categories, u)
	}
	for q := 1; q <= maxCartQuantity; q++ {
		m.cartBodies = append(m.cartBodies, []byte(fmt.Sprintf(`{"quantity":%d}`, q)))
	}
	for i := range checkouts {
		req, err := client.NewCheckoutRequestWithBody(base, &client.CheckoutParams{IdempotencyKey: fmt.Sprint("k-", i)}, "application/json", nil)
		if err != nil {
			tb.Fatal(err)
		}
		m.checkouts = append(m.checkouts, vegeta.Target{Method: req.Method, URL: req.URL.String(), Header: req.Header})
	}
	return m
}

// TestMixTargetsFollowTheSchedule: the prepared requests come out in the
// mix's proportions, each a request of its kind.
func TestMixTargetsFollowTheSchedule(t *testing.T) {
	m := preparedMix(t, 100, 10)
	next := m.targeter()
	kinds := map[string]int{}
	for range 2 * len(mixSchedule) {
		var tg vegeta.Target
		if err := next(&tg); err != nil {
			t.Fatal(err)
		}
		kinds[kindOf(tg.Method, tg.URL)]++
		if tg.Method != http.MethodGet && (tg.Header.Get("Content-Type") != "application/json" || len(tg.Body) == 0 && tg.Method == http.MethodPut) {
			t.Errorf("%s %s: headers %v, body %q", tg.Method, tg.URL, tg.Header, tg.Body)
		}
	}
	want := map[string]int{kindProduct: 28, kindCategory: 6, kindCart: 4, kindCheckout: 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s: %d of %d requests, want %d", k, kinds[k], 2*len(mixSchedule), n)
		}
	}
}

// BenchmarkMixTargeter is what the load generator spends on picking one
// request of the mix: the client builds the requests when the run is
// prepared, so the hot loop only indexes them.
func BenchmarkMixTargeter(b *testing.B) {
	m := preparedMix(b, 10_000, b.N/len(mixSchedule)+1)
	next := m.targeter()
	var tg vegeta.Target
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := next(&tg); err != nil {
			b.Fatal(err)
		}
	}
}
