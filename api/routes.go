package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// routes is the whole HTTP surface on one screen. Every /v1 response says
// what it cost (withCost); user data is always keyed by the token's sub.
func (s *server) routes(d Deps) http.Handler {
	r := chi.NewRouter()
	r.Use(withLogger(s.log), withRecover)
	r.NotFound(handleNotFound())
	r.MethodNotAllowed(handleMethodNotAllowed())
	r.Get("/healthz", handleHealth())
	r.Get("/readyz", handleReady(d.Ready))
	r.Get("/openapi.yaml", handleSpec())

	r.Route("/v1", func(r chi.Router) {
		// Recovered inside withCost too, so a 500 still says what it cost.
		r.Use(withCost, withRecover)
		r.Use(withBearer(s.secret, s.now), rateLimit(d.RateLimit), withDeadline(d.RequestTimeout))
		r.NotFound(handleNotFound())
		r.MethodNotAllowed(handleMethodNotAllowed())

		// Public screens.
		r.Get("/categories", handleCategories(s.repos.Products))
		r.Get("/categories/{categoryId}/products", handleCategoryPage(s.repos.ProductSummaries, s.repos.Products))
		r.Get("/products/{productId}", handleProduct(s.repos.Products))
		r.Get("/products/{productId}/reviews", handleReviews(s.repos.Reviews))
		if d.DevMode {
			r.Post("/dev/token", handleDevToken(s.secret, s.now))
		}

		// Customer routes: a valid Bearer token.
		r.Group(func(r chi.Router) {
			r.Use(authenticate)
			r.Post("/products/{productId}/reviews", handleReviewCreate(s.repos.Products, s.repos.Reviews, s.now))
			r.Get("/cart", handleCartGet(s.repos.Carts))
			r.Put("/cart/items/{productId}", handleCartPut(s.writes))
			r.Delete("/cart/items/{productId}", handleCartDelete(s.writes))
			r.Post("/checkout", handleCheckout(s.writes))
			r.Get("/me/summary", handleSummary(s.repos.Orders))
			r.Get("/orders", handleOrders(s.repos.Orders))
			r.Get("/orders/{orderId}", handleOrder(s.repos.Orders))
			r.Post("/orders/{orderId}/cancel", handleOrderCancel(s.writes))

			// Admin routes: the admin role.
			r.Group(func(r chi.Router) {
				r.Use(requireAdmin)
				r.Post("/products", handleProductCreate(s.repos.Products, s.now))
				r.Patch("/products/{productId}", handleProductPatch(s.repos.Products, s.now))
				r.Delete("/products/{productId}", handleProductDelete(s.repos.Products, s.now))
				r.Put("/categories/{categoryId}", handleCategoryPut(s.repos.Products, s.now))
				r.Get("/admin/orders", handleAdminOrders(s.repos.OrderSummaries, s.now))
				r.Patch("/admin/orders/{userId}/{orderId}", handleAdminOrderPatch(s.writes))
				r.Get("/admin/feeds", handleFeeds(d.Feeds))
			})
		})
	})

	if d.Web != nil {
		r.Handle("/*", d.Web)
	}
	return r
}
