package stripe_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/stripe"
)

var ctx = context.Background()

// reply is what the fake Stripe answers one route with.
type reply struct {
	status int
	body   string
	header http.Header
}

// request is what the adapter sent.
type request struct {
	route  string // "POST /v1/payment_intents"
	form   url.Values
	header http.Header
}

// fakeStripe answers each route with a fixed reply, shaped as Stripe's
// API answers (a JSON object, or {"error": {...}} with its HTTP status),
// and records the requests.
type fakeStripe struct {
	t       *testing.T
	replies map[string]reply

	mu       sync.Mutex
	requests []request
}

// newFake starts a fake Stripe answering replies and returns the adapter
// on it.
func newFake(t *testing.T, replies map[string]reply) (*stripe.Provider, *fakeStripe) {
	t.Helper()
	f := &fakeStripe{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return stripe.New("sk_test_fake", stripe.WithBaseURL(srv.URL)), f
}

func (f *fakeStripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("%s: %v", route, err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, request{route: route, form: r.Form, header: r.Header.Clone()})
	f.mu.Unlock()
	rep, ok := f.replies[route]
	if !ok {
		f.t.Errorf("unexpected request %s", route)
		rep = reply{status: http.StatusInternalServerError, body: stripeError("api_error", "", "no reply for "+route, "")}
	}
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	w.WriteHeader(rep.status)
	fmt.Fprint(w, rep.body)
}

// sent returns the requests made, by route.
func (f *fakeStripe) sent() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.requests...)
}

func (f *fakeStripe) routes() []string {
	var out []string
	for _, r := range f.sent() {
		out = append(out, r.route)
	}
	return out
}

// paymentIntent is a PaymentIntent of order o1 as Stripe writes it; extra
// is more of its JSON fields (`"latest_charge": {...}`), or "".
func paymentIntent(id, status, extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"id": %q, "object": "payment_intent", "amount": 2599, "currency": "usd",
		"capture_method": "manual", "status": %q, "metadata": {"order_id": "o1"}%s}`, id, status, extra)
}

// stripeError is Stripe's error body; extra is more of the error's JSON
// fields (`"decline_code": "insufficient_funds"`), or "".
func stripeError(typ, code, message, extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"error": {"type": %q, "code": %q, "message": %q%s}}`, typ, code, message, extra)
}

// visa is the authorization the tests send.
var visa = payments.Authorization{OrderID: "o1", AmountCents: 2599, Currency: "usd",
	PaymentMethod: "pm_card_visa", Key: payments.Key("o1", payments.StepAuthorize)}
