package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// DeletedProductTTL is how long a soft-deleted product stays, so the feed
// workers see the deleted=true version before TTL removes it.
const DeletedProductTTL = 7 * 24 * 3600

type productCreateRequest struct {
	ProductID   string `json:"productId" validate:"omitempty,shopid,ne=categories"`
	Name        string `json:"name" validate:"required,notblank,max=200,line"`
	Description string `json:"description" validate:"max=5000,text"`
	PriceCents  int64  `json:"priceCents" validate:"required,min=1,max=100000000"`
	Currency    string `json:"currency" validate:"omitempty,iso4217"`
	CategoryID  string `json:"categoryId" validate:"required,shopid"`
	ImageURL    string `json:"imageUrl" validate:"omitempty,max=2000,line"`
	// Tags are words the product is also found by in search.
	Tags []string `json:"tags" validate:"max=10,dive,notblank,max=40,line"`
	// Stock is the units available at creation; without it a product
	// starts sold out, so nothing is sold before someone counts it.
	Stock *int64 `json:"stock" validate:"omitempty,min=0,max=1000000"`
}

// DefaultCurrency is the currency of a product created without one.
const DefaultCurrency = "USD"

// handleProductCreate stores a new product. Its categoryName is copied
// from the categories index (model-denormalize-reads), so the product page
// never needs a second read.
func handleProductCreate(products *repo.Products, ws *writes.Writes, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[productCreateRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		cats, err := products.Categories(r.Context())
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		name, ok := categoryName(cats, req.CategoryID)
		if !ok {
			writeProblem(w, r, unknownCategory(req.CategoryID))
			return
		}
		if req.ProductID == "" {
			req.ProductID = "p-" + domain.RandomSuffix()
		}
		if req.Currency == "" {
			req.Currency = DefaultCurrency
		}
		t := now().UTC()
		var stock int64
		if req.Stock != nil {
			stock = *req.Stock
		}
		p, err := ws.CreateProduct(r.Context(), domain.Product{
			Meta: domain.Meta{ID: req.ProductID}, Name: req.Name, Description: req.Description,
			CategoryID: req.CategoryID, CategoryName: name, PriceCents: req.PriceCents,
			Currency: req.Currency, PriceVersion: 1, ImageURL: req.ImageURL, Tags: req.Tags,
			LastUpdated: t, Version: 1,
		}, stock)
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
}

// mediaType: decode refuses a patch sent as plain application/json.
func (productPatch) mediaType() string { return mediaMergePatch }

// handleProductPatch changes a product with If-Match (412 when stale); a
// price change increments priceVersion, the version guard of every cart
// line copy the products feed then updates.
func handleProductPatch(products *repo.Products, now func() time.Time) http.HandlerFunc {
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
		if req.CategoryID != nil {
			cats, err := products.Categories(r.Context())
			if err != nil {
				writeProblem(w, r, err)
				return
			}
			name, ok := categoryName(cats, *req.CategoryID)
			if !ok {
				writeProblem(w, r, unknownCategory(*req.CategoryID))
				return
			}
			ch.CategoryName = &name
		}
		p, err := products.Update(r.Context(), id, ifMatch(r), func(p *domain.Product) error {
			p.Apply(ch, now())
			return nil
		})
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, p.ETag)
		encode(w, http.StatusOK, viewProduct(p))
	}
}

// handleProductDelete soft-deletes: deletes are absent from the change
// feed (latest-version mode), so the feed workers must see deleted=true to
// remove the copies; the document's ttl then removes it.
func handleProductDelete(products *repo.Products, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if _, err := products.Update(r.Context(), id, ifMatch(r), func(p *domain.Product) error {
			p.SoftDelete(DeletedProductTTL, now())
			return nil
		}); err != nil {
			writeProblem(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

type categoryRequest struct {
	Name string `json:"name" validate:"required,notblank,max=100,line"`
}

// handleCategoryPut creates or renames a category in the categories index
// (its read-modify-write); the products feed pushes a rename out to the
// products' categoryName copies.
func handleCategoryPut(products *repo.Products, now func() time.Time) http.HandlerFunc {
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
		var created bool
		var out domain.Category
		if _, err := products.UpdateCategories(r.Context(), "", func(c *domain.Categories) error {
			i := slices.IndexFunc(c.Items, func(c domain.Category) bool { return c.ID == id })
			created = i < 0
			if created {
				c.Items = append(c.Items, domain.Category{ID: id, Name: req.Name})
				i = len(c.Items) - 1
			}
			c.Items[i].Name = req.Name
			c.LastUpdated = now().UTC()
			out = c.Items[i]
			return nil
		}); err != nil {
			writeProblem(w, r, err)
			return
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
			w.Header().Set("Location", "/v1/categories/"+id+"/products")
		}
		encode(w, status, viewCategory(out))
	}
}

func categoryName(c domain.Categories, id string) (string, bool) {
	i := slices.IndexFunc(c.Items, func(c domain.Category) bool { return c.ID == id })
	if i < 0 {
		return "", false
	}
	return c.Items[i].Name, true
}

func unknownCategory(id string) error {
	return &domain.Error{Code: domain.EINVALID, Message: "no such category: " + id,
		Fields: []domain.FieldError{{Pointer: "/categoryId", Detail: "is not a known category"}}}
}

type stockRequest struct {
	Available *int64 `json:"available" validate:"required,min=0,max=1000000"`
}

// stockView is a product's stock as the admin sees it.
type stockView struct {
	ProductID   string    `json:"productId"`
	Available   int64     `json:"available"`
	Status      string    `json:"status"`
	LastUpdated time.Time `json:"lastUpdated"`
}

func viewStock(s domain.Stock) stockView {
	return stockView{ProductID: s.ProductID, Available: s.Available, Status: domain.StatusOf(s.Available), LastUpdated: s.LastUpdated}
}

// handleStockGet is the admin's count of a product: one point read in
// `inventory`. A product whose stock is not tracked is a 404 that says so.
func handleStockGet(inventory *repo.Inventory) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		s, err := inventory.Stock(r.Context(), id)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, s.ETag)
		encode(w, http.StatusOK, viewStock(s))
	}
}

// handleStockPut sets the units of a product that can still be bought
// (writes.SetStock); optional If-Match on the stock's ETag.
func handleStockPut(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[stockRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		s, err := ws.SetStock(r.Context(), id, *req.Available, ifMatch(r))
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, s.ETag)
		encode(w, http.StatusOK, viewStock(s))
	}
}
