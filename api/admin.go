package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

type productCreateRequest struct {
	ProductID   string `json:"productId" validate:"omitempty,shopid,ne=categories"`
	Name        string `json:"name" validate:"required,notblank,max=200,line"`
	Description string `json:"description" validate:"max=5000,text"`
	PriceCents  int64  `json:"priceCents" validate:"required_without=Variants,omitempty,min=1,max=100000000"`
	Currency    string `json:"currency" validate:"omitempty,iso4217"`
	CategoryID  string `json:"categoryId" validate:"required,shopid"`
	ImageURL    string `json:"imageUrl" validate:"omitempty,max=2000,line"`
	// Tags are words the product is also found by in search.
	Tags []string `json:"tags" validate:"max=10,dive,notblank,max=40,line"`
	// Stock is the units available at creation, of each variant that
	// names none of its own; without it a product starts sold out, so
	// nothing is sold before someone counts it.
	Stock *int64 `json:"stock" validate:"omitempty,min=0,max=1000000"`
	// Variants are the SKUs the product is sold as (domain.Variant); the
	// product's priceCents is then the lowest of theirs, and need not be
	// sent.
	Variants []variantRequest `json:"variants" validate:"max=50,dive"`
}

// variantRequest is one variant as the admin sends it: domain's rules
// (domain.ValidateVariants) check the SKUs and attributes, this its
// sizes.
type variantRequest struct {
	SKU        string            `json:"sku" validate:"required,max=64"`
	Attributes map[string]string `json:"attributes" validate:"required,min=1,max=4"`
	PriceCents int64             `json:"priceCents" validate:"required,min=1,max=100000000"`
	ImageURL   string            `json:"imageUrl" validate:"omitempty,max=2000,line"`
	// Stock is this variant's units at creation (the product's stock
	// when absent); a change of variants ignores it: PUT the stock.
	Stock *int64 `json:"stock" validate:"omitempty,min=0,max=1000000"`
}

// variantsOf turns the admin's variants into domain variants and their
// initial stock.
func variantsOf(in []variantRequest) ([]domain.Variant, map[string]int64) {
	if in == nil {
		return nil, nil
	}
	vs := make([]domain.Variant, len(in))
	stock := map[string]int64{}
	for i, v := range in {
		vs[i] = domain.Variant{SKU: v.SKU, Attributes: v.Attributes, PriceCents: v.PriceCents, ImageURL: v.ImageURL}
		if v.Stock != nil {
			stock[v.SKU] = *v.Stock
		}
	}
	return vs, stock
}

// DefaultCurrency is the currency of a product created without one.
const DefaultCurrency = "USD"

// handleProductCreate stores a new product (writes.AddProduct, which
// copies its categoryName from the categories index).
func handleProductCreate(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[productCreateRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if req.ProductID == "" {
			req.ProductID = "p-" + domain.RandomSuffix()
		}
		if req.Currency == "" {
			req.Currency = DefaultCurrency
		}
		var stock int64
		if req.Stock != nil {
			stock = *req.Stock
		}
		variants, variantStock := variantsOf(req.Variants)
		switch {
		case len(variants) > 0 && req.PriceCents != 0:
			writeProblem(w, r, &domain.Error{Code: domain.EINVALID, Message: "a product with variants is priced by its variants",
				Fields: []domain.FieldError{{Pointer: "/priceCents", Detail: "set the price of each variant instead"}}})
			return
		case len(variants) == 0 && req.PriceCents == 0:
			// "variants": [] passes required_without (the list is there),
			// and is a product sold as one: it needs its price.
			writeProblem(w, r, &domain.Error{Code: domain.EINVALID, Message: "a product without variants needs a price",
				Fields: []domain.FieldError{{Pointer: "/priceCents", Detail: "required without variants"}}})
			return
		}
		p, err := ws.AddProduct(r.Context(), domain.Product{
			Meta: domain.Meta{ID: req.ProductID}, Name: req.Name, Description: req.Description,
			CategoryID: req.CategoryID, PriceCents: req.PriceCents,
			Currency: req.Currency, PriceVersion: 1, ImageURL: req.ImageURL, Tags: req.Tags,
			Variants: variants, Version: 1,
		}, stock, variantStock)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, p.ETag)
		w.Header().Set("Location", "/v1/products/"+p.ID)
		encode(w, http.StatusCreated, viewProduct(p))
	}
}

// productPatch is a JSON merge patch (RFC 7396) of a product: absent
// fields stay as they are; null is refused since every field is required.
type productPatch struct {
	Name        *string `json:"name" validate:"omitempty,notblank,max=200,line"`
	Description *string `json:"description" validate:"omitempty,max=5000,text"`
	PriceCents  *int64  `json:"priceCents" validate:"omitempty,min=1,max=100000000"`
	CategoryID  *string `json:"categoryId" validate:"omitempty,shopid"`
	ImageURL    *string `json:"imageUrl" validate:"omitempty,max=2000,line"`
	// Tags replaces the whole list (a merge patch replaces arrays).
	Tags *[]string `json:"tags" validate:"omitempty,max=10,dive,notblank,max=40,line"`
	// Variants replaces the whole list; [] returns the product to one
	// implicit variant (send priceCents with it).
	Variants *[]variantRequest `json:"variants" validate:"omitempty,max=50,dive"`
}

// mediaType: decode refuses a patch sent as plain application/json.
func (productPatch) mediaType() string { return mediaMergePatch }

// handleProductPatch changes a product with If-Match (412 when stale):
// writes.UpdateProduct.
func handleProductPatch(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[productPatch](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		ch := domain.ProductChange{Name: req.Name, Description: req.Description,
			PriceCents: req.PriceCents, CategoryID: req.CategoryID, ImageURL: req.ImageURL, Tags: req.Tags}
		if req.Variants != nil {
			vs, _ := variantsOf(*req.Variants)
			if vs == nil {
				vs = []domain.Variant{}
			}
			ch.Variants = &vs
		}
		p, err := ws.UpdateProduct(r.Context(), id, ifMatch(r), ch)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, p.ETag)
		encode(w, http.StatusOK, viewProduct(p))
	}
}

// handleProductDelete soft-deletes a product, optional If-Match:
// writes.DeleteProduct.
func handleProductDelete(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if err := ws.DeleteProduct(r.Context(), id, ifMatch(r)); err != nil {
			writeProblem(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

type categoryRequest struct {
	Name string `json:"name" validate:"required,notblank,max=100,line"`
}

// handleCategoryPut creates (201) or renames (200) a category in the
// categories index: writes.PutCategory.
func handleCategoryPut(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r, "categoryId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[categoryRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		c, created, err := ws.PutCategory(r.Context(), id, req.Name)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
			w.Header().Set("Location", "/v1/categories/"+id+"/products")
		}
		encode(w, status, viewCategory(c))
	}
}

type stockRequest struct {
	Available *int64 `json:"available" validate:"required,min=0,max=1000000"`
}

// stockView is a product's stock as the admin sees it.
type stockView struct {
	ProductID   string    `json:"productId"`
	SKU         string    `json:"sku,omitempty"`
	Available   int64     `json:"available"`
	Status      string    `json:"status"`
	LastUpdated time.Time `json:"lastUpdated"`
	// Shards is how many shards a split stock's takes start on (absent
	// for one never split); Available is then the sum of every shard.
	Shards int `json:"shards,omitempty"`
}

func viewStock(s domain.Stock) stockView {
	v := stockView{ProductID: s.ProductID, SKU: s.SKU, Available: s.Available, Status: domain.StatusOf(s.Available), LastUpdated: s.LastUpdated}
	if s.Made() > 1 {
		v.Shards = s.Active()
	}
	return v
}

// handleStockGet is the admin's count of a product: one point read in
// `inventory`. A product whose stock is not tracked is a 404 that says so.
func handleStockGet(inventory *repo.Inventory) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, sku, err := stockParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		s, err := inventory.Stock(r.Context(), id, sku)
		if err == nil && s.Made() > 1 {
			// Split: the sum of the shards, one more read each.
			s, err = inventory.Total(r.Context(), id, sku)
		}
		if errors.Is(err, repo.ErrUntracked) && sku == "" {
			err = untracked(id)
		}
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, s.ETag)
		encode(w, http.StatusOK, viewStock(s))
	}
}

// stockParams are what every stock route names: the product of the path
// and the variant of ?sku= ("" for none).
func stockParams(r *http.Request) (id, sku string, err error) {
	if id, err = pathProductID(r); err != nil {
		return "", "", err
	}
	sku, err = skuParam(r)
	return id, sku, err
}

func untracked(id string) error {
	return domain.Errorf(domain.ENOTFOUND, "the stock of %q is not tracked, or it is sold in variants: name one with ?sku=", id)
}

// shardsRequest splits a stock into shards, or merges it back.
type shardsRequest struct {
	Shards *int `json:"shards" validate:"required,min=1,max=64"`
}

// handleShardsGet is the admin's view of a stock's shards: one point read
// of each (repo.Inventory.Layout).
func handleShardsGet(inventory *repo.Inventory) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, sku, err := stockParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		l, err := inventory.Layout(r.Context(), id, sku)
		if errors.Is(err, repo.ErrUntracked) && sku == "" {
			err = untracked(id)
		}
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, l)
	}
}

// handleShardsPut splits a product's stock into shards or merges it back
// (writes.SetShards): a hot product's sales spread over that many
// partitions (docs/scale.md).
func handleShardsPut(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, sku, err := stockParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[shardsRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		l, err := ws.SetShards(r.Context(), id, sku, *req.Shards)
		if errors.Is(err, repo.ErrUntracked) {
			err = domain.Errorf(domain.ENOTFOUND, "the stock of %s is not tracked", domain.LineLabel(id, sku))
		}
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, l)
	}
}

// handleStockPut sets the units of a product that can still be bought
// (writes.SetStock); optional If-Match on the stock's ETag.
func handleStockPut(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, sku, err := stockParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[stockRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		s, err := ws.SetStock(r.Context(), id, sku, *req.Available, ifMatch(r))
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, s.ETag)
		encode(w, http.StatusOK, viewStock(s))
	}
}
