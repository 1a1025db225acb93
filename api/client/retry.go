package client

import (
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds Retry: how many times a request is sent at most, and
// how long, waits included, it may take from its first send.
type RetryPolicy struct {
	// Attempts is the most sends of one request, the first included; 3 if
	// zero.
	Attempts int
	// Within is the most time from the first send to the last: a retry
	// whose wait would end later is not made and the 429 or 503 is
	// answered. 30 s if zero.
	Within time.Duration
	// Wait is the wait when the answer has no Retry-After; 1 s if zero.
	Wait time.Duration
}

// Retry sends requests through d and sends one again when it is answered
// 429 Too Many Requests or 503 Service Unavailable, after the answer's
// Retry-After (seconds or an HTTP date; p.Wait without one), as long as
// p allows. It retries only a request that is safe to send twice: a GET
// or HEAD, or one with an Idempotency-Key (the shop answers a checkout
// sent again with its key with the same order). Any other request, a POST
// without a key above all, is sent once: the shop may have acted on it.
// The wait ends early, with the context's error, when the request's
// context is done. Once p's bound is reached, the last answer is returned
// as it came, for OK to make an *Error of.
func Retry(d HttpRequestDoer, p RetryPolicy) HttpRequestDoer {
	if p.Attempts <= 0 {
		p.Attempts = 3
	}
	if p.Within <= 0 {
		p.Within = 30 * time.Second
	}
	if p.Wait <= 0 {
		p.Wait = time.Second
	}
	return doerFunc(func(req *http.Request) (*http.Response, error) {
		start := now()
		for attempt := 1; ; attempt++ {
			r, err := d.Do(req)
			if err != nil || attempt >= p.Attempts || !retryable(r.StatusCode, req) {
				return r, err
			}
			wait, ok := RetryAfterOf(r)
			if !ok {
				wait = p.Wait
			}
			if now().Add(wait).Sub(start) > p.Within {
				return r, nil
			}
			next := req.Clone(req.Context())
			if req.Body != nil && req.Body != http.NoBody {
				if next.Body, err = req.GetBody(); err != nil {
					return r, nil
				}
			}
			// The answer is dropped: read it to the end so that its
			// connection serves the retry.
			io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
			r.Body.Close()
			if err := sleep(req.Context(), wait); err != nil {
				return nil, err
			}
			req = next
		}
	})
}

// WithRetry makes a client's calls Retry with p. It wraps the
// HttpRequestDoer given so far, so it comes after any WithHTTPClient.
func WithRetry(p RetryPolicy) ClientOption {
	return func(c *Client) error {
		if c.Client == nil {
			c.Client = &http.Client{}
		}
		c.Client = Retry(c.Client, p)
		return nil
	}
}

// retryable reports whether an answer of status to req may be retried:
// a 429 or 503 to a request safe to send again, whose body (if any) can be
// sent again.
func retryable(status int, req *http.Request) bool {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		return true
	}
	return req.Header.Get("Idempotency-Key") != ""
}

// RetryAfterOf reads a response's Retry-After: seconds, or an HTTP date
// (the wait until then, 0 for a date past). ok is false without one, or
// with one neither form reads.
func RetryAfterOf(r *http.Response) (wait time.Duration, ok bool) {
	v := strings.TrimSpace(r.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0, false
		}
		// More seconds than a Duration holds (about 292 years) would
		// overflow into a negative wait: such an answer means "not soon".
		if s > int(math.MaxInt64/time.Second) {
			return math.MaxInt64, true
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now()), 0), true
}

// now and sleep are the clock Retry reads and waits on; tests replace
// them.
var (
	now   = time.Now
	sleep = func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
)
