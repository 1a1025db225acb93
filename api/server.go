// Package api is the shop's HTTP side: a chi router whose routes (routes.go)
// each render a screen from ONE store read, say what it cost, and are
// described exactly by openapi.yaml.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// FeedStatus reports the change-feed workers' state for GET /v1/admin/feeds.
type FeedStatus interface {
	// FeedStatus reports each processor's leases.
	FeedStatus(ctx context.Context) ([]changefeed.ProcessorStatus, error)
	// FanoutStats reports what the cart fan-out has cost so far.
	FanoutStats() repo.FanoutStats
}

// Deps is everything the API needs from the outside.
type Deps struct {
	// Store is the port the repositories of Writes are built on; the
	// readiness check (Ready nil) pings it.
	Store store.Store
	// Logger writes the request log and the causes of 500s (nil: discard).
	Logger  *slog.Logger
	Secret  []byte // HS256 key of the Bearer tokens
	DevMode bool   // enables POST /v1/dev/token
	Now     func() time.Time
	// Writes is the write protocols, over the process's one set of
	// repositories (Writes.Repos), which the handlers read through too.
	// Build them over store.Metered(Store): the cost headers add up what
	// the request's Meter records. Required.
	Writes *writes.Writes
	// Web, when set, is mounted at "/" (the sample frontend).
	Web http.Handler
	// Feeds, when set, answers GET /v1/admin/feeds.
	Feeds FeedStatus
	// Throughput, when set, answers GET /v1/admin/throughput: the store's
	// provisioned and spent Request Units per physical partition (the
	// embedded store reports them; Cosmos does not, through the port).
	Throughput store.ThroughputReporter
	// Ready reports whether the shop can serve (/readyz); nil pings the store.
	Ready func(context.Context) error
	// RateLimit bounds each caller's /v1 requests; the zero value
	// imposes no limit (tests, benchmarks).
	RateLimit RateLimit
	// RequestTimeout bounds each /v1 request's store calls: past it they
	// are abandoned and the answer is a 503 (0: no deadline of its own).
	RequestTimeout time.Duration
	// Telemetry, when set, traces and measures every request and serves
	// GET /metrics; nil leaves the API untraced (tests, benchmarks).
	Telemetry *telemetry.Telemetry
	// MetricsElsewhere says /metrics is served on a listener of its own
	// (shop serve's SHOP_METRICS_ADDR), not beside the API.
	MetricsElsewhere bool
	// CORSOrigins are the other origins a browser may call the API from
	// (telemetry.CORS); none: same-origin only.
	CORSOrigins []string
	// Cache, when set, serves the home page, the category pages and the
	// product pages from this process's memory (readcache.Cache); the
	// caller keeps it fresh (its Follow). Nil: every visit reads the store.
	Cache ReadCache
	// SessionTokens says the store keeps session tokens (Cosmos): each
	// request then carries a store.Session, which X-Session-Token fills
	// and reports (withSession). The embedded store is strongly
	// consistent and issues none, so its requests skip the carrying.
	SessionTokens bool
	// ChargesEstimated says the store's Request Units are an estimate
	// (the embedded store's model, store/embedded/charge.go), not a charge
	// the database reported: every /v1 response then says so in
	// X-Request-Charge-Estimated, so a client labels the figure honestly.
	ChargesEstimated bool
	// Webhooks is what a subscription's URL may name (webhooks.Policy.Check):
	// the policy the dispatcher calls receivers under, so the admin API
	// takes no URL the dispatcher would refuse and refuses none it would
	// call. The zero value, as in production: https only, and no address
	// of the shop's own network. AllowInsecure and AllowPrivate are for a
	// receiver on a developer's machine or network (shop serve turns them
	// on in dev mode on loopback).
	Webhooks webhooks.Policy
}

// server holds what the handlers share: the repositories built once over
// the metered store, and the write protocols over them.
type server struct {
	repos  *repo.Set
	writes *writes.Writes
	log    *slog.Logger
	secret []byte
	now    func() time.Time
	// rendered is the product page's cache of rendered bodies.
	rendered *renderCache
	// renders are the other screens' renders of the documents they show.
	renders *renders
	// webhooks is the subscriptions and their deliveries.
	webhooks *repo.Webhooks
}

// NewServer returns the shop's HTTP handler: its whole surface (routes.go).
func NewServer(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Ready == nil {
		d.Ready = d.Store.Ping
	}
	if d.Writes == nil {
		panic("api: NewServer needs Deps.Writes")
	}
	s := &server{
		repos:  d.Writes.Repos(),
		writes: d.Writes,
		log:    d.Logger,
		secret: d.Secret,
		now:    d.Now,

		rendered: newRenderCache(renderCacheEntries, renderCacheBytes),
		renders:  newRenders(rendersEntries, rendersBytes),
		webhooks: d.Writes.Repos().Webhooks,
	}
	return s.surface(d)
}
