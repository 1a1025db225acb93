package api

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/httprate"

	"shop/domain"
)

// The API's two bounds on load live here: how many requests one caller
// may send (rateLimit) and how long one request may hold the store
// (withDeadline).

// RateLimit bounds how many /v1 requests one caller may send per Window.
// A caller with a valid token is its token's sub, so one user's burst
// never spends another user's budget, even behind the same address; an
// anonymous caller is its client address. Zero disables a limit.
type RateLimit struct {
	User   int           // requests per Window of one authenticated user
	Anon   int           // requests per Window of one client address without a token
	Window time.Duration // default 1 minute
}

// rateLimit returns the /v1 middleware enforcing rl: over the limit is a
// 429 problem with Retry-After, before any store call is made (so a
// throttled client costs no Request Units).
func rateLimit(rl RateLimit, secret []byte, now func() time.Time) func(http.Handler) http.Handler {
	if rl.User <= 0 && rl.Anon <= 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	if rl.Window <= 0 {
		rl.Window = time.Minute
	}
	// The subject is trusted only from a token whose signature checks: an
	// unverified sub would let a client pick a fresh budget per request.
	verify := tokenVerifier(secret, now)
	subject := func(r *http.Request) string {
		raw := bearerToken(r)
		if raw == "" {
			return ""
		}
		c, err := verify(raw)
		if err != nil {
			return ""
		}
		return c.Subject
	}
	limiter := func(n int) *httprate.RateLimiter {
		if n <= 0 {
			return nil
		}
		return httprate.NewRateLimiter(n, rl.Window,
			// Retry-After comes from the problem below; the X-RateLimit-*
			// headers tell a well-behaved client its budget.
			httprate.WithResponseHeaders(httprate.ResponseHeaders{
				Limit: "X-RateLimit-Limit", Remaining: "X-RateLimit-Remaining", Reset: "X-RateLimit-Reset",
			}),
			httprate.WithLimitHandler(func(w http.ResponseWriter, r *http.Request) {
				writeProblem(w, r, &domain.Error{Code: domain.ETOOMANY,
					Message: "too many requests: slow down and retry after the given seconds", RetryAfter: rl.Window})
			}),
		)
	}
	users, anon := limiter(rl.User), limiter(rl.Anon)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lim, key := anon, "addr:"+httprate.CanonicalizeIP(clientAddr(r))
			if sub := subject(r); sub != "" {
				lim, key = users, "user:"+sub
			}
			if lim != nil && lim.RespondOnLimit(w, r, key) {
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// withDeadline gives each request a deadline: a store call still running
// past it is abandoned (the adapters answer EUNAVAILABLE, Cosmos's SDK a
// timeout), so a throttled or hung store costs a client at most d before
// its 503, and the server's goroutines do not pile up behind it.
func withDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// clientAddr is the address of the connection's peer. X-Forwarded-For is
// not trusted: any client can set it to win a fresh budget per request.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
