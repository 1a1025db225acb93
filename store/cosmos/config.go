package cosmos

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/domain"
)

// EmulatorKey is the Cosmos DB emulator's well-known account key. It is
// published by Microsoft and grants nothing on a real account; seeing it
// is how ConfigFromEnv recognises the emulator.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Defaults of the retry budget for throttled (429) requests.
const (
	DefaultMaxRetries429 = 9
	DefaultMaxRetryWait  = 30 * time.Second
)

// Config says how to reach an account. Exactly one way to authenticate is
// used: ConnectionString, or Endpoint with Key, or Endpoint with
// UseEntraID (keyless: the identity needs the "Cosmos DB Built-in Data
// Contributor" role on the account).
type Config struct {
	Endpoint         string
	Key              string
	ConnectionString string
	// Database is the database the store's containers live in.
	Database string
	// UseEntraID authenticates with azidentity.DefaultAzureCredential
	// (managed identity, workload identity, az login, ...) instead of a key.
	UseEntraID bool
	// InsecureSkipVerify turns off TLS certificate checks: only for the
	// emulator in https mode, and only when explicitly asked.
	InsecureSkipVerify bool
	// Emulator says the endpoint is the Cosmos Linux emulator (vNext). The
	// store then pins every request to Endpoint (the emulator advertises
	// its own host name, wrong behind a port mapping) and does not try to
	// replace indexing policies, which that emulator does not implement.
	Emulator bool
	// MaxRetries429 bounds how often one request is retried after a 429
	// or 449 (default DefaultMaxRetries429; negative: never).
	MaxRetries429 int
	// MaxRetryWait bounds the whole time of one request that is throttled
	// (429) or told to retry (449): its tries and every wait between
	// them, the x-ms-retry-after-ms Cosmos names and the SDK's own
	// backoff alike; it ends at most one try past it (default
	// DefaultMaxRetryWait).
	MaxRetryWait time.Duration
	// Throughput is the autoscale maximum RU/s provisioned on the database
	// when migrations create it, shared by its containers. 0 provisions
	// nothing, which is what a serverless account needs; on an account
	// with provisioned throughput Cosmos then gives each container it
	// creates its default of 400 RU/s of manual throughput, billed per
	// container (ten containers: 4,000 RU/s). Containers never ask for
	// throughput of their own (TestThroughputOfCreatedContainers).
	Throughput int
	// TracerProvider, when set, receives the SDK's own spans (one per HTTP
	// call to Cosmos, retries included) through azotel, beneath the shop's
	// store spans.
	TracerProvider trace.TracerProvider
}

// ConfigFromEnv reads COSMOS_ENDPOINT, COSMOS_KEY, COSMOS_CONNECTION_STRING,
// COSMOS_DATABASE (default "shop"), COSMOS_USE_ENTRA_ID,
// COSMOS_INSECURE_SKIP_VERIFY, COSMOS_EMULATOR (implied by the emulator's
// well-known key) and COSMOS_AUTOSCALE_MAX_RU. It does not check that the
// result is usable: Open does.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Endpoint:         strings.TrimSpace(getenv("COSMOS_ENDPOINT")),
		Key:              strings.TrimSpace(getenv("COSMOS_KEY")),
		ConnectionString: strings.TrimSpace(getenv("COSMOS_CONNECTION_STRING")),
		Database:         strings.TrimSpace(getenv("COSMOS_DATABASE")),
		MaxRetries429:    DefaultMaxRetries429,
		MaxRetryWait:     DefaultMaxRetryWait,
	}
	if cfg.Database == "" {
		cfg.Database = "shop"
	}
	var err error
	flags := []struct {
		name string
		dst  *bool
	}{
		{"COSMOS_USE_ENTRA_ID", &cfg.UseEntraID},
		{"COSMOS_INSECURE_SKIP_VERIFY", &cfg.InsecureSkipVerify},
		{"COSMOS_EMULATOR", &cfg.Emulator},
	}
	for _, f := range flags {
		if *f.dst, err = envBool(getenv, f.name); err != nil {
			return Config{}, err
		}
	}
	if cfg.Key == EmulatorKey || strings.Contains(cfg.ConnectionString, EmulatorKey) {
		cfg.Emulator = true
	}
	if v := strings.TrimSpace(getenv("COSMOS_AUTOSCALE_MAX_RU")); v != "" {
		ru, err := strconv.Atoi(v)
		// Autoscale maxima start at 1000 RU/s and go in steps of 1000.
		if err != nil || ru < 0 || (ru > 0 && (ru < 1000 || ru%1000 != 0)) {
			return Config{}, domain.Errorf(domain.EINVALID, "COSMOS_AUTOSCALE_MAX_RU: want 0 or a multiple of 1000 from 1000, got %q", v)
		}
		cfg.Throughput = ru
	}
	return cfg, nil
}

func envBool(getenv func(string) string, name string) (bool, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, domain.Errorf(domain.EINVALID, "%s: want true/false or 1/0, got %q", name, v)
	}
	return b, nil
}

// validate checks the Config names exactly one way in, and returns the
// endpoint (parsed out of the connection string if need be).
func (c Config) validate() (string, error) {
	if c.Database == "" {
		return "", domain.Errorf(domain.EINVALID, "cosmos: no database name")
	}
	endpoint := c.Endpoint
	switch {
	case c.ConnectionString != "":
		if c.Key != "" || c.UseEntraID {
			return "", domain.Errorf(domain.EINVALID, "cosmos: set a connection string or an endpoint with a key or Entra ID, not both")
		}
		endpoint = connectionStringEndpoint(c.ConnectionString)
		if endpoint == "" {
			return "", domain.Errorf(domain.EINVALID, "cosmos: the connection string has no AccountEndpoint")
		}
	case c.Endpoint == "":
		return "", domain.Errorf(domain.EINVALID, "cosmos: no endpoint (COSMOS_ENDPOINT or COSMOS_CONNECTION_STRING)")
	case c.Key != "" && c.UseEntraID:
		return "", domain.Errorf(domain.EINVALID, "cosmos: set a key or Entra ID, not both")
	case c.Key == "" && !c.UseEntraID:
		return "", domain.Errorf(domain.EINVALID, "cosmos: no credentials: set COSMOS_KEY, or COSMOS_USE_ENTRA_ID=1 for keyless access")
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", domain.Errorf(domain.EINVALID, "cosmos: endpoint %q is not an http(s) URL", endpoint)
	}
	// Keys and tokens travel in headers: plain http is for the emulator only.
	if u.Scheme == "http" && !c.Emulator {
		return "", domain.Errorf(domain.EINVALID, "cosmos: plain http is only for the emulator (set COSMOS_EMULATOR=1)")
	}
	if c.Throughput < 0 {
		return "", domain.Errorf(domain.EINVALID, "cosmos: negative throughput")
	}
	return endpoint, nil
}

// connectionStringEndpoint returns the AccountEndpoint of a connection
// string "AccountEndpoint=...;AccountKey=...;".
func connectionStringEndpoint(cs string) string {
	for part := range strings.SplitSeq(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "AccountEndpoint") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (c Config) retryLimits() (int, time.Duration) {
	n, wait := c.MaxRetries429, c.MaxRetryWait
	if n == 0 {
		n = DefaultMaxRetries429
	}
	if wait <= 0 {
		wait = DefaultMaxRetryWait
	}
	return n, wait
}
