package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/reference-shop/shop/api/telemetry"
)

// surface is the whole HTTP surface, outermost layer first. The trace and
// the request's store.Meter exist before anything else runs
// (telemetry.Middleware); GET /metrics is served beside the API, outside
// its request log and CORS, unless it is served elsewhere; then the routes.
func (s *server) surface(d Deps) http.Handler {
	api := s.routes(d)
	if d.Telemetry == nil {
		return api // untraced, and no /metrics: tests, benchmarks
	}
	if d.MetricsElsewhere {
		return telemetry.Middleware(d.Telemetry)(api)
	}
	metrics := d.Telemetry.MetricsHandler()
	return telemetry.Middleware(d.Telemetry)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One comparison rather than a ServeMux in front of every request.
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			metrics.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}))
}

// routes is the API's route table. The request log reads the trace and
// the meter, so its line carries the trace id and the cost; a refused
// CORS preflight is still logged. Every /v1 response says what it cost
// (withCost); user data is always keyed by the token's sub.
func (s *server) routes(d Deps) http.Handler {
	r := chi.NewRouter()
	r.Use(telemetry.RequestLog(s.log), telemetry.CORS(d.CORSOrigins), withContext(s.log, d.RequestTimeout), withRecover)
	// HEAD wherever GET is served, as HTTP asks (RFC 9110 §9.3.2): the
	// GET's handler answers, and net/http sends its headers without the
	// body (headAsGet).
	r.Use(headAsGet)
	r.NotFound(handleNotFound())
	r.MethodNotAllowed(handleMethodNotAllowed())
	r.Get("/healthz", handleHealth())
	r.Get("/readyz", handleReady(d.Ready))
	r.Get("/openapi.yaml", handleSpec())

	r.Route("/v1", func(r chi.Router) {
		// Recovered inside withCost too, so a 500 still says what it cost.
		r.Use(withCost(d.ChargesEstimated), withRecover)
		r.Use(withBearer(s.secret, s.now), rateLimit(d.RateLimit), withQuery, withSession(sessions{
			seal: newSessionSeal(s.secret), store: d.SessionTokens, stamp: d.Cache != nil, now: s.now,
		}))
		r.NotFound(handleNotFound())
		r.MethodNotAllowed(handleMethodNotAllowed())

		// Public screens.
		// The hot catalog screens go through the read cache when it is on
		// (cached.go).
		r.Get("/categories", cached(d.Cache, categoriesKey, handleCategories(s.repos.Products, s.renders)))
		r.Get("/categories/{categoryId}/products", cached(d.Cache, categoryPageKey, handleCategoryPage(s.repos.ProductSummaries, s.repos.Products, s.renders)))
		r.Get("/search", handleSearch(s.repos.Search, s.renders))
		r.Get("/products/{productId}", cached(d.Cache, productKey, handleProduct(s.repos.Products, s.rendered)))
		r.Get("/products/{productId}/reviews", handleReviews(s.repos.Reviews))
		r.Get("/products/{productId}/image.svg", handleProductImage(s.repos.Products))
		if d.DevMode {
			r.Post("/dev/token", handleDevToken(s.secret, s.now))
		}

		// Customer routes: a valid Bearer token.
		r.Group(func(r chi.Router) {
			r.Use(authenticate)
			r.Post("/products/{productId}/reviews", handleReviewCreate(s.writes))
			r.Get("/cart", handleCartGet(s.writes, s.renders))
			r.Put("/cart/items/{productId}", handleCartLine(s.writes.SetCartLine))
			r.Post("/cart/items/{productId}", handleCartLine(s.writes.AddCartLine))
			r.Delete("/cart/items/{productId}", handleCartDelete(s.writes))
			r.Post("/checkout", handleCheckout(s.writes))
			r.Get("/me/summary", handleSummary(s.repos.Orders, s.renders))
			r.Get("/orders", handleOrders(s.repos.Orders, s.renders))
			r.Get("/orders/{orderId}", handleOrder(s.repos.Orders, s.renders))
			r.Post("/orders/{orderId}/cancel", handleOrderCancel(s.writes))

			// Admin routes: the admin role.
			r.Group(func(r chi.Router) {
				r.Use(requireAdmin)
				r.Post("/products", handleProductCreate(s.writes))
				r.Patch("/products/{productId}", handleProductPatch(s.writes))
				r.Delete("/products/{productId}", handleProductDelete(s.writes))
				r.Get("/admin/products/{productId}/stock", handleStockGet(s.repos.Inventory))
				r.Put("/admin/products/{productId}/stock", handleStockPut(s.writes))
				r.Get("/admin/products/{productId}/stock/shards", handleShardsGet(s.repos.Inventory))
				r.Put("/admin/products/{productId}/stock/shards", handleShardsPut(s.writes))
				r.Put("/categories/{categoryId}", handleCategoryPut(s.writes))
				r.Get("/admin/orders", handleAdminOrders(s.repos.OrderSummaries, s.now))
				r.Patch("/admin/orders/{userId}/{orderId}", handleAdminOrderPatch(s.writes))
				r.Get("/admin/feeds", handleFeeds(d.Feeds))
				r.Get("/admin/throughput", handleThroughput(d.Throughput))
				r.Post("/admin/webhooks", handleWebhookCreate(s.webhooks, d.Webhooks, s.now))
				r.Get("/admin/webhooks", handleWebhookList(s.webhooks, s.now))
				r.Get("/admin/webhooks/{subscriptionId}", handleWebhookGet(s.webhooks, s.now))
				r.Patch("/admin/webhooks/{subscriptionId}", handleWebhookPatch(s.webhooks, d.Webhooks, s.now))
				r.Delete("/admin/webhooks/{subscriptionId}", handleWebhookDelete(s.webhooks))
				r.Post("/admin/webhooks/{subscriptionId}/rotate-secret", handleWebhookRotate(s.webhooks, s.now))
				r.Get("/admin/webhooks/{subscriptionId}/deliveries", handleWebhookDeliveries(s.webhooks))
				r.Post("/admin/webhooks/{subscriptionId}/deliveries/{deliveryId}/redeliver", handleWebhookRedeliver(s.webhooks, s.now))
			})
		})
	})

	if d.Web != nil {
		r.Handle("/*", d.Web)
	}
	return r
}
