package client_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reference-shop/shop/api/client"
)

var address = client.Address{Name: "Ada Lovelace", Line1: "1 Analytical St", City: "London", PostalCode: "N1 9GU", Country: "GB"}

// TestCostOfEveryAnswer: the cost headers read as the server wrote them,
// on a success and on a problem alike.
func TestCostOfEveryAnswer(t *testing.T) {
	c := startShop(t)
	p := someProduct(t, c)
	ok, err := client.OK(c.GetProductWithResponse(t.Context(), p.ID))
	if err != nil {
		t.Fatal(err)
	}
	missing, err := c.GetProductWithResponse(t.Context(), "no-such-product")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*http.Response{ok.HTTPResponse, missing.HTTPResponse} {
		cost, err := client.CostOf(r)
		if err != nil {
			t.Fatalf("%s: %v", r.Status, err)
		}
		// A screen's read is one store operation (README, "The screens and their one read").
		if cost.Operations != 1 {
			t.Errorf("%s: Operations = %d, want 1", r.Status, cost.Operations)
		}
		if got, want := strconv.FormatFloat(cost.RequestUnits, 'f', 2, 64), r.Header.Get("X-Request-Charge"); got != want {
			t.Errorf("%s: RequestUnits = %s, want X-Request-Charge %s", r.Status, got, want)
		}
		if cost.ServerTiming == "" || cost.ServerTiming != r.Header.Get("Server-Timing") {
			t.Errorf("%s: ServerTiming = %q, want %q", r.Status, cost.ServerTiming, r.Header.Get("Server-Timing"))
		}
	}
	health, err := c.HealthWithResponse(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CostOf(health.HTTPResponse); err == nil {
		t.Error("CostOf(/healthz) = nil error; want one: it carries no cost headers")
	}
}

// TestProblemIsATypedError: a problem+json answer is an *Error that
// errors.As finds through wrapping, with the problem's fields and cost.
func TestProblemIsATypedError(t *testing.T) {
	c := startShop(t)
	_, err := client.OK(c.GetProductWithResponse(t.Context(), "no-such-product"))
	var e *client.Error
	if !errors.As(fmt.Errorf("product page: %w", err), &e) {
		t.Fatalf("err = %v (%T), want a *client.Error", err, err)
	}
	if e.Status != http.StatusNotFound || e.Type != client.ProblemNotFound || e.Title != "Not Found" || e.Detail == "" {
		t.Errorf("problem = %+v, want a 404 of type not-found with a detail", e.Problem)
	}
	if e.Cost.Operations != 1 {
		t.Errorf("cost of the 404 = %+v, want its one read", e.Cost)
	}
	if !strings.Contains(e.Error(), "404") || !strings.Contains(e.Error(), e.Detail) {
		t.Errorf("Error() = %q, want the status and the detail", e.Error())
	}

	t.Run("InvalidNamesTheField", func(t *testing.T) {
		tok := devToken(t, c, "carla")
		_, err := client.OK(c.PutCartItemWithResponse(t.Context(), someProduct(t, c).ID, nil, client.CartItemRequest{Quantity: 100}, client.Bearer(tok)))
		if !errors.As(err, &e) || e.Type != client.ProblemInvalid || len(e.Errors) != 1 || e.Errors[0].Pointer != "/quantity" {
			t.Errorf("err = %v, want an invalid problem naming /quantity", err)
		}
	})
	t.Run("NotAProblem", func(t *testing.T) {
		// A proxy in front answers in HTML: still an *Error, of type about:blank.
		proxy, err := client.NewClientWithResponses("http://shop.invalid", client.WithHTTPClient(doerFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway",
				Header: http.Header{"Content-Type": {"text/html"}, "Retry-After": {"3"}}, Body: io.NopCloser(strings.NewReader("<h1>bad gateway</h1>"))}, nil
		})))
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.OK(proxy.ListCategoriesWithResponse(t.Context()))
		if !errors.As(err, &e) || e.Status != http.StatusBadGateway || e.Type != "about:blank" || e.RetryAfter.Seconds() != 3 {
			t.Errorf("err = %#v, want a 502 of type about:blank, retry after 3 s", err)
		}
	})
}

// TestBearerSignsIn: without a token the cart is a 401; with Bearer, per
// call or for every call of the client, it is the caller's.
func TestBearerSignsIn(t *testing.T) {
	c := startShop(t)
	_, err := client.OK(c.GetCartWithResponse(t.Context()))
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		t.Fatalf("cart without a token: err = %v, want a 401", err)
	}
	tok := devToken(t, c, "bella")
	r, err := client.OK(c.GetCartWithResponse(t.Context(), client.Bearer(tok)))
	if err != nil || r.JSON200.UserID != "bella" {
		t.Fatalf("cart with Bearer: %v, %+v", err, r)
	}
	if r.JSON200.LastUpdated != nil {
		t.Errorf("lastUpdated of a cart never written = %v, want nil (null)", r.JSON200.LastUpdated)
	}
	// A client signed in for every call.
	bella, err := client.NewClientWithResponses(c.ClientInterface.(*client.Client).Server, client.WithRequestEditorFn(client.Bearer(tok)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.OK(bella.GetMySummaryWithResponse(t.Context())); err != nil {
		t.Errorf("summary of a signed-in client: %v", err)
	}
}

// TestIfMatchWithTheETagRead: a write with the ETag last read goes ahead;
// with one a write has since replaced it is a 412.
func TestIfMatchWithTheETagRead(t *testing.T) {
	c := startShop(t)
	tok := devToken(t, c, "ida")
	p := someProduct(t, c).ID
	put := func(q int, ifMatch *string) (*client.PutCartItemResponse, error) {
		return client.OK(c.PutCartItemWithResponse(t.Context(), p, &client.PutCartItemParams{IfMatch: ifMatch}, client.CartItemRequest{Quantity: q}, client.Bearer(tok)))
	}
	first, err := put(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := client.ETagOf(first.HTTPResponse)
	if etag == "" || etag != first.Headers200.ETag {
		t.Fatalf("ETagOf = %q, the typed header %q", etag, first.Headers200.ETag)
	}
	second, err := put(2, &etag)
	if err != nil {
		t.Fatalf("If-Match with the ETag just read: %v", err)
	}
	_, err = put(3, &etag)
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusPreconditionFailed || e.Type != client.ProblemPrecondition {
		t.Errorf("If-Match with a replaced ETag: err = %v, want a 412", err)
	}
	if second.JSON200.Items[0].Quantity != 2 {
		t.Errorf("cart = %+v, want the quantity of the write that matched", second.JSON200.Items)
	}
}

// TestCheckoutWithAnIdempotencyKeyPlacesOneOrder: the same key answers the
// same order; another key finds the cart paid for.
func TestCheckoutWithAnIdempotencyKeyPlacesOneOrder(t *testing.T) {
	c := startShop(t)
	tok := devToken(t, c, "olga")
	if _, err := client.OK(c.PutCartItemWithResponse(t.Context(), someProduct(t, c).ID, nil, client.CartItemRequest{Quantity: 2}, client.Bearer(tok))); err != nil {
		t.Fatal(err)
	}
	key := client.NewIdempotencyKey()
	if !regexp.MustCompile(`^[!"$-.0->@-\[\]-~]{1,255}$`).MatchString(key) {
		t.Fatalf("key %q is not of the spec's Idempotency-Key pattern", key)
	}
	checkout := func(key string) (*client.CheckoutResponse, error) {
		return client.OK(c.CheckoutWithResponse(t.Context(), &client.CheckoutParams{IdempotencyKey: key}, client.CheckoutRequest{ShippingAddress: address, PaymentMethod: "pm_card_visa"}, client.Bearer(tok)))
	}
	first, err := checkout(key)
	if err != nil {
		t.Fatal(err)
	}
	again, err := checkout(key)
	if err != nil {
		t.Fatal(err)
	}
	if again.JSON201.ID != first.JSON201.ID || again.Headers201.Location != first.Headers201.Location {
		t.Errorf("replay = %s at %s, want %s at %s", again.JSON201.ID, again.Headers201.Location, first.JSON201.ID, first.Headers201.Location)
	}
	_, err = checkout(client.NewIdempotencyKey())
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Errorf("a second key = %v, want a 409: the cart is paid for", err)
	}
}

func TestSessionTokenOf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header http.Header
		token  string
		ok     bool
	}{
		{"absent: keep the token held", http.Header{}, "", false},
		{"empty: drop it", http.Header{"X-Session-Token": {""}}, "", true},
		{"a token", http.Header{"X-Session-Token": {"carts/0:-1#12"}}, "carts/0:-1#12", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			token, ok := client.SessionTokenOf(&http.Response{Header: tt.header})
			if token != tt.token || ok != tt.ok {
				t.Errorf("SessionTokenOf = %q, %v; want %q, %v", token, ok, tt.token, tt.ok)
			}
		})
	}
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }
