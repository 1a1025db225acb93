package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/web"
)

// paymentMethodEntry is one entry of the storefront's paymentMethods, in
// the one shape views/payment.js writes them.
var paymentMethodEntry = regexp.MustCompile(`\{\s*token:\s*"([^"]*)",\s*label:\s*"([^"]*)",\s*declines:\s*(true|false)\s*\},?`)

// TestStorefrontPaymentMethods: the checkout's select offers exactly the
// payment provider's test tokens (payments.TestMethods), in its order,
// Visa first as the default, each said to decline exactly when the
// provider declines it. The list is read from views/payment.js as the
// handler serves it, so a token added to either side alone fails here
// rather than at a shopper's checkout.
func TestStorefrontPaymentMethods(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/views/payment.js")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /views/payment.js: status %d", res.StatusCode)
	}

	const start = "export const paymentMethods = ["
	src := string(body)
	i := strings.Index(src, start)
	if i < 0 {
		t.Fatalf("views/payment.js has no %q", start)
	}
	list, _, ok := strings.Cut(src[i+len(start):], "];")
	if !ok {
		t.Fatal("views/payment.js: paymentMethods has no closing \"];\"")
	}
	// Every entry must have the one shape: anything left once the entries
	// are removed is an entry this test would otherwise skip.
	if rest := strings.TrimSpace(paymentMethodEntry.ReplaceAllString(list, "")); rest != "" {
		t.Fatalf("paymentMethods holds something other than {token, label, declines} entries: %q", rest)
	}

	var got []string
	for _, m := range paymentMethodEntry.FindAllStringSubmatch(list, -1) {
		token, label, declines := m[1], m[2], m[3] == "true"
		got = append(got, token)
		if label == "" {
			t.Errorf("%s has no label", token)
		}
		tm, ok := payments.LookupTestMethod(token)
		if !ok {
			continue // reported below, with the whole list
		}
		if want := tm.DeclineCode != ""; declines != want {
			t.Errorf("%s: the storefront says declines: %v, the provider declines it: %v", token, declines, want)
		}
	}
	var want []string
	for _, m := range payments.TestMethods {
		want = append(want, m.Token)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the storefront offers\n  %v\nthe provider knows (payments.TestMethods)\n  %v", got, want)
	}
	if len(got) == 0 || got[0] != "pm_card_visa" {
		t.Errorf("the storefront's default (first) method is %v, want pm_card_visa", got)
	}
}
