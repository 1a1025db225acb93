package api

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// handleCategories is the home screen: a point read of the categories
// index document (query-point-reads), the cheapest call there is, instead
// of a query.
func handleCategories(products *repo.Products, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, err := products.ReadCategories(r.Context())
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writeDoc(w, r, rs, "categories", doc, viewCategories)
	}
}

// handleCategoryPage is one page of a category: ONE single-partition query
// on productsByCategory (pk = categoryId), never a fan-out over products.
// Only an empty first page costs a second read, of the categories index,
// to tell an unknown category (404) from an empty one.
func handleCategoryPage(summaries *repo.ProductSummaries, products *repo.Products, rs *renders) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		categoryID, err := pathID(r, "categoryId")
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		sort, facets, limit, cont, err := categoryPageParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		page, err := summaries.Page(r.Context(), categoryID, sort, facets, limit, cont)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if len(page.Items) == 0 && cont == "" && len(facets) == 0 {
			c, err := products.Categories(r.Context())
			if err != nil {
				writeProblem(w, r, err)
				return
			}
			if !slices.ContainsFunc(c.Items, func(c domain.Category) bool { return c.ID == categoryID }) {
				writeProblem(w, r, domain.Errorf(domain.ENOTFOUND, "category %q not found", categoryID))
				return
			}
		}
		writePage(w, r, rs, "productSummary", page, viewProductSummary)
	}
}

// categoryPageParams reads a category page's ?sort=, ?limit= and
// ?continuation=, the defaults filled in, and its attribute filters:
// every other parameter names an attribute and a value its variants must
// have (?size=M), at most domain.MaxVariantAttributes of them, one value
// each. The facets come sorted: the page they name, however they were
// spelled (the read cache's key).
func categoryPageParams(r *http.Request) (sort string, facets []string, limit int, continuation string, err error) {
	limit, continuation, err = pageParams(r)
	if err != nil {
		return "", nil, 0, "", err
	}
	q := queryOf(r)
	switch sort = q.Get("sort"); sort {
	case "":
		sort = repo.SortByName
	case repo.SortByName, repo.SortByPrice, repo.SortByRating:
	default:
		return "", nil, 0, "", domain.Errorf(domain.EINVALID, "sort must be name, price or rating")
	}
	for name, values := range q {
		if slices.Contains(domain.PageParameters, name) {
			continue
		}
		if len(values) != 1 || !domain.ValidFacetQuery(name, values[0]) {
			return "", nil, 0, "", &domain.Error{Code: domain.EINVALID,
				Message: fmt.Sprintf("filter %q: an attribute name (a-z 0-9 _, at most %d) with one value of 1 to %d characters", name, domain.MaxAttributeName, domain.MaxAttributeValue),
				Fields:  []domain.FieldError{{Pointer: "/" + name, Detail: "one attribute value, such as ?size=M"}}}
		}
		facets = append(facets, domain.Facet(name, values[0]))
	}
	if len(facets) > domain.MaxVariantAttributes {
		return "", nil, 0, "", domain.Errorf(domain.EINVALID, "at most %d attribute filters", domain.MaxVariantAttributes)
	}
	slices.Sort(facets)
	return sort, facets, limit, continuation, nil
}

// handleProduct is the product page: ONE point read in products, the top
// reviews and review stats embedded (model-embed-related). The body of a
// product whose _etag the cache has seen is the cached one: the same
// bytes, without decoding the document or encoding the view again.
func handleProduct(products *repo.Products, cache *renderCache) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		etag, body := cache.latest(id)
		it, err := products.Read(r.Context(), id, etag)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if it.NotModified {
			setETag(w, etag)
			writeBody(w, http.StatusOK, mediaJSON, body)
			return
		}
		p, err := repo.DecodeProduct(id, it)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		body, err = render(viewProduct(p))
		if err != nil {
			writeEncodeFailure(w)
			return
		}
		if p.ETag == it.ETag {
			// Else the header would not be the read's ETag: not cached.
			cache.put(id, it.ETag, body)
		}
		setETag(w, p.ETag)
		writeBody(w, http.StatusOK, mediaJSON, body)
	}
}

// handleReviews is one page of a product's reviews, newest first: ONE
// single-partition query on reviews (pk = productId). An unknown product
// has no reviews partition, so it answers an empty page rather than
// spending a second read to say 404.
func handleReviews(reviews *repo.Reviews) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		limit, cont, err := pageParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		items, next, err := reviews.Page(r.Context(), id, limit, cont)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, pageOf(mapSlice(items, viewReview), next))
	}
}

type reviewRequest struct {
	Rating int    `json:"rating" validate:"required,min=1,max=5"`
	Title  string `json:"title" validate:"required,notblank,max=200,line"`
	Body   string `json:"body" validate:"max=5000,text"`
}

// handleReviewCreate stores the caller's review of the product
// (writes.CreateReview): one per user per product, a second is a 409.
func handleReviewCreate(ws *writes.Writes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathProductID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		req, err := decode[reviewRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		u := userFrom(r.Context())
		name := u.Name
		if name == "" {
			name = u.ID
		}
		rv, err := ws.CreateReview(r.Context(), domain.Review{
			ProductID: id, UserID: u.ID, UserName: name,
			Rating: req.Rating, Title: req.Title, Body: req.Body,
		})
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		setETag(w, rv.ETag)
		w.Header().Set("Location", "/v1/products/"+id+"/reviews")
		encode(w, http.StatusCreated, viewReview(rv))
	}
}
