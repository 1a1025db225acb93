// Package migrations holds the shop's containers as data (partition key,
// default TTL, indexing policy, unique keys) and applies them to a store.
// Applying twice changes nothing: EnsureContainer only acts on a difference.
package migrations

import (
	"context"
	"fmt"
	"io"

	"github.com/reference-shop/shop/store"
)

// Database is the name of the shop's database.
const Database = "shop"

func ttl(seconds int) *int { return &seconds }

// CartTTL is how long an untouched cart lives (30 days): abandoned carts
// expire by TTL instead of being deleted by a job (Cosmos time to live).
const CartTTL = 30 * 24 * 3600

// Containers are the shop's ten containers as data, named by the store
// package's constants (store.ProductsContainer, ...).
var Containers = []store.ContainerDef{
	{
		// Product page = point read by id (query-point-reads). Descriptions
		// and embedded reviews are never filtered on: excluding them from
		// the index makes every product write cheaper.
		ID:               store.ProductsContainer,
		PartitionKeyPath: "/id",
		DefaultTTL:       ttl(-1), // on, so a soft-deleted product can expire by its own ttl
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/description/?", "/topReviews/*", "/\"_etag\"/?"},
		},
	},
	{
		// The review history is unbounded: referenced, not embedded.
		// Newest first within one product's partition.
		ID:               store.ReviewsContainer,
		PartitionKeyPath: "/productId",
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/body/?", "/title/?", "/\"_etag\"/?"},
			CompositeIndexes: [][]store.CompositePath{
				{{Path: "/createdAt", Order: "descending"}, {Path: "/id", Order: "descending"}},
			},
		},
	},
	{
		// One cart per user, id = userId. productIds is indexed for the
		// price fan-out's ARRAY_CONTAINS; the lines themselves are not.
		ID:               store.CartsContainer,
		PartitionKeyPath: "/userId",
		DefaultTTL:       ttl(CartTTL),
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/productIds/[]/?", "/type/?", "/userId/?"},
			ExcludedPaths: []string{"/*"},
		},
	},
	{
		// Orders, idempotency records and the customer summary share the
		// user's partition so checkout commits them in one batch.
		ID:               store.OrdersContainer,
		PartitionKeyPath: "/userId",
		DefaultTTL:       ttl(-1), // idempotency records carry their own ttl
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/items/*", "/shippingAddress/*", "/customer/*", "/order/*", "/\"_etag\"/?"},
			// Order history: ORDER BY createdAt DESC, id DESC (ties by id),
			// the one ordered query of the container. A composite index
			// serves only the ORDER BY it matches exactly (index-composite)
			// and costs index terms on every order write, so there is no
			// other (store/cosmos TestEveryCompositeIndexServesAQuery).
			CompositeIndexes: [][]store.CompositePath{
				{{Path: "/createdAt", Order: "descending"}, {Path: "/id", Order: "descending"}},
			},
		},
	},
	{
		// A table per read pattern: the category page never fans out.
		// The attribute array (/attributes/[]/?, under /*) serves the
		// page's attribute filter (?size=M).
		ID:               store.ProductsByCategoryContainer,
		PartitionKeyPath: "/categoryId",
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/imageUrl/?", "/\"_etag\"/?"},
			CompositeIndexes: [][]store.CompositePath{
				{{Path: "/name", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
				{{Path: "/priceCents", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
				// The featured products of the home page (ProductSummaries.Best).
				{{Path: "/ratingScore", Order: "descending"}, {Path: "/id", Order: "descending"}},
			},
		},
	},
	{
		// Search: an inverted index, a table per search term. The product
		// copy is filtered only by type and terms and ordered by rank:
		// nothing else is indexed, so an entry costs few index terms to
		// write (index-exclude-unused). Tombstones and ledgers carry their
		// own ttl.
		ID:               store.ProductsByTermContainer,
		PartitionKeyPath: "/term",
		DefaultTTL:       ttl(-1),
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/type/?", "/terms/[]/?", "/rank/?"},
			ExcludedPaths: []string{"/*"},
			CompositeIndexes: [][]store.CompositePath{
				{{Path: "/rank", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
			},
		},
	},
	{
		// Synthetic key status:day spreads a four-valued status over many
		// partitions (partition-synthetic-keys).
		ID:               store.OrdersByStatusContainer,
		PartitionKeyPath: "/statusDay",
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/\"_etag\"/?"},
			CompositeIndexes: [][]store.CompositePath{
				{{Path: "/createdAt", Order: "descending"}, {Path: "/id", Order: "descending"}},
			},
		},
	},
	{
		// Each product's stock and the reservations that took from it
		// share the product's partition, so a take and its reservation
		// commit in one transactional batch. Only what the query of
		// held reservations (Inventory.Held) filters on is indexed.
		ID:               store.InventoryContainer,
		PartitionKeyPath: "/productId",
		DefaultTTL:       ttl(-1), // released reservations carry their own ttl
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/type/?", "/state/?", "/productId/?"},
			ExcludedPaths: []string{"/*"},
		},
	},
	{
		// Webhook subscriptions and their deliveries, one partition per
		// subscription (domain/webhooks.go); a delivery done or given up
		// carries its own ttl.
		ID:               store.WebhooksContainer,
		PartitionKeyPath: "/subscriptionId",
		DefaultTTL:       ttl(-1),
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/type/?", "/status/?", "/nextAttemptAt/?", "/subject/?", "/sequence/?", "/createdAt/?"},
			ExcludedPaths: []string{"/*"},
		},
	},
	{
		ID:               store.LeasesContainer,
		PartitionKeyPath: "/id",
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/\"_etag\"/?"},
		},
	},
}

// Apply ensures every container exists with its current definition and
// writes one line per container to log. Running it twice is a no-op.
func Apply(ctx context.Context, s store.Store, log io.Writer) error {
	for _, def := range Containers {
		changed, err := s.EnsureContainer(ctx, def)
		if err != nil {
			return fmt.Errorf("container %s: %w", def.ID, err)
		}
		state := "up to date"
		if changed {
			state = "created or updated"
		}
		fmt.Fprintf(log, "container %-20s pk %-12s %s\n", def.ID, def.PartitionKeyPath, state)
	}
	return nil
}
