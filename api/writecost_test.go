package api_test

import "testing"

// TestCatalogWritesCostWhatTheirMethodSays: each catalog write is one
// method of store/writes, and its X-Store-Operations is the cost that
// method's comment gives (store/writes/catalog.go). A handler that read
// or wrote anything of its own, a second read of the categories or a
// check of the product before a write, would show here as one operation
// more.
func TestCatalogWritesCostWhatTheirMethodSays(t *testing.T) {
	s := newShop(t)
	s.fixture()
	admin := token(t, "boss", true)
	patch := map[string]string{"Content-Type": "application/merge-patch+json"}
	for _, tc := range []struct {
		name   string
		req    req
		status int
		ops    string
	}{
		// The categories index, the product's create, the stock's read
		// (none yet) and create.
		{"AddProduct", req{method: "POST", path: "/v1/products", token: admin,
			body: map[string]any{"productId": "book-3", "name": "Partitions", "priceCents": 1500, "categoryId": "books", "stock": 4}}, 201, "4"},
		// The categories index, then nothing: the category decides.
		{"AddProductToNoCategory", req{method: "POST", path: "/v1/products", token: admin,
			body: map[string]any{"name": "Nowhere", "priceCents": 1500, "categoryId": "nope"}}, 400, "1"},
		// The product's read-modify-write.
		{"UpdateProduct", req{method: "PATCH", path: "/v1/products/book-3", token: admin, header: patch,
			body: `{"priceCents":1600}`}, 200, "2"},
		// The categories index first, then the read-modify-write.
		{"UpdateProductsCategory", req{method: "PATCH", path: "/v1/products/book-3", token: admin, header: patch,
			body: `{"categoryId":"games"}`}, 200, "3"},
		{"UpdateProductToNoCategory", req{method: "PATCH", path: "/v1/products/book-3", token: admin, header: patch,
			body: `{"categoryId":"nope"}`}, 400, "1"},
		// The index's read-modify-write.
		{"PutCategory", req{method: "PUT", path: "/v1/categories/toys", token: admin,
			body: map[string]string{"name": "Toys"}}, 201, "2"},
		// The product's point read, the review's create.
		{"CreateReview", req{method: "POST", path: "/v1/products/book-3/reviews", token: token(t, "rita", false),
			body: map[string]any{"rating": 5, "title": "Sharp"}}, 201, "2"},
		{"CreateReviewOfNoProduct", req{method: "POST", path: "/v1/products/nope/reviews", token: token(t, "rita", false),
			body: map[string]any{"rating": 5, "title": "Sharp"}}, 404, "1"},
		// The product's read-modify-write, which soft-deletes it.
		{"DeleteProduct", req{method: "DELETE", path: "/v1/products/book-3", token: admin}, 204, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := s.do(tc.req).want(tc.status).ops(), tc.ops; got != want {
				t.Errorf("X-Store-Operations = %s, want %s", got, want)
			}
		})
	}
}
