package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reference-shop/shop/api/httpserver"
	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/webhooks"
)

// config is every setting of `shop serve`, from flags first, then the
// environment, then the default. The README's configuration table lists
// the same settings; keep them together.
type config struct {
	Addr       string
	DataDir    string
	Partitions int
	Throughput int // RU/s per container of the embedded store (0: unlimited)
	// ThroughputInventory provisions the inventory container alone, in
	// place of Throughput (0: inventory follows Throughput).
	ThroughputInventory int
	// Cache serves the hot catalog screens from memory, each entry at
	// most CacheMaxAge old (readcache.Cache).
	Cache       bool
	CacheMaxAge time.Duration
	// StatusBuckets is the partitions of one status on one day of
	// ordersByStatus, the same for every writer and reader.
	StatusBuckets  int
	Dev            bool
	DevSet         bool // --dev or SHOP_DEV was given, not defaulted
	Workers        bool
	Seed           bool
	Migrate        bool
	Secret         string
	CORSOrigins    []string
	ShutdownGrace  time.Duration
	ShutdownDrain  time.Duration
	RequestTimeout time.Duration
	RateUser       int // requests per minute of one token subject (0: no limit)
	RateAnon       int // requests per minute of one client address without a token
	LogLevel       string
	// PprofAddr serves net/http/pprof on its own listener ("": off).
	PprofAddr string
	// MetricsAddr serves /metrics on its own listener instead of beside
	// the API ("": beside the API).
	MetricsAddr string
	// CheckoutStall, CheckoutExpiry and SweepEvery time the sweeper
	// (feedworkers.Sweeper): an order whose checkout died is carried on
	// within CheckoutStall + SweepEvery, and expired after CheckoutExpiry.
	CheckoutStall  time.Duration
	CheckoutExpiry time.Duration
	SweepEvery     time.Duration
	// StripeKey selects the Stripe adapter (empty: the embedded payment
	// provider); StripeURL points it at another server (stripe-mock).
	StripeKey string
	StripeURL string
	Cosmos    bool // COSMOS_ENDPOINT or COSMOS_CONNECTION_STRING is set

	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request; MaxConns and MaxConnsPerAddr bound the connections
	// held open (httpserver.Limits; 0: no bound).
	IdleTimeout     time.Duration
	MaxConns        int
	MaxConnsPerAddr int

	// WebhooksAllowPrivate and WebhooksAllowInsecure loosen what the
	// webhook dispatcher may call (webhooks.Policy); nil: on in dev mode
	// on a loopback address (webhookPolicy), off otherwise.
	WebhooksAllowPrivate  *bool
	WebhooksAllowInsecure *bool
	// WebhooksRetryHorizon is how long the dispatcher tries a delivery
	// before it is dead (webhooks.RetryHorizon by default): shortened by
	// tests that watch deliveries die.
	WebhooksRetryHorizon time.Duration
}

// defaultAddr is the listen address when none is set.
const defaultAddr = "127.0.0.1:8080"

// setting is one row of the configuration table.
type setting struct {
	flag, env, def, help string
}

var settings = []setting{
	{"addr", "SHOP_ADDR", defaultAddr, "address to listen on (`:8080` or `0.0.0.0:8080`: every interface)"},
	{"data-dir", "SHOP_DATA_DIR", "./data", "directory of the embedded store (shop.db)"},
	{"partitions", "SHOP_PARTITIONS", "4", "simulated physical partitions of the embedded store (feed ranges)"},
	{"throughput", "SHOP_THROUGHPUT", "0", "provisioned Request Units per second of each container of the embedded store, split evenly over its physical partitions; a call over its partition's share of a second is refused as Cosmos throttles it (429), which the API answers 503 with Retry-After (0: unlimited)"},
	{"throughput-inventory", "SHOP_THROUGHPUT_INVENTORY", "0", "provisioned Request Units per second of the embedded store's `inventory` container alone, in place of SHOP_THROUGHPUT for it (as Cosmos provisions each container apart), split evenly over its physical partitions: with SHOP_THROUGHPUT at 0 only the stock is throttled, as `shop scale --flash-shards` measures it (0: inventory follows SHOP_THROUGHPUT)"},
	{"cache", "SHOP_CACHE", "on with Cosmos, off with the embedded store", "serve the home page, the category pages and the product pages from an in-process cache kept fresh by the change feed: a hit costs no Request Unit, so a popular page stops loading one partition per visit (off: every visit reads the store, as the workshop measures)"},
	{"cache-max-age", "SHOP_CACHE_MAX_AGE", readcache.DefaultMaxAge.String(), "the oldest a cached page may be when served, whatever the change feed says (the staleness bound; a change usually shows within half a second)"},
	{"status-buckets", "SHOP_STATUS_BUCKETS", strconv.Itoa(domain.DefaultStatusBuckets), "partitions of ordersByStatus per status and day: each checkout's summary goes to one (by its order id), the admin day query reads them all; every instance must use the same number, and `shop migrate` moves the summaries after a change (docs/order-views.md)"},
	{"dev", "SHOP_DEV", "on with the embedded store, off with Cosmos", "dev mode: POST /v1/dev/token issues tokens; on an address other than loopback only if set to true explicitly"},
	{"workers", "SHOP_WORKERS", "true", "run the change-feed workers in this process"},
	{"seed", "SHOP_SEED", "true", "load the sample catalog into an empty embedded store"},
	{"migrate", "SHOP_MIGRATE", "on with the embedded store, off with Cosmos", "create or update the containers at start"},
	{"jwt-secret", "SHOP_JWT_SECRET", "random, kept in jwt.secret in the data directory (required with Cosmos)", "HS256 secret of bearer tokens"},
	{"cors-origins", "SHOP_CORS_ORIGINS", "", "comma-separated origins allowed by CORS (none: same origin only)"},
	{"shutdown-grace", "SHOP_SHUTDOWN_GRACE", "15s", "how long in-flight requests get on SIGTERM"},
	{"request-timeout", "SHOP_REQUEST_TIMEOUT", "10s", "how long one API request's store calls may take before it is a 503 (0: no limit)"},
	{"shutdown-drain", "SHOP_SHUTDOWN_DRAIN", "0s", "on SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes (5s behind a load balancer)"},
	{"idle-timeout", "SHOP_IDLE_TIMEOUT", httpserver.DefaultIdleTimeout.String(), "how long a keep-alive connection may wait for its next request before the server closes it (behind a proxy that keeps connections to the shop: longer than the proxy's own idle timeout for them)"},
	{"max-conns", "SHOP_MAX_CONNS", "the open-file limit minus 256 (half of that with Cosmos), at most 16384", "connections held open at once; past it the connection idle the longest is closed, or the new one answered 503 when none is idle (0: no bound)"},
	{"max-conns-per-addr", "SHOP_MAX_CONNS_PER_ADDR", strconv.Itoa(httpserver.DefaultMaxConnsPerAddr), "connections of one client address (an IPv6 one by its /64); past it that address's connection idle the longest is closed, or the new one answered 503 (0: no bound; behind a proxy every connection has the proxy's address)"},
	{"checkout-stall", "SHOP_CHECKOUT_STALL", domain.CheckoutStall.String(), "how old an order still in progress (pending, reserved, authorized) must be before the sweeper carries it on: its checkout's request ended, or its instance died"},
	{"checkout-expiry", "SHOP_CHECKOUT_EXPIRY", domain.CheckoutExpiry.String(), "how old an order still in progress must be before the sweeper expires it (its units back in stock, its authorization voided); its cart stays claimed until then"},
	{"sweep-every", "SHOP_SWEEP_EVERY", feedworkers.DefaultSweepEvery.String(), "how often the sweeper looks for orders in progress: a dead checkout's order moves on within checkout-stall + sweep-every"},
	{"stripe-key", "SHOP_STRIPE_KEY", "", "a Stripe secret key (sk_test_…): checkouts authorize, and shipping captures, with Stripe PaymentIntents (none: the embedded payment provider, with Stripe's test cards)"},
	{"stripe-url", "SHOP_STRIPE_URL", "https://api.stripe.com", "the Stripe API's address (stripe-mock's, for wire tests)"},
	{"webhooks-allow-private", "SHOP_WEBHOOKS_ALLOW_PRIVATE", "on in dev mode on a loopback address, off otherwise", "let webhook requests reach loopback, private and link-local addresses (a receiver on this machine or this network); off, the dispatcher refuses them at dial time, so a subscription cannot make the shop call its own network (SSRF). For local development and tests only"},
	{"webhooks-allow-insecure", "SHOP_WEBHOOKS_ALLOW_INSECURE", "on in dev mode on a loopback address, off otherwise", "let webhook URLs be http:// (off: https:// only). For local development and tests only"},
	{"webhooks-retry-horizon", "SHOP_WEBHOOKS_RETRY_HORIZON", webhooks.RetryHorizon.String(), "how long a webhook delivery is retried (exponential backoff) before it is given up as dead, into the subscription's dead-letter list; counted from the event's delivery being created (or redelivered). For tests and development only: a receiver down for longer than this loses its deliveries to the dead-letter list"},
	{"log-level", "SHOP_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"metrics-addr", "SHOP_METRICS_ADDR", "", "address serving /metrics (Prometheus) on a listener of its own, reached by your scraper and not by the public; none: /metrics is served beside the API on SHOP_ADDR, to anyone who reaches it"},
	{"pprof-addr", "SHOP_PPROF_ADDR", "", "loopback address serving Go's profiles (/debug/pprof/) on a listener of their own, for shop bench and go tool pprof (none: off)"},
	{"rate-user", "SHOP_RATE_USER", "1200 with Cosmos, 0 with the embedded store", "requests per minute of one signed-in user (0: no limit)"},
	{"rate-anon", "SHOP_RATE_ANON", "600 with Cosmos, 0 with the embedded store", "requests per minute of one client address without a token (0: no limit)"},
}

// parseConfig reads flags from args and the rest from getenv.
func parseConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	vals := map[string]*string{}
	for _, s := range settings {
		vals[s.flag] = fs.String(s.flag, "", fmt.Sprintf("%s (env %s, default %s)", s.help, s.env, s.def))
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	get := func(flagName string) string {
		if v := *vals[flagName]; v != "" {
			return v
		}
		for _, s := range settings {
			if s.flag == flagName {
				return getenv(s.env)
			}
		}
		return ""
	}
	var c config
	var err error
	c.Cosmos = getenv("COSMOS_ENDPOINT") != "" || getenv("COSMOS_CONNECTION_STRING") != ""
	// Loopback by default: dev mode is on by default too, and its tokens
	// (admin ones included) must not be handed to the whole network.
	c.Addr = orDefault(get("addr"), defaultAddr)
	c.DataDir = orDefault(get("data-dir"), "./data")
	if c.Partitions, err = strconv.Atoi(orDefault(get("partitions"), "4")); err != nil || c.Partitions < 1 || c.Partitions > 64 {
		return c, fmt.Errorf("partitions: want a number from 1 to 64, got %q", get("partitions"))
	}
	if c.Throughput, err = strconv.Atoi(orDefault(get("throughput"), "0")); err != nil || c.Throughput < 0 {
		return c, fmt.Errorf("throughput: want Request Units per second, 0 for unlimited, got %q", get("throughput"))
	}
	if c.ThroughputInventory, err = strconv.Atoi(orDefault(get("throughput-inventory"), "0")); err != nil || c.ThroughputInventory < 0 {
		return c, fmt.Errorf("throughput-inventory: want Request Units per second, 0 to follow SHOP_THROUGHPUT, got %q", get("throughput-inventory"))
	}
	if err := c.checkThroughput(); err != nil {
		return c, err
	}
	if c.StatusBuckets, err = strconv.Atoi(orDefault(get("status-buckets"), strconv.Itoa(domain.DefaultStatusBuckets))); err != nil || c.StatusBuckets < 1 || c.StatusBuckets > domain.MaxStatusBuckets {
		return c, fmt.Errorf("status-buckets: want a number from 1 to %d, got %q", domain.MaxStatusBuckets, get("status-buckets"))
	}
	boolSetting := func(name string, def bool) (bool, error) {
		v := get(name)
		if v == "" {
			return def, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s: want true or false, got %q", name, v)
		}
		return b, nil
	}
	if c.Cache, err = boolSetting("cache", c.Cosmos); err != nil {
		return c, err
	}
	if c.CacheMaxAge, err = time.ParseDuration(orDefault(get("cache-max-age"), readcache.DefaultMaxAge.String())); err != nil || c.CacheMaxAge <= 0 {
		return c, fmt.Errorf("cache-max-age: want a duration above 0, got %q", get("cache-max-age"))
	}
	if c.Dev, err = boolSetting("dev", !c.Cosmos); err != nil {
		return c, err
	}
	c.DevSet = get("dev") != ""
	if c.Workers, err = boolSetting("workers", true); err != nil {
		return c, err
	}
	if c.Seed, err = boolSetting("seed", true); err != nil {
		return c, err
	}
	if c.Migrate, err = boolSetting("migrate", !c.Cosmos); err != nil {
		return c, err
	}
	c.Secret = get("jwt-secret")
	if o := get("cors-origins"); o != "" {
		for _, origin := range strings.Split(o, ",") {
			if origin = strings.TrimSpace(origin); origin != "" {
				c.CORSOrigins = append(c.CORSOrigins, origin)
			}
		}
	}
	if c.ShutdownGrace, err = time.ParseDuration(orDefault(get("shutdown-grace"), "15s")); err != nil {
		return c, fmt.Errorf("shutdown-grace: %v", err)
	}
	if c.RequestTimeout, err = time.ParseDuration(orDefault(get("request-timeout"), "10s")); err != nil {
		return c, fmt.Errorf("request-timeout: %v", err)
	}
	if c.ShutdownDrain, err = time.ParseDuration(orDefault(get("shutdown-drain"), "0s")); err != nil {
		return c, fmt.Errorf("shutdown-drain: %v", err)
	}
	if c.IdleTimeout, err = time.ParseDuration(orDefault(get("idle-timeout"), httpserver.DefaultIdleTimeout.String())); err != nil || c.IdleTimeout <= 0 {
		return c, fmt.Errorf("idle-timeout: want a duration above 0, got %q", get("idle-timeout"))
	}
	if c.MaxConns, err = strconv.Atoi(orDefault(get("max-conns"), strconv.Itoa(httpserver.DefaultMaxConns(httpserver.FDLimit(), c.Cosmos)))); err != nil || c.MaxConns < 0 {
		return c, fmt.Errorf("max-conns: want a number of connections, 0 for no bound, got %q", get("max-conns"))
	}
	if c.MaxConnsPerAddr, err = strconv.Atoi(orDefault(get("max-conns-per-addr"), strconv.Itoa(httpserver.DefaultMaxConnsPerAddr))); err != nil || c.MaxConnsPerAddr < 0 {
		return c, fmt.Errorf("max-conns-per-addr: want a number of connections, 0 for no bound, got %q", get("max-conns-per-addr"))
	}
	for _, b := range []struct {
		name string
		to   **bool
	}{{"webhooks-allow-private", &c.WebhooksAllowPrivate}, {"webhooks-allow-insecure", &c.WebhooksAllowInsecure}} {
		if get(b.name) == "" {
			continue
		}
		v, err := boolSetting(b.name, false)
		if err != nil {
			return c, err
		}
		*b.to = &v
	}
	c.LogLevel = orDefault(get("log-level"), "info")
	c.MetricsAddr = get("metrics-addr")
	if c.PprofAddr = get("pprof-addr"); c.PprofAddr != "" {
		// Profiles show the program's internals (and cost CPU while
		// taken): this machine only.
		host, _, err := net.SplitHostPort(c.PprofAddr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return c, fmt.Errorf("pprof-addr: want a loopback address such as 127.0.0.1:6060, got %q", c.PprofAddr)
		}
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
		def  time.Duration
	}{
		{"checkout-stall", &c.CheckoutStall, domain.CheckoutStall},
		{"checkout-expiry", &c.CheckoutExpiry, domain.CheckoutExpiry},
		{"sweep-every", &c.SweepEvery, feedworkers.DefaultSweepEvery},
		{"webhooks-retry-horizon", &c.WebhooksRetryHorizon, webhooks.RetryHorizon},
	} {
		if *d.to, err = time.ParseDuration(orDefault(get(d.name), d.def.String())); err != nil || *d.to <= 0 {
			return c, fmt.Errorf("%s: want a duration above 0, got %q", d.name, get(d.name))
		}
	}
	if c.WebhooksRetryHorizon > domain.EventRetention {
		// A pending delivery expires with its event (repo.PendingTTL).
		return c, fmt.Errorf("webhooks-retry-horizon: at most the events' retention, %v, got %v", domain.EventRetention, c.WebhooksRetryHorizon)
	}
	if c.CheckoutExpiry <= c.CheckoutStall {
		return c, fmt.Errorf("checkout-expiry (%v) must be longer than checkout-stall (%v)", c.CheckoutExpiry, c.CheckoutStall)
	}
	c.StripeKey, c.StripeURL = get("stripe-key"), orDefault(get("stripe-url"), "https://api.stripe.com")
	// Rate limits protect a shared deployment; on the embedded store (a
	// workshop, `shop bench --url` against a local shop) they are off.
	rateUser, rateAnon := "1200", "600"
	if !c.Cosmos {
		rateUser, rateAnon = "0", "0"
	}
	if c.RateUser, err = strconv.Atoi(orDefault(get("rate-user"), rateUser)); err != nil || c.RateUser < 0 {
		return c, fmt.Errorf("rate-user: want a number of requests per minute, 0 for no limit, got %q", get("rate-user"))
	}
	if c.RateAnon, err = strconv.Atoi(orDefault(get("rate-anon"), rateAnon)); err != nil || c.RateAnon < 0 {
		return c, fmt.Errorf("rate-anon: want a number of requests per minute, 0 for no limit, got %q", get("rate-anon"))
	}
	return c, nil
}

// maxPartitionThroughput is the most Request Units per second one physical
// partition of Cosmos serves: a container provisioned more has more
// partitions.
const maxPartitionThroughput = 10_000

// checkThroughput refuses a throughput Cosmos could not give the
// partitions set, and any throughput with Cosmos, whose containers are
// provisioned in the account: SHOP_THROUGHPUT and
// SHOP_THROUGHPUT_INVENTORY alike.
func (c config) checkThroughput() error {
	for _, t := range []struct {
		name string
		ru   int
	}{{"SHOP_THROUGHPUT", c.Throughput}, {"SHOP_THROUGHPUT_INVENTORY", c.ThroughputInventory}} {
		switch {
		case t.ru == 0:
		case c.Cosmos:
			return fmt.Errorf("throughput: %s throttles the embedded store; on Cosmos provision the containers' throughput in the account", t.name)
		case t.ru > maxPartitionThroughput*c.Partitions:
			return fmt.Errorf("throughput: %s=%d RU/s over %d partitions is more than the %d RU/s one physical partition serves on Cosmos; set SHOP_PARTITIONS to at least %d",
				t.name, t.ru, c.Partitions, maxPartitionThroughput, (t.ru+maxPartitionThroughput-1)/maxPartitionThroughput)
		}
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// secret returns the JWT secret: the configured one, or (embedded store
// only) a random one kept in the data directory so that tokens survive a
// restart.
func (c config) secret() ([]byte, error) {
	if c.Secret != "" {
		if len(c.Secret) < 32 {
			return nil, fmt.Errorf("SHOP_JWT_SECRET must be at least 32 characters")
		}
		return []byte(c.Secret), nil
	}
	if c.Cosmos {
		return nil, fmt.Errorf("SHOP_JWT_SECRET is required with Cosmos")
	}
	path := filepath.Join(c.DataDir, "jwt.secret")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b, nil
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	b := []byte(hex.EncodeToString(raw))
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	return b, nil
}
