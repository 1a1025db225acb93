// Package cosmos implements the store port on Azure Cosmos DB for NoSQL
// with azcosmos v1.5.0: point operations with If-Match, partial document
// update, transactional batches, structured queries rendered to
// parameterized SQL, and the latest-version change feed per feed range.
//
// Nothing of the SDK leaves the package: items cross as JSON bytes, every
// error is a *domain.Error mapped from the status code in ONE table
// (errors.go), and every response reports its Request Units. The session
// tokens the SDK does not keep, the adapter does (sessions.go), so reads
// see the process's writes, and a client's (store.Session) on request.
package cosmos

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/tracing/azotel"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

var (
	_ store.Store     = (*Store)(nil)
	_ store.Container = (*Container)(nil)
)

// Store is one database of one account.
type Store struct {
	cfg    Config
	shared *sharedClient
	db     *azcosmos.DatabaseClient

	closeOnce sync.Once
}

// sharedClient is an azcosmos.Client, its session tokens and the Stores
// using it.
type sharedClient struct {
	key      string
	client   *azcosmos.Client
	sessions *sessions
	refs     int
}

// clients holds ONE azcosmos.Client per account and credential for the
// whole process (sdk-singleton-client: a client caches routing and
// connections; one per request would redo that every time). Stores of
// several databases on the same account share it.
var (
	clientsMu sync.Mutex
	clients   = map[string]*sharedClient{}
)

// Open connects to the account cfg names. It does not call the service:
// Ping does. Close the Store when done; the shared client is closed with
// the last Store using it.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	endpoint, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	key := clientKey(endpoint, cfg)

	clientsMu.Lock()
	defer clientsMu.Unlock()
	sc := clients[key]
	if sc == nil {
		sess := newSessions()
		c, err := newClient(endpoint, cfg, sess)
		if err != nil {
			return nil, err
		}
		sc = &sharedClient{key: key, client: c, sessions: sess}
		clients[key] = sc
	}
	db, err := sc.client.NewDatabase(cfg.Database)
	if err != nil {
		return nil, mapError("open database "+cfg.Database, err)
	}
	sc.refs++
	return &Store{cfg: cfg, shared: sc, db: db}, nil
}

// clientKey identifies an account and the credential used on it; the key
// itself is hashed so it never sits in a map key in clear.
func clientKey(endpoint string, cfg Config) string {
	cred := "entra"
	if !cfg.UseEntraID {
		sum := sha256.Sum256([]byte(cfg.Key + "\x00" + cfg.ConnectionString))
		cred = hex.EncodeToString(sum[:8])
	}
	return strings.Join([]string{endpoint, cred, boolKey(cfg.InsecureSkipVerify), boolKey(cfg.Emulator)}, "|")
}

func boolKey(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func newClient(endpoint string, cfg Config, sess *sessions) (*azcosmos.Client, error) {
	opts, err := clientOptions(endpoint, cfg, sess)
	if err != nil {
		return nil, err
	}
	var c *azcosmos.Client
	switch {
	case cfg.ConnectionString != "":
		c, err = azcosmos.NewClientFromConnectionString(cfg.ConnectionString, opts)
	case cfg.UseEntraID:
		// Keyless (security-managed-identity): no key in config at all; the identity
		// needs a data-plane role assignment on the account.
		cred, cerr := azidentity.NewDefaultAzureCredential(nil)
		if cerr != nil {
			return nil, domain.Errorf(domain.EINVALID, "cosmos: no Entra ID credential available: %v", cerr)
		}
		c, err = azcosmos.NewClient(endpoint, cred, opts)
	default:
		kc, kerr := azcosmos.NewKeyCredential(cfg.Key)
		if kerr != nil {
			return nil, domain.Errorf(domain.EINVALID, "cosmos: the key is not valid base64")
		}
		c, err = azcosmos.NewClientWithKey(endpoint, kc, opts)
	}
	if err != nil {
		return nil, domain.Errorf(domain.EINVALID, "cosmos: %v", err)
	}
	return c, nil
}

// clientOptions sets the retry budget for throttling, the session
// container (sessionPolicy) and, for the emulator, the transport details.
func clientOptions(endpoint string, cfg Config, sess *sessions) (*azcosmos.ClientOptions, error) {
	maxRetries, maxWait := cfg.retryLimits()
	opts := &azcosmos.ClientOptions{
		// Writes return the stored item: the port hands back _etag and _ts.
		EnableContentResponseOnWrite: true,
	}
	budget := retryBudget{budget: maxWait, delay: retryBackoff, maxDelay: maxWait, now: time.Now}
	opts.Retry = policy.RetryOptions{
		MaxRetries: int32(maxRetries),
		RetryDelay: budget.delay,
		// Also the longest x-ms-retry-after-ms the SDK waits: past it, it
		// gives up at once rather than sleep past the budget.
		MaxRetryDelay: budget.maxDelay,
		ShouldRetry:   budget.shouldRetry,
	}
	opts.PerCallPolicies = append(opts.PerCallPolicies, stampStart{budget.now}, sessionPolicy{sess})
	if cfg.TracerProvider != nil {
		opts.TracingProvider = azotel.NewTracingProvider(cfg.TracerProvider, nil)
	}
	var transport http.RoundTripper
	if cfg.InsecureSkipVerify {
		transport = &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // emulator's self-signed certificate, on request only
		}
	}
	if wrapTransport != nil {
		if transport == nil {
			transport = http.DefaultTransport
		}
		transport = wrapTransport(transport)
	}
	if transport != nil {
		opts.Transport = &http.Client{Transport: transport}
	}
	if cfg.Emulator {
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, domain.Errorf(domain.EINVALID, "cosmos: endpoint: %v", err)
		}
		opts.PerRetryPolicies = append(opts.PerRetryPolicies, pinHost(u.Host))
	}
	return opts, nil
}

// retryBackoff is the SDK's first wait before retrying a 449, or a 429
// that names no wait (RetryOptions.RetryDelay; it doubles with each try).
// A 449 is a concurrent write on the same item, over in milliseconds; the
// SDK's default of 800 ms would spend a 1 s budget on one retry.
const retryBackoff = 100 * time.Millisecond

// backoffJitter is the most azcore stretches a backoff by: it sleeps
// (2^try - 1) * RetryDelay times a random factor in [0.8, 1.3), at most
// MaxRetryDelay (runtime/policy_retry.go, calcDelay).
const backoffJitter = 1.3

type callKey struct{}

// call is one call through the pipeline: when it began, and how many of
// its tries the SDK's retry policy has asked about.
type call struct {
	start time.Time
	tries atomic.Int32
}

// wrapTransport, when set, wraps the HTTP transport of every client built
// from then on (http.DefaultTransport when the client would otherwise
// use azcore's own). Only tests set it: the wire check records what the
// adapter sends through it (TestContract, wirerecord_test.go).
var wrapTransport func(http.RoundTripper) http.RoundTripper

// stampStart records when a call began, so shouldRetry can keep the total
// time of its tries and waits within the budget. It runs once per call,
// before the SDK's retry policy.
type stampStart struct{ now func() time.Time }

func (p stampStart) Do(req *policy.Request) (*http.Response, error) {
	ctx := context.WithValue(req.Raw().Context(), callKey{}, &call{start: p.now()})
	return req.WithContext(ctx).Next()
}

// retryBudget bounds the whole time one call spends on throttled tries:
// the tries themselves and every wait between them, whether Cosmos named
// it (x-ms-retry-after-ms) or the SDK chose it (its exponential backoff).
type retryBudget struct {
	budget   time.Duration
	delay    time.Duration // RetryOptions.RetryDelay
	maxDelay time.Duration // RetryOptions.MaxRetryDelay
	now      func() time.Time
}

// shouldRetry retries throttled requests (429, and 449 "retry with") while
// the time spent so far plus the longest wait the SDK may sleep before
// the next try still fits in the budget; so a call ends at most one
// try's duration past it. 408, 410 and 503 are left to the SDK's own
// Cosmos retry policy, which knows which are safe for writes; a transport
// error is not retried here for the same reason.
//
// The SDK's retry policy calls it once per try, in order, with that try's
// response, and sleeps only after it said yes: the count of calls is the
// try the SDK's backoff is computed for.
func (b retryBudget) shouldRetry(resp *http.Response, err error) bool {
	if err != nil || resp == nil {
		return false
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != 449 {
		return false
	}
	var elapsed time.Duration
	try := int32(1)
	if resp.Request != nil {
		if c, ok := resp.Request.Context().Value(callKey{}).(*call); ok {
			elapsed = b.now().Sub(c.start)
			try = c.tries.Add(1)
		}
	}
	return elapsed+b.nextWait(resp.Header, try) <= b.budget
}

// nextWait is the longest the SDK sleeps after try: the wait the
// response names, as azcore reads it (sdkRetryAfter), else the ceiling
// of its backoff for that try.
func (b retryBudget) nextWait(h http.Header, try int32) time.Duration {
	if d := sdkRetryAfter(h); d > 0 {
		return d
	}
	if try >= 32 {
		return b.maxDelay
	}
	d := time.Duration(float64(time.Duration(int64(1)<<try-1)*b.delay) * backoffJitter)
	if d < 0 || d > b.maxDelay {
		return b.maxDelay
	}
	return d
}

// sdkRetryAfter is the wait azcore takes from a response
// (internal/shared.RetryAfter): retry-after-ms, x-ms-retry-after-ms, then
// Retry-After in seconds or as an HTTP date; whole numbers only, so
// "12.5" names no wait and the backoff applies.
func sdkRetryAfter(h http.Header) time.Duration {
	for _, ms := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if n, err := strconv.Atoi(h.Get(ms)); err == nil && n > 0 {
			return time.Duration(n) * time.Millisecond
		}
	}
	v := h.Get("Retry-After")
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// pinHost sends every request to host. The emulator advertises its
// gateway as localhost:8081 (GATEWAY_PUBLIC_ENDPOINT), which is wrong as
// soon as its port is mapped elsewhere, as testcontainers does.
type pinHost string

func (h pinHost) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Host = string(h)
	req.Raw().URL.Host = string(h)
	return req.Next()
}

// Container returns the named container; a missing one answers ENOTFOUND
// on first use.
func (s *Store) Container(name string) store.Container {
	c, err := s.db.NewContainer(name)
	return &Container{name: name, c: c, err: err, store: s}
}

// Ping reads the database: it proves the endpoint answers and the
// credentials are accepted. A missing database is fine here (migrate
// creates it); CheckContainers says what is missing.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.db.Read(ctx, nil)
	if err != nil && domain.IsCode(mapError("", err), domain.ENOTFOUND) {
		return nil
	}
	return mapError("ping database "+s.cfg.Database, err)
}

// Keyless reports whether the store signs in with Entra ID, whose
// data-plane roles cannot create or change containers.
func (s *Store) Keyless() bool { return s.cfg.UseEntraID }

// CheckContainers reports, as one ENOTFOUND, every container of defs that
// does not exist, and which command creates them. `shop serve` calls it
// at start so a missing migration fails fast and says what to do.
func (s *Store) CheckContainers(ctx context.Context, defs []store.ContainerDef) error {
	var missing []string
	for _, def := range defs {
		c, err := s.db.NewContainer(def.ID)
		if err != nil {
			return mapError("container "+def.ID, err)
		}
		if _, err := c.Read(ctx, nil); err != nil {
			mapped := mapError("read container "+def.ID, err)
			if !domain.IsCode(mapped, domain.ENOTFOUND) {
				return mapped
			}
			missing = append(missing, def.ID)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		how := "run `shop migrate` to create them"
		if s.cfg.UseEntraID {
			// Keyless, `shop migrate` cannot create them either.
			how = fmt.Sprintf("Entra ID data-plane roles cannot create containers: the account's owner provisions them "+
				"from `shop containers -database %s` (Bicep or az commands; docs/cosmos.md, section 2)", s.cfg.Database)
		}
		return domain.Errorf(domain.ENOTFOUND, "database %q lacks container(s) %s: %s",
			s.cfg.Database, strings.Join(missing, ", "), how)
	}
	return nil
}

// Close releases the Store; the last Store of a client closes it.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		clientsMu.Lock()
		defer clientsMu.Unlock()
		s.shared.refs--
		if s.shared.refs == 0 {
			s.shared.client.Close()
			delete(clients, s.shared.key)
		}
	})
	return nil
}

// DeleteDatabase drops the Store's database and everything in it. Tests
// use it to clean up the unique database each of them creates.
func (s *Store) DeleteDatabase(ctx context.Context) error {
	_, err := s.db.Delete(ctx, nil)
	if err != nil && !domain.IsCode(mapError("", err), domain.ENOTFOUND) {
		return mapError("delete database "+s.cfg.Database, err)
	}
	// A database created again under the name starts its LSNs over.
	s.shared.sessions.forgetDatabase(s.cfg.Database)
	return nil
}

// responseCharge converts the SDK's float32 charge.
func responseCharge(r azcosmos.Response) float64 { return float64(r.RequestCharge) }
