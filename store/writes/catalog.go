package writes

import (
	"context"
	"errors"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// This file is the catalog's writes: the admin's product create, change
// and delete, a category's create or rename, and a customer's review.
// Each reads what it copies or checks and then writes, so each is one
// method here, and its handler only decodes, calls it and encodes. The
// costs are in store operations (X-Store-Operations) when nothing races;
// a lost race without If-Match reads and writes once more (repo.Retry).

// DeletedProductTTL is how long a soft-deleted product stays, in seconds,
// so the feed workers see the deleted=true version before TTL removes it.
const DeletedProductTTL = 7 * 24 * 3600

// AddProduct is the admin's product create (POST /v1/products): it reads
// the categories index for the product's categoryName copy
// (model-denormalize-reads), so the product page never needs a second
// read, stamps lastUpdated, and then runs CreateProduct with stock units
// available.
//
// Reads the categories index; writes the product and its stock. EINVALID
// if p.CategoryID is not in the index (nothing written), ECONFLICT if the
// id is taken (the stock not written). Cost: 4 (the index, the product's
// create, the stock's read and write); 1 when the category is unknown.
func (w *Writes) AddProduct(ctx context.Context, p domain.Product, stock int64, variantStock map[string]int64) (domain.Product, error) {
	name, err := w.categoryName(ctx, p.CategoryID)
	if err != nil {
		return domain.Product{}, err
	}
	p.CategoryName = name
	p.LastUpdated = w.now().UTC()
	if err := domain.ValidateVariants(p.Variants); err != nil {
		return domain.Product{}, err
	}
	return w.CreateProduct(ctx, p, stock, variantStock)
}

// UpdateProduct applies the admin's change to product id
// (domain.Product.Apply: a price change adds 1 to priceVersion, the
// version guard of every cart line copy the products feed then updates).
// ifMatch is the client's: a stale one is refused, never retried. A
// change of category first reads the categories index for the new
// categoryName copy, which the method fills in ch; the index is read
// before the product, so an unknown category is refused whether or not
// the product exists.
//
// Reads the categories index (a category change only) and the product;
// writes the product. EINVALID for an unknown category, ENOTFOUND for a
// missing or deleted product, EPRECONDITION for a stale ifMatch (or any
// ifMatch on a product that does not exist). Cost: 2
// (the product's read and replace), 3 with a category change, 1 when the
// category is unknown.
func (w *Writes) UpdateProduct(ctx context.Context, id string, ifMatch repo.Precondition, ch domain.ProductChange) (domain.Product, error) {
	if ch.CategoryID != nil {
		name, err := w.categoryName(ctx, *ch.CategoryID)
		if err != nil {
			return domain.Product{}, err
		}
		ch.CategoryName = &name
	}
	var (
		stocks  map[string]domain.Stock
		missing []string
	)
	if ch.Variants != nil {
		var err error
		if stocks, missing, err = w.variantStocks(ctx, id, *ch.Variants); err != nil {
			return domain.Product{}, err
		}
	}
	p, err := w.repos.Products.Update(ctx, id, ifMatch, func(p *domain.Product) error {
		if err := ch.Check(*p); err != nil {
			return err
		}
		p.Apply(ch, w.now())
		for _, s := range stocks {
			p.ApplyStock(s, w.now())
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	// The change stands: its new SKUs get their stock documents, at 0
	// units, as their copies say (sold out). Only now, so a refused
	// change leaves none behind. A SKU whose document is not written (a
	// crash here) sells nothing: a checkout counts it short
	// (checkStock), until the admin counts its stock.
	for _, sku := range missing {
		if err := repo.Persist(ctx, func() error {
			_, err := w.repos.Inventory.CreateStock(ctx, domain.NewStock(id, sku, 0, w.now()))
			if domain.IsCode(err, domain.ECONFLICT) {
				return nil // counted meanwhile
			}
			return err
		}); err != nil {
			return p, err
		}
	}
	return p, nil
}

// variantStocks reads the stock of every SKU of vs, or of the implicit
// variant when vs is empty (one point read each, one per shard of a split
// stock), so a variant added by
// a change starts with its stock's status, not a guess: the inventory
// feed moves a copy only when its stock changes, and a SKU that had
// stock before (removed, then added again) may never change again. A
// stock that moves after the read is newer, and the feed brings it. It
// returns the SKUs that have no stock yet as missing.
func (w *Writes) variantStocks(ctx context.Context, productID string, vs []domain.Variant) (map[string]domain.Stock, []string, error) {
	if err := domain.ValidateVariants(vs); err != nil {
		return nil, nil, err
	}
	skus := []string{""} // no variants: the implicit one's stock
	if len(vs) > 0 {
		skus = skus[:0]
		for _, v := range vs {
			skus = append(skus, v.SKU)
		}
	}
	out := make(map[string]domain.Stock, len(skus))
	var missing []string
	for _, sku := range skus {
		s, err := w.repos.Inventory.Total(ctx, productID, sku) // the sum of a split stock
		switch {
		case errors.Is(err, repo.ErrUntracked):
			missing = append(missing, sku)
		case err != nil:
			return nil, nil, err
		default:
			out[sku] = s
		}
	}
	return out, missing, nil
}

// DeleteProduct soft-deletes product id: deletes are absent from the
// change feed (latest-version mode), so the feed workers must see
// deleted=true to remove the copies (the view's, search's, the cart
// lines', the reviews partition); the document's ttl,
// DeletedProductTTL, then removes it.
//
// Reads and writes the product. ENOTFOUND for a missing or already
// deleted product, EPRECONDITION for a stale ifMatch (or any ifMatch on a
// product that does not exist). Cost: 2.
func (w *Writes) DeleteProduct(ctx context.Context, id string, ifMatch repo.Precondition) error {
	_, err := w.repos.Products.Update(ctx, id, ifMatch, func(p *domain.Product) error {
		p.SoftDelete(DeletedProductTTL, w.now())
		return nil
	})
	return err
}

// PutCategory creates category id named name in the categories index, or
// renames it: the index's read-modify-write, which creates the index on
// first use. The products feed pushes a rename out to the products'
// categoryName copies (RenameCategories). It returns the category as
// written and whether it is new.
//
// Reads and writes the categories index. Cost: 2.
func (w *Writes) PutCategory(ctx context.Context, id, name string) (domain.Category, bool, error) {
	var created bool
	var out domain.Category
	_, err := w.repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		i := slices.IndexFunc(c.Items, func(c domain.Category) bool { return c.ID == id })
		created = i < 0
		if created {
			c.Items = append(c.Items, domain.Category{ID: id, Name: name})
			i = len(c.Items) - 1
		}
		c.Items[i].Name = name
		c.LastUpdated = w.now().UTC()
		out = c.Items[i]
		return nil
	})
	if err != nil {
		return domain.Category{}, false, err
	}
	return out, created, nil
}

// CreateReview stores rv, a user's review of rv.ProductID, stamped
// createdAt now; the reviews feed then recomputes the product's embedded
// stats and top reviews. The product is read first: a review of a
// product that does not exist would open a reviews partition nothing
// ever reads. The review's id comes from the user (domain.ReviewID), so
// a second review of the same product is refused.
//
// Reads the product; writes the review. ENOTFOUND for a missing or
// deleted product, ECONFLICT for a second review. Cost: 2; 1 when the
// product is missing.
func (w *Writes) CreateReview(ctx context.Context, rv domain.Review) (domain.Review, error) {
	if _, err := w.repos.Products.Get(ctx, rv.ProductID); err != nil {
		return domain.Review{}, err
	}
	rv.CreatedAt = w.now().UTC()
	return w.repos.Reviews.Create(ctx, rv)
}

// categoryName reads the categories index for the name of category id:
// EINVALID, naming the request's /categoryId, if it is not there.
func (w *Writes) categoryName(ctx context.Context, id string) (string, error) {
	cats, err := w.repos.Products.Categories(ctx)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(cats.Items, func(c domain.Category) bool { return c.ID == id })
	if i < 0 {
		return "", &domain.Error{Code: domain.EINVALID, Message: "no such category: " + id,
			Fields: []domain.FieldError{{Pointer: "/categoryId", Detail: "is not a known category"}}}
	}
	return cats.Items[i].Name, nil
}
