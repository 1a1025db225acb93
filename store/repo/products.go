package repo

import (
	"context"
	"fmt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Products is the repository of `products` (pk /id): products and the
// categories index document.
type Products struct{ c store.Container }

// NewProducts returns the products repository over s.
func NewProducts(s store.Store) *Products { return &Products{s.Container(store.ProductsContainer)} }

// Get returns the product. Point read by (id, id): 1 RU for 1 KB
// (query-point-reads). ENOTFOUND if missing or soft-deleted.
func (r *Products) Get(ctx context.Context, id string) (domain.Product, error) {
	it, err := r.Read(ctx, id, "")
	if err != nil {
		return domain.Product{}, err
	}
	return DecodeProduct(id, it)
}

// Read is Get's one point read without the decoding: the document as
// stored and its ETag, for a screen that keeps what it rendered of each
// _etag and so decodes only a product it has not seen (the product page).
// With rendered, the _etag of the screen's render, the read is sent
// with If-None-Match: when it is still current the answer is NotModified
// and carries no document (Container.ReadIfNoneMatch). ENOTFOUND if
// missing; a soft-deleted product is read, DecodeProduct refuses it.
func (r *Products) Read(ctx context.Context, id, rendered string) (store.ItemResponse, error) {
	var it store.ItemResponse
	var err error
	if rendered == "" {
		it, err = r.c.Read(ctx, id, id)
	} else {
		it, err = r.c.ReadIfNoneMatch(ctx, id, id, rendered)
	}
	if domain.IsCode(err, domain.ENOTFOUND) {
		return it, domain.Errorf(domain.ENOTFOUND, "product %q not found", id)
	}
	return it, err
}

// DecodeProduct decodes product id as Read returned it: ENOTFOUND if
// soft-deleted, as Get.
func DecodeProduct(id string, it store.ItemResponse) (domain.Product, error) {
	p, err := Decode[domain.Product](it.Item)
	if err != nil {
		return domain.Product{}, fmt.Errorf("%s: %w", id, err)
	}
	if p.Deleted {
		return domain.Product{}, domain.Errorf(domain.ENOTFOUND, "product %q not found", id)
	}
	return p, nil
}

// GetAny returns the product even when soft-deleted (for the feed workers).
func (r *Products) GetAny(ctx context.Context, id string) (domain.Product, error) {
	p, err := ReadDoc[domain.Product](ctx, r.c, id, id)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return p, domain.Errorf(domain.ENOTFOUND, "product %q not found", id)
	}
	return p, err
}

// Create stores a new product; ECONFLICT if the id is taken.
func (r *Products) Create(ctx context.Context, p domain.Product) (domain.Product, error) {
	p.Type, p.SchemaVersion = domain.TypeProduct, domain.SchemaVersion
	if p.TopReviews == nil {
		p.TopReviews = []domain.TopReview{}
	}
	b, err := encode(p)
	if err != nil {
		return domain.Product{}, err
	}
	w, err := r.c.Create(ctx, p.ID, b)
	if domain.IsCode(err, domain.ECONFLICT) {
		return domain.Product{}, domain.Errorf(domain.ECONFLICT, "product %q already exists", p.ID)
	}
	if err != nil {
		return domain.Product{}, err
	}
	return Decode[domain.Product](w.Item)
}

// Update is the product's read-modify-write (see update): ifMatch is the
// client's If-Match, "" to let the server retry its own races. A deleted
// product is not found.
func (r *Products) Update(ctx context.Context, id, ifMatch string, fn func(*domain.Product) error) (domain.Product, error) {
	p, _, err := update(ctx, r.c, id, id, rmw[domain.Product]{what: "product " + id, ifMatch: ifMatch}, func(p *domain.Product) error {
		if p.Deleted {
			return domain.Errorf(domain.ENOTFOUND, "product %q not found", id)
		}
		return fn(p)
	})
	return p, err
}

// UpdateAny is Update for the feed workers: it sees deleted products too.
func (r *Products) UpdateAny(ctx context.Context, id string, fn func(*domain.Product) error) (domain.Product, error) {
	p, _, err := update(ctx, r.c, id, id, rmw[domain.Product]{}, fn)
	return p, err
}

// Categories returns the categories index: the home screen's one point
// read. A store without one has no categories yet.
func (r *Products) Categories(ctx context.Context) (domain.Categories, error) {
	c, err := ReadDoc[domain.Categories](ctx, r.c, domain.CategoriesID, domain.CategoriesID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return newCategories(), nil
	}
	return c, err
}

// ReadCategories is Categories' one point read without the decoding: the
// index as stored, or an empty index's document when there is none yet,
// for a screen that keeps what it rendered of each document's bytes (the
// home page, api/renders.go).
func (r *Products) ReadCategories(ctx context.Context) ([]byte, error) {
	it, err := r.c.Read(ctx, domain.CategoriesID, domain.CategoriesID)
	if domain.IsCode(err, domain.ENOTFOUND) {
		return encode(newCategories())
	}
	return it.Item, err
}

// UpdateCategories is the read-modify-write of the categories index,
// creating it on first use.
func (r *Products) UpdateCategories(ctx context.Context, ifMatch string, fn func(*domain.Categories) error) (domain.Categories, error) {
	c, _, err := update(ctx, r.c, domain.CategoriesID, domain.CategoriesID, rmw[domain.Categories]{what: "the categories", ifMatch: ifMatch, create: newCategories}, func(c *domain.Categories) error {
		if err := fn(c); err != nil {
			return err
		}
		return nil
	})
	return c, err
}

func newCategories() domain.Categories {
	return domain.Categories{
		Meta:  domain.Meta{ID: domain.CategoriesID, Type: domain.TypeCategories, SchemaVersion: domain.SchemaVersion},
		Items: []domain.Category{},
	}
}
