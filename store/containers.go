package store

// Container names: the repositories open these, and migrations defines
// each container under the same constant.
const (
	ProductsContainer           = "products"
	ReviewsContainer            = "reviews"
	CartsContainer              = "carts"
	OrdersContainer             = "orders"
	ProductsByCategoryContainer = "productsByCategory"
	ProductsByTermContainer     = "productsByTerm"
	OrdersByStatusContainer     = "ordersByStatus"
	LeasesContainer             = "leases"
	InventoryContainer          = "inventory"
	WebhooksContainer           = "webhooks"
)
