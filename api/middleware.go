package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/httprate"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// The API's middleware, in the order routes.go installs it: the logger
// and the deadline (withContext) and the recovery around everything; then
// on /v1 what a request cost, who sent it (withBearer verifies the token,
// once), how many requests one caller may send (rateLimit) and the
// client's session token (withSession, session.go); and on the customer
// and admin routes that the caller is signed in (authenticate) and an
// admin (requireAdmin).

// scope is what the middleware learns of one request, for the handlers
// and the middleware inside: one context value for all of it, filled in
// place, so that a signed-in request costs one copy of the *http.Request
// here rather than one per fact (each copy is a few hundred bytes of
// garbage per request, and the cart screen is all small answers).
type scope struct {
	log    *slog.Logger // the server's logger, for writeProblem
	bearer bearer       // what the Bearer token proved (withBearer)
	query  url.Values   // the query string as withQuery parsed it (queryOf)
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	return s
}

// withContext gives each request its scope, with the server's logger for
// writeProblem (so handlers need not carry it), and a deadline d away
// (none when d is 0): a store call still running past it is abandoned
// (the adapters answer EUNAVAILABLE, Cosmos's SDK a timeout), so a
// throttled or hung store costs a client at most d before its 503, and
// the server's goroutines do not pile up behind it. Both go into one copy
// of the request.
func withContext(log *slog.Logger, d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := context.WithValue(r.Context(), scopeKey{}, &scope{log: log})
			if d > 0 {
				// Its timer starts only if something waits (deadline.go).
				dc := withLazyDeadline(ctx, time.Now().Add(d))
				defer dc.release()
				ctx = dc
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

func loggerFrom(ctx context.Context) *slog.Logger {
	if s := scopeFrom(ctx); s != nil && s.log != nil {
		return s.log
	}
	return slog.Default()
}

// headAsGet routes a HEAD request as the GET of its path, so the GET's
// handler answers it; net/http's ResponseWriter sends no body for a
// HEAD, whatever the handler writes. The shop declares no HEAD route of
// its own. (chi's middleware.GetHead asks the router first whether a HEAD
// route matches: the storefront's /* does for every path, and behind
// telemetry, whose routing context chi leaves without its router, it
// panicked.)
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			if rctx := chi.RouteContext(r.Context()); rctx != nil {
				rctx.RouteMethod = http.MethodGet
			}
		}
		next.ServeHTTP(w, r)
	})
}

// withRecover turns a handler's panic into a logged 500 problem instead of
// a dropped connection.
func withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeProblem(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// withCost puts a store.Meter in the request's context (or uses the one an
// outer middleware, the telemetry, put there) and writes what the request
// cost into its response headers: every /v1 response says how many store
// operations and Request Units it took (docs/workshop/08-measure-the-cost.md).
// estimated adds X-Request-Charge-Estimated: true, for a store whose
// charges are an estimate (Deps.ChargesEstimated).
func withCost(estimated bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := store.MeterFrom(r.Context())
			if m == nil {
				var ctx context.Context
				ctx, m = store.WithMeter(r.Context())
				r = r.WithContext(ctx)
			}
			cw := &costWriter{headerWriter: headerWriter{ResponseWriter: w}, m: m, estimated: estimated}
			cw.hook = cw
			next.ServeHTTP(cw, r)
			cw.flushHeader()
		})
	}
}

// costWriter writes what the request cost into its headers as they leave:
// a headerWriter that carries the meter itself, one allocation per
// request where a closure over it was a second.
type costWriter struct {
	headerWriter
	m         *store.Meter
	estimated bool
}

func (cw *costWriter) beforeHeader(h http.Header) {
	setCostHeaders(h, cw.m)
	if cw.estimated {
		h["X-Request-Charge-Estimated"] = chargeEstimated
	}
}

// chargeEstimated is the header's one value, shared: a full slice nobody
// writes into.
var chargeEstimated = []string{"true"}

// headerWriter calls its hook once, as the headers are about to leave
// (the first WriteHeader or Write): after the handler's last store call,
// so that a middleware can write what the request did into them.
type headerWriter struct {
	http.ResponseWriter
	hook  headerHook
	wrote bool
}

// headerHook is what a headerWriter calls: an interface, so that a writer
// can be its own hook (costWriter) with no closure to allocate.
type headerHook interface{ beforeHeader(http.Header) }

// hookFunc is a function as a headerHook.
type hookFunc func(http.Header)

func (f hookFunc) beforeHeader(h http.Header) { f(h) }

func beforeHeader(w http.ResponseWriter, before func(http.Header)) *headerWriter {
	return &headerWriter{ResponseWriter: w, hook: hookFunc(before)}
}

func (hw *headerWriter) WriteHeader(status int) {
	if !hw.wrote {
		hw.wrote = true
		hw.hook.beforeHeader(hw.Header())
	}
	hw.ResponseWriter.WriteHeader(status)
}

func (hw *headerWriter) Write(b []byte) (int, error) {
	if !hw.wrote {
		hw.WriteHeader(http.StatusOK)
	}
	return hw.ResponseWriter.Write(b)
}

// flushHeader writes a 200 with the headers when the handler wrote
// nothing at all.
func (hw *headerWriter) flushHeader() {
	if !hw.wrote {
		hw.WriteHeader(http.StatusOK)
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (hw *headerWriter) Unwrap() http.ResponseWriter { return hw.ResponseWriter }

func setCostHeaders(h http.Header, m *store.Meter) {
	ops, ru, nanos := m.Totals()
	charge := strconv.FormatFloat(ru, 'f', 2, 64)
	opWord := " ops, "
	if ops == 1 {
		opWord = " op, "
	}
	timing := "store;dur=" + strconv.FormatFloat(float64(nanos)/1e6, 'f', 2, 64) +
		`;desc="` + strconv.Itoa(ops) + opWord + charge + ` RU"`
	// A metric the handler wrote (the cache's, cached.go) goes first.
	if prev := h["Server-Timing"]; len(prev) > 0 && prev[0] != "" {
		timing = prev[0] + ", " + timing
	}
	// The three values share one array: an allocation, not three, on
	// every /v1 response. Each slice is full, so an Add elsewhere copies.
	v := [...]string{strconv.Itoa(ops), charge, timing}
	vs := v[:]
	h["X-Store-Operations"] = vs[0:1:1]
	h["X-Request-Charge"] = vs[1:2:2]
	h["Server-Timing"] = vs[2:3:3]
}

// bearer is what a request's Bearer token proved: withBearer verifies it
// once, and the rate limiter and authenticate both read the outcome.
type bearer struct {
	sent  bool          // the request carried a Bearer token
	token verifiedToken // what it proved, when err is nil
	err   error         // why the token is not valid
	// user is the caller, once authenticate has accepted the token: set
	// in place, so a signed-in request carries one context value, not two
	// (each a copy of the request).
	user *user
}

// subject is the sub of a valid token, or "".
func (b *bearer) subject() string {
	if !b.sent || b.err != nil {
		return ""
	}
	return b.token.claims.Subject
}

// bearerFrom is what the request's token proved: its scope's, or a
// request without a token for a request with no scope.
func bearerFrom(ctx context.Context) *bearer {
	if s := scopeFrom(ctx); s != nil {
		return &s.bearer
	}
	return &bearer{}
}

// withBearer verifies the request's Bearer token, if it carries one
// (tokenVerifier), and puts what it proved in the context. A request
// without it reads as one without a token.
func withBearer(secret []byte, now func() time.Time) func(http.Handler) http.Handler {
	verify := tokenVerifier(secret, now)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.Header.Values("Authorization")) > 1 {
				// Which one would count is a guess a proxy and the shop
				// could make differently: refuse, as for X-Session-Token.
				writeProblem(w, r, domain.Errorf(domain.EINVALID, "Authorization: send it once"))
				return
			}
			raw := bearerToken(r)
			if raw == "" {
				// No token: bearerFrom's zero value says so, with no copy
				// of the request.
				next.ServeHTTP(w, r)
				return
			}
			b := bearer{sent: true}
			b.token, b.err = verify(raw)
			if s := scopeFrom(r.Context()); s != nil {
				// In place: no copy of the request.
				s.bearer = b
			} else {
				r = r.WithContext(context.WithValue(r.Context(), scopeKey{}, &scope{bearer: b}))
			}
			next.ServeHTTP(w, r)
		})
	}
}

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
func rateLimit(rl RateLimit) func(http.Handler) http.Handler {
	if rl.User <= 0 && rl.Anon <= 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	if rl.Window <= 0 {
		rl.Window = time.Minute
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
			// The subject is trusted only from a token whose signature
			// checks (withBearer): an unverified sub would let a client
			// pick a fresh budget per request.
			if sub := bearerFrom(r.Context()).subject(); sub != "" {
				lim, key = users, "user:"+sub
			}
			if lim != nil && lim.RespondOnLimit(w, r, key) {
				return
			}
			next.ServeHTTP(w, r)
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

// noStore is the Cache-Control of every signed-in answer, one slice for
// all of them: a full slice nobody writes into (Header.Add appends, which
// copies it), so sharing it is safe and saves an allocation per request.
var noStore = []string{"no-store"}

// authenticate requires the valid Bearer token withBearer verified (HS256
// only, so alg:none and key-confusion tokens are refused; an expiry
// required) and a sub that is a valid id, because it becomes a partition
// key.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A signed-in answer is one user's data: no shared cache may
		// keep it (RFC 9111 §5.2.2.5).
		w.Header()["Cache-Control"] = noStore
		b := bearerFrom(r.Context())
		switch {
		case !b.sent:
			writeProblem(w, r, domain.Errorf(domain.EUNAUTHORIZED, "a Bearer token is required"))
			return
		case b.err != nil:
			writeProblem(w, r, domain.Errorf(domain.EUNAUTHORIZED, "the token is not valid or has expired"))
			return
		case b.token.caller == nil:
			// Signed, but not claims the shop accepts (accept).
			writeProblem(w, r, domain.Errorf(domain.EUNAUTHORIZED, "%s", b.token.refusal))
			return
		}
		b.user = b.token.caller
		next.ServeHTTP(w, r)
	})
}

// maxClaimText bounds a token's name and email, as the request bodies
// bound theirs.
const maxClaimText = 254

// claimText reports whether a token's name or email is text fit to store.
func claimText(s string) bool {
	return len(s) <= maxClaimText && cleanText(s, false)
}

// withQuery refuses a query string that does not parse: url.Query would
// silently drop the broken pair, and a page would answer from its start.
// What it parsed is the request's query for the handlers (queryOf): one
// parse per request, where each r.URL.Query() parses again (and a parse
// is a map: a search or category page made three).
func withQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			next.ServeHTTP(w, r)
			return
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeProblem(w, r, domain.Errorf(domain.EINVALID, "the query string is not valid: %v", err))
			return
		}
		if s := scopeFrom(r.Context()); s != nil {
			s.query = q
		}
		next.ServeHTTP(w, r)
	})
}

// queryOf is r's query string parsed: withQuery's parse when it ran, a
// parse of its own otherwise. Only read it: it is the request's.
func queryOf(r *http.Request) url.Values {
	if r.URL.RawQuery == "" {
		return nil
	}
	if s := scopeFrom(r.Context()); s != nil && s.query != nil {
		return s.query
	}
	return r.URL.Query()
}

// requireAdmin refuses a valid token without the admin role.
func requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !userFrom(r.Context()).Admin {
			writeProblem(w, r, domain.Errorf(domain.EFORBIDDEN, "this route needs the %s role", RoleAdmin))
			return
		}
		next.ServeHTTP(w, r)
	})
}
