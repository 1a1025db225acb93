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
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/tracing/azotel"

	"shop/domain"
	"shop/store"
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
		// Keyless (security-rbac): no key in config at all; the identity
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
	opts.Retry = policy.RetryOptions{
		MaxRetries:    int32(maxRetries),
		MaxRetryDelay: maxWait,
		ShouldRetry:   shouldRetry(maxWait),
	}
	opts.PerCallPolicies = append(opts.PerCallPolicies, stampStart{}, sessionPolicy{sess})
	if cfg.TracerProvider != nil {
		opts.TracingProvider = azotel.NewTracingProvider(cfg.TracerProvider, nil)
	}
	if cfg.InsecureSkipVerify {
		opts.Transport = &http.Client{Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // emulator's self-signed certificate, on request only
		}}
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

type startKey struct{}

// stampStart records when a call began, so shouldRetry can keep the total
// time spent waiting on 429s within the budget.
type stampStart struct{}

func (stampStart) Do(req *policy.Request) (*http.Response, error) {
	ctx := context.WithValue(req.Raw().Context(), startKey{}, time.Now())
	return req.WithContext(ctx).Next()
}

// shouldRetry retries throttled requests (429, and 449 "retry with") while
// the wait Cosmos asks for still fits in the budget. 408, 410 and 503 are
// left to the SDK's own Cosmos retry policy, which knows which are safe
// for writes; a transport error is not retried here for the same reason.
func shouldRetry(budget time.Duration) func(*http.Response, error) bool {
	return func(resp *http.Response, err error) bool {
		if err != nil || resp == nil {
			return false
		}
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != 449 {
			return false
		}
		if resp.Request == nil {
			return true
		}
		start, ok := resp.Request.Context().Value(startKey{}).(time.Time)
		if !ok {
			return true
		}
		return time.Since(start)+retryAfter(resp.Header) <= budget
	}
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
