package readcache

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// changedDoc is what a change says about the cached screens it touches.
type changedDoc struct {
	ID         string `json:"id"`
	CategoryID string `json:"categoryId"`
}

// Changed drops the entries a changed document of container touches:
//   - products: the categories index ("categories") changes the home page
//     and every category's pages (its recount follows every product that
//     joined or left a category, whose summary delete is not on the feed);
//     a product changes its page;
//   - productsByCategory: a summary changes its category's pages.
func (c *Cache) Changed(container string, doc []byte) {
	var d changedDoc
	if json.Unmarshal(doc, &d) != nil {
		return
	}
	switch {
	case container == store.ProductsContainer && d.ID == domain.CategoriesID:
		c.Invalidate("categories")
		c.Invalidate("category/")
	case container == store.ProductsContainer:
		c.Invalidate("product/" + d.ID)
	case container == store.ProductsByCategoryContainer:
		c.Invalidate("category/" + d.CategoryID)
	}
}

// Follow follows the change feed of the containers the cached screens
// read with follow, and hands each change to Changed, in the background
// until ctx ends. follow is changefeed.Follow (positions of this process
// alone, so every instance drops its own entries), which cmd/shop passes
// in: the cache, which the handlers consult, knows nothing of the feed
// workers. Follow returns once the follower is placed: every change
// written after it is seen. st should be the raw store: the follower's
// reads are no request's.
func (c *Cache) Follow(ctx context.Context, st store.Store,
	follow func(ctx context.Context, watched store.Container, every time.Duration, handle func(items [][]byte)) error) error {
	for _, name := range []string{store.ProductsContainer, store.ProductsByCategoryContainer} {
		err := follow(ctx, st.Container(name), c.cfg.PollEvery, func(items [][]byte) {
			for _, doc := range items {
				c.Changed(name, doc)
			}
		})
		if err != nil {
			return fmt.Errorf("cache: follow %s: %w", name, err)
		}
	}
	return nil
}
