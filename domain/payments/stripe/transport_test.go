package stripe_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/stripe"
)

// TestNoAnswerIsAnError: a connection dropped before Stripe answered is
// an error none of the port's (the call may or may not have taken
// effect), and it is not retried here: the caller retries with its key.
func TestNoAnswerIsAnError(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		panic(http.ErrAbortHandler) // close the connection, answer nothing
	}))
	t.Cleanup(srv.Close)
	p := stripe.New("sk_test_fake", stripe.WithBaseURL(srv.URL))
	_, err := p.Authorize(ctx, visa)
	wantRetryable(t, err)
	if got := calls.Load(); got != 1 {
		t.Errorf("the server was called %d times, want 1", got)
	}
}

// TestHTTPClientBoundsTheCall: the client given by WithHTTPClient bounds
// each call with its Timeout (DefaultTimeout unless given).
func TestHTTPClientBoundsTheCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(srv.Close)
	p := stripe.New("sk_test_fake", stripe.WithBaseURL(srv.URL),
		stripe.WithHTTPClient(&http.Client{Timeout: 50 * time.Millisecond}))
	_, err := p.Get(ctx, "pi_1")
	wantRetryable(t, err)
}

// wantRetryable checks that err is an error and none of the port's.
func wantRetryable(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error, want one")
	}
	for _, e := range []error{payments.ErrUnknownMethod, payments.ErrState, payments.ErrNotFound} {
		if errors.Is(err, e) {
			t.Errorf("error %v is %v, want none of the port's errors", err, e)
		}
	}
}
