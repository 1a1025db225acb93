package cosmos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
)

// responseError builds the *azcore.ResponseError the SDK returns for a
// status, with a body that must never reach a client.
func responseError(t *testing.T, status int, header http.Header) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://acct.documents.azure.com/dbs/shop/colls/carts/docs/u1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if header == nil {
		header = http.Header{}
	}
	resp := &http.Response{
		StatusCode: status,
		Status:     http.StatusText(status),
		Header:     header,
		Body:       io.NopCloser(strings.NewReader(`{"code":"Secret","message":"ActivityId: 1234, auth token sig=abc"}`)),
		Request:    req,
	}
	return runtime.NewResponseError(resp)
}

func TestMapErrorStatusTable(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     http.Header
		wantCode   string
		wantRetry  time.Duration
		wantInText string
	}{
		{"BadRequest", 400, nil, domain.EINVALID, 0, "malformed"},
		{"Unauthorized is our fault", 401, nil, domain.EINTERNAL, 0, "credentials"},
		{"Forbidden is our fault", 403, nil, domain.EINTERNAL, 0, "refused access"},
		{"Partition full is no refused access", 403, http.Header{"X-Ms-Substatus": {"1014"}}, domain.EPARTITIONFULL, 0, "20 GB"},
		{"NotFound", 404, nil, domain.ENOTFOUND, 0, "not found"},
		{"Read session not available is no missing item", 404, http.Header{"X-Ms-Substatus": {"1002"}}, domain.EUNAVAILABLE, 0, "caught up with this session"},
		{"RequestTimeout", 408, nil, domain.EUNAVAILABLE, 0, "timed out"},
		{"Conflict", 409, nil, domain.ECONFLICT, 0, "already exists"},
		{"Gone", 410, nil, domain.EUNAVAILABLE, 0, "retry"},
		{"PreconditionFailed", 412, nil, domain.EPRECONDITION, 0, "ETag"},
		{"TooLarge", 413, nil, domain.ETOOLARGE, 0, "2 MB"},
		{"Throttled with retry-after", 429, http.Header{"X-Ms-Retry-After-Ms": {"1500"}}, domain.EUNAVAILABLE, 1500 * time.Millisecond, "throttling"},
		{"Throttled without retry-after", 429, nil, domain.EUNAVAILABLE, retryAfterUnstated, "throttling"},
		{"RetryWith", 449, nil, domain.EUNAVAILABLE, retryAfterUnstated, "retry"},
		{"ServiceUnavailable", 503, nil, domain.EUNAVAILABLE, 0, "unavailable"},
		{"InternalServerError", 500, nil, domain.EINTERNAL, 0, "status 500"},
		{"Teapot", 418, nil, domain.EINTERNAL, 0, "status 418"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := mapError("read carts/u1", responseError(t, tc.status, tc.header))
			e, ok := errors.AsType[*domain.Error](err)
			if !ok {
				t.Fatalf("got %T %v, want *domain.Error", err, err)
			}
			if got, want := e.Code, tc.wantCode; got != want {
				t.Errorf("code = %q, want %q", got, want)
			}
			if got, want := e.RetryAfter, tc.wantRetry; got != want {
				t.Errorf("RetryAfter = %v, want %v", got, want)
			}
			if !strings.Contains(e.Message, tc.wantInText) || !strings.HasPrefix(e.Message, "read carts/u1: ") {
				t.Errorf("message = %q, want it to start with the op and mention %q", e.Message, tc.wantInText)
			}
			for _, leak := range []string{"ActivityId", "sig=", "Secret", "documents.azure.com"} {
				if strings.Contains(e.Message, leak) {
					t.Errorf("message %q leaks %q from the SDK", e.Message, leak)
				}
			}
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var _ net.Error = timeoutError{}

func TestMapErrorOtherErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil stays nil", nil, ""},
		{"domain error passes through", domain.Errorf(domain.EINVALID, "bad"), domain.EINVALID},
		{"wrapped response error", fmt.Errorf("query: %w", responseError(t, 404, nil)), domain.ENOTFOUND},
		{"deadline", context.DeadlineExceeded, domain.EUNAVAILABLE},
		{"canceled", fmt.Errorf("send: %w", context.Canceled), domain.EUNAVAILABLE},
		{"network", &net.OpError{Op: "dial", Err: timeoutError{}}, domain.EUNAVAILABLE},
		{"feed range after a split", fmt.Errorf("x: %w", azcosmos.ErrFeedRangeUnresolved), domain.EINVALID},
		{"anything else", errors.New("boom"), domain.EINTERNAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := mapError("op", tc.err)
			if got := domain.ErrorCode(err); got != tc.want {
				t.Errorf("code = %q (%v), want %q", got, err, tc.want)
			}
			if err != nil {
				if _, ok := errors.AsType[*domain.Error](err); !ok {
					t.Errorf("got %T, want *domain.Error", err)
				}
			}
		})
	}
}

func TestFailedCharge(t *testing.T) {
	err := responseError(t, 412, http.Header{"X-Ms-Request-Charge": {"1.24"}})
	if got, want := failedCharge(err), 1.24; got != want {
		t.Errorf("failedCharge = %v, want %v", got, want)
	}
	if got, want := failedCharge(errors.New("no response")), 0.0; got != want {
		t.Errorf("failedCharge without a response = %v, want %v", got, want)
	}
}

func TestShouldRetry(t *testing.T) {
	budget := 2 * time.Second
	now := time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC)
	b := retryBudget{budget: budget, delay: 100 * time.Millisecond, maxDelay: budget, now: func() time.Time { return now }}
	// respWith is the response to try tries+1 of a call begun at started.
	respWith := func(status int, retryAfterMS string, started time.Time, tries int32) *http.Response {
		c := &call{start: started}
		c.tries.Store(tries)
		req, _ := http.NewRequest(http.MethodPost, "http://localhost:8081/", nil)
		req = req.WithContext(context.WithValue(context.Background(), callKey{}, c))
		h := http.Header{}
		if retryAfterMS != "" {
			h.Set("x-ms-retry-after-ms", retryAfterMS)
		}
		return &http.Response{StatusCode: status, Header: h, Request: req}
	}
	tests := []struct {
		name string
		resp *http.Response
		err  error
		want bool
	}{
		{"429 within the budget", respWith(429, "500", now, 0), nil, true},
		{"429 asking for more than is left", respWith(429, "1500", now.Add(-time.Second), 0), nil, false},
		{"429 after the budget is spent", respWith(429, "10", now.Add(-3*time.Second), 0), nil, false},
		{"449 retry with", respWith(449, "", now, 0), nil, true},
		// The third try's backoff is at most 7 * 100 ms * 1.3 = 910 ms.
		{"449 whose backoff still fits", respWith(449, "", now.Add(-time.Second), 2), nil, true},
		{"449 whose backoff no longer fits", respWith(449, "", now.Add(-1200*time.Millisecond), 2), nil, false},
		// azcore reads whole milliseconds only: this is its backoff, 130 ms.
		{"429 naming a fractional wait", respWith(429, "1900.5", now.Add(-time.Second), 0), nil, true},
		{"503 is left to the Cosmos policy", respWith(503, "", now, 0), nil, false},
		{"412 is an answer", respWith(412, "", now, 0), nil, false},
		{"transport error is not retried", nil, errors.New("reset"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := b.shouldRetry(tc.resp, tc.err); got != tc.want {
				t.Errorf("shouldRetry = %v, want %v", got, tc.want)
			}
		})
	}
}

// Whole calls answered 449 each time, on a clock the test moves: each try
// takes the request's duration, and each wait the longest azcore's
// backoff may sleep (runtime/policy_retry.go: (2^try - 1) * RetryDelay,
// jittered by up to 1.3, at most MaxRetryDelay). Whatever the budget, the
// call ends at most one try past it, the default 30 s included (it could
// take about 46 s when the backoff was not counted).
func TestRetryBudgetBoundsWholeCalls(t *testing.T) {
	const maxRetries = DefaultMaxRetries429
	for _, budget := range []time.Duration{300 * time.Millisecond, time.Second, 5 * time.Second, DefaultMaxRetryWait} {
		for _, tryTook := range []time.Duration{time.Millisecond, 80 * time.Millisecond} {
			t.Run(fmt.Sprintf("%v/%v a try", budget, tryTook), func(t *testing.T) {
				start := time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC)
				clock := start
				b := retryBudget{budget: budget, delay: retryBackoff, maxDelay: budget, now: func() time.Time { return clock }}
				c := &call{start: start}
				req, _ := http.NewRequest(http.MethodGet, "http://localhost:8081/", nil)
				req = req.WithContext(context.WithValue(context.Background(), callKey{}, c))
				tries := 0
				for try := int32(1); ; try++ {
					clock = clock.Add(tryTook)
					tries++
					if !b.shouldRetry(&http.Response{StatusCode: 449, Header: http.Header{}, Request: req}, nil) || try == maxRetries+1 {
						break
					}
					wait := time.Duration(float64(int64(1)<<try-1) * float64(retryBackoff) * 1.3)
					clock = clock.Add(min(wait, budget))
				}
				took := clock.Sub(start)
				if took > budget+tryTook {
					t.Errorf("%d tries took %v, over the %v budget by more than a try", tries, took, budget)
				}
				if tries < 2 {
					t.Errorf("%d tries in %v: the first backoff fits, want a retry", tries, took)
				}
			})
		}
	}
}
