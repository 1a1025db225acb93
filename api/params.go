package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Every list screen is one store query page, so a list without ?limit=
// takes the store's default page size (store.DefaultPageSize); a client
// may ask for at most MaxPageSize, fewer than a store query allows.
const (
	MaxPageSize = 100
	// maxContinuation bounds the opaque token a client sends back.
	maxContinuation = 4096
)

// pageParams reads ?limit= and ?continuation=.
func pageParams(r *http.Request) (limit int, continuation string, err error) {
	return pageParamsUpTo(r, maxContinuation)
}

// pageParamsUpTo is pageParams for a route whose continuation may be up
// to maxCont bytes (one that merges several queries' continuations).
func pageParamsUpTo(r *http.Request, maxCont int) (limit int, continuation string, err error) {
	q := queryOf(r)
	limit = store.DefaultPageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageSize {
			return 0, "", domain.Errorf(domain.EINVALID, "limit must be an integer from 1 to %d", MaxPageSize)
		}
		limit = n
	}
	continuation = q.Get("continuation")
	if len(continuation) > maxCont {
		return 0, "", domain.Errorf(domain.EINVALID, "continuation is not one this server issued")
	}
	return limit, continuation, nil
}

// skuParam reads ?sku=, the variant a cart line or a stock names: "" for
// a product without variants.
func skuParam(r *http.Request) (string, error) {
	q := queryOf(r)
	sku := q.Get("sku")
	if len(q["sku"]) > 1 || sku != "" && !domain.ValidSKU(sku) {
		return "", &domain.Error{Code: domain.EINVALID, Message: "sku must be one SKU",
			Fields: []domain.FieldError{{Pointer: "/sku", Detail: "1 to 64 of A-Z a-z 0-9 . _ -"}}}
	}
	return sku, nil
}

// pathID returns the path parameter name, validated as an id.
func pathID(r *http.Request, name string) (string, error) {
	id := chi.URLParam(r, name)
	return id, checkID(name, id)
}

// pathProductID returns {productId}, validated as a product id: an id
// that is not the categories index's reserved one.
func pathProductID(r *http.Request) (string, error) {
	id := chi.URLParam(r, "productId")
	return id, checkProductID(id)
}

// ifMatch returns the If-Match header as sent, its lines joined into one
// list (RFC 9110 §5.3): "*" or entity tags, which the store matches
// against the _etag (quoted strings, like Cosmos's) as they are.
func ifMatch(r *http.Request) string {
	return strings.TrimSpace(strings.Join(r.Header.Values("If-Match"), ", "))
}

// setETag sends the stored _etag as the ETag header.
func setETag(w http.ResponseWriter, etag string) {
	if etag != "" {
		w.Header()["Etag"] = []string{etag}
	}
}
