package feedworkers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// TestPriceChangeThroughTheAPI is the whole path: an admin PATCHes a
// price, the products feed carries it to the open cart, and the
// customer's GET /v1/cart shows it.
func TestPriceChangeThroughTheAPI(t *testing.T) {
	secret := []byte("e2e-secret-of-at-least-32-bytes!!!")
	st := openStore(t)
	createProduct(t, repo.New(st, 0), "p1", "coffee", 1000)
	w, err := feedworkers.Start(t.Context(), st, writes.New(repo.New(store.Metered(st), 0), nil, nil), workersConfig("e2e"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })
	srv := api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(st), 0), nil, nil), Store: st, Secret: secret, Feeds: w})

	token := func(user string, admin bool) string {
		tok, err := api.IssueToken(secret, user, user, user+"@example.com", admin, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	customer, admin := token("u1", false), token("admin", true)
	do := func(method, path, tok, contentType, body string, header map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		if body != "" {
			r.Header.Set("Content-Type", contentType)
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		return rec
	}

	if rec := do(http.MethodPut, "/v1/cart/items/p1", customer, "application/json", `{"quantity":2}`, nil); rec.Code != http.StatusOK {
		t.Fatalf("PUT cart item = %d %s", rec.Code, rec.Body)
	}
	// The admin reads the product and patches that version; the feed
	// workers may write the product in between (its availability, its
	// category's name), and then the admin reads again, as the 412 says.
	var patch *httptest.ResponseRecorder
	for range 10 {
		product := do(http.MethodGet, "/v1/products/p1", customer, "", "", nil)
		if product.Code != http.StatusOK {
			t.Fatalf("GET product = %d %s", product.Code, product.Body)
		}
		patch = do(http.MethodPatch, "/v1/products/p1", admin, "application/merge-patch+json", `{"priceCents":1500}`,
			map[string]string{"If-Match": product.Header().Get("ETag")})
		if patch.Code != http.StatusPreconditionFailed {
			break
		}
	}
	if patch.Code != http.StatusOK {
		t.Fatalf("PATCH price = %d %s", patch.Code, patch.Body)
	}

	eventually(t, 30*time.Second, "GET /v1/cart showing the new price", func() (bool, string) {
		rec := do(http.MethodGet, "/v1/cart", customer, "", "", nil)
		var cart struct {
			Items []struct {
				UnitPriceCents int64 `json:"unitPriceCents"`
				LineTotalCents int64 `json:"lineTotalCents"`
			} `json:"items"`
			SubtotalCents int64 `json:"subtotalCents"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &cart); err != nil || rec.Code != http.StatusOK || len(cart.Items) != 1 {
			return false, fmt.Sprintf("%d %s", rec.Code, rec.Body)
		}
		return cart.Items[0].UnitPriceCents == 1500 && cart.SubtotalCents == 3000, rec.Body.String()
	})

	// The fan-out's totals are added when it ends, just after its last
	// cart write: poll for them too.
	eventually(t, 30*time.Second, "GET /v1/admin/feeds counting the cart update", func() (bool, string) {
		rec := do(http.MethodGet, "/v1/admin/feeds", admin, "", "", nil)
		var status struct {
			Processors []changefeed.ProcessorStatus `json:"processors"`
			Fanout     repo.FanoutStats             `json:"fanout"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || rec.Code != http.StatusOK {
			return false, fmt.Sprintf("%d %s (%v)", rec.Code, rec.Body, err)
		}
		return len(status.Processors) == 4 && status.Fanout.CartsUpdated == 1, rec.Body.String()
	})
	// The body the workers really produce is what openapi.yaml describes.
	var body any
	if err := json.Unmarshal(do(http.MethodGet, "/v1/admin/feeds", admin, "", "", nil).Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if err := feedStatusSchema(t).VisitJSON(body); err != nil {
		t.Errorf("GET /v1/admin/feeds does not match openapi.yaml's FeedStatus: %v", err)
	}
	if rec := do(http.MethodGet, "/v1/admin/feeds", customer, "", "", nil); rec.Code != http.StatusForbidden {
		t.Errorf("GET /v1/admin/feeds as a customer = %d, want 403", rec.Code)
	}
}

// feedStatusSchema is the FeedStatus schema of ../openapi.yaml.
func feedStatusSchema(t *testing.T) *openapi3.Schema {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ref := doc.Components.Schemas["FeedStatus"]
	if ref == nil || ref.Value == nil {
		t.Fatal("openapi.yaml has no FeedStatus schema")
	}
	return ref.Value
}
