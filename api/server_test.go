package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/api/readcache"
	"github.com/reference-shop/shop/api/telemetry"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/domain/payments/paymentstest"
	"github.com/reference-shop/shop/feedworkers/webhooks"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
	"github.com/reference-shop/shop/web"
)

var testSecret = []byte("test-secret-of-at-least-32-bytes!!")

// specRouter loads ../openapi.yaml once: every response of the suite is
// validated against it, so the spec cannot drift from the handlers.
var specRouter = sync.OnceValues(func() (routers.Router, error) {
	b, err := os.ReadFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// shop is a server on a fresh embedded store, with the repositories
// (unmetered) for fixtures and for checking what a request changed.
type shop struct {
	t       testing.TB
	handler http.Handler
	store   store.Store
	repos   *repo.Set
	feeds   api.FeedStatus
	cache   *readcache.Cache
}

type options struct {
	devMode   bool
	feeds     api.FeedStatus
	rateLimit api.RateLimit
	// wrap, when set, decorates the store the server uses (the fixtures
	// and s.repos still use the bare store).
	wrap func(store.Store) store.Store
	// served builds the server as shop serve does by default: telemetry
	// with no trace exporter, the store traced, the request log at info.
	served bool
	// storeNow is the embedded store's clock (nil: time.Now), and
	// throughput wires it as the server's Deps.Throughput.
	storeNow   func() time.Time
	throughput bool
	// cache serves the catalog screens through a read cache (Deps.Cache).
	cache *readcache.Cache
	// estimated sets Deps.ChargesEstimated, as shop serve does on the
	// embedded store.
	estimated bool
	// now is the server's clock (Deps.Now; nil: time.Now).
	now func() time.Time
	// web serves the storefront beside the API (Deps.Web), as shop serve
	// does.
	web bool
	// webhooks sets Deps.Webhooks.
	webhooks webhooks.Policy
}

func newShop(t testing.TB, opts ...func(*options)) *shop {
	t.Helper()
	o := options{devMode: true}
	for _, f := range opts {
		f(&o)
	}
	st, err := embedded.Open(filepath.Join(t.TempDir(), "shop.db"), embedded.Options{NoSync: true, Now: o.storeNow})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if err := migrations.Apply(context.Background(), st, io.Discard); err != nil {
		t.Fatalf("migrations: %v", err)
	}
	var served store.Store = st
	if o.wrap != nil {
		served = o.wrap(st)
	}
	d := api.Deps{Writes: writes.New(repo.New(store.Metered(served), 0), paymentstest.Embedded(t), o.now), Store: served, Secret: testSecret, DevMode: o.devMode, Feeds: o.feeds, RateLimit: o.rateLimit, ChargesEstimated: o.estimated, Now: o.now, Webhooks: o.webhooks}
	if o.cache != nil { // not a nil *readcache.Cache in the interface
		d.Cache = o.cache
	}
	if o.throughput {
		d.Throughput = st
	}
	if o.web {
		d.Web = web.Handler()
	}
	if o.served {
		tel, err := telemetry.Setup(context.Background(), func(string) string { return "" }, io.Discard, "shop")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
		d.Telemetry = tel
		d.Store = store.Traced(served, tel.TracerProvider(), tel.MeterProvider(), "embedded")
		d.Logger = telemetry.NewLogger(io.Discard, false, slog.LevelInfo)
		d.RequestTimeout = 10 * time.Second
	}
	h := api.NewServer(d)
	return &shop{t: t, handler: h, store: st, repos: repo.New(st, 0), cache: o.cache}
}

// req is one request of a test.
type req struct {
	method, path string
	body         any // string as is, anything else JSON-encoded
	token        string
	header       map[string]string
}

// response is a recorded response, already checked against the spec.
type response struct {
	*httptest.ResponseRecorder
	t testing.TB
}

// do sends r and validates the response (and, when the server accepted
// it, the request) against openapi.yaml.
func (s *shop) do(r req) response {
	s.t.Helper()
	var raw []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			s.t.Fatalf("encode body: %v", err)
		}
	}
	hr := httptest.NewRequest(r.method, r.path, bytes.NewReader(raw))
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, hr)
	checkSpec(s.t, r.method, r.path, hr.Header, raw, rec)
	return response{rec, s.t}
}

// The product pictures (GET /v1/products/{id}/image.svg) are checked as
// text, the schema openapi.yaml gives them.
func init() {
	openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.FileBodyDecoder)
}

func checkSpec(t testing.TB, method, path string, reqHeader http.Header, reqBody []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	router, err := specRouter()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	// The spec's server is http://localhost:8080: route a copy there.
	u, _ := url.Parse("http://localhost:8080" + path)
	sr, _ := http.NewRequest(method, u.String(), bytes.NewReader(reqBody))
	sr.Header = reqHeader.Clone()
	route, params, err := router.FindRoute(sr)
	if err != nil {
		t.Errorf("%s %s: not in openapi.yaml: %v", method, path, err)
		return
	}
	in := &openapi3filter.RequestValidationInput{
		Request: sr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if rec.Code < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("%s %s: the server accepted a request openapi.yaml refuses: %v", method, path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s -> %d does not match openapi.yaml: %v\nbody: %s", method, path, rec.Code, err, rec.Body.String())
	}
}

// want fails the test unless the response has the status.
func (r response) want(status int) response {
	r.t.Helper()
	if r.Code != status {
		r.t.Fatalf("status = %d, want %d; body: %s", r.Code, status, r.Body.String())
	}
	return r
}

// ops is the response's X-Store-Operations.
func (r response) ops() string { return r.Header().Get("X-Store-Operations") }

func decodeBody[T any](t testing.TB, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body.String(), err)
	}
	return v
}

// problemBody is the part of a problem tests look at.
type problemBody struct {
	Type   string              `json:"type"`
	Status int                 `json:"status"`
	Detail string              `json:"detail"`
	Errors []domain.FieldError `json:"errors"`
	Items  []domain.Shortage   `json:"items"`
}

func token(t testing.TB, userID string, admin bool) string {
	t.Helper()
	tok, err := api.IssueToken(testSecret, userID, "User "+userID, userID+"@example.com", admin, time.Hour)
	if err != nil {
		t.Fatalf("issue token: %v", err)
	}
	return tok
}

// fixture is a small catalog written through the repositories, with the
// productsByCategory copies the products feed would make.
func (s *shop) fixture() {
	s.t.Helper()
	ctx := context.Background()
	if _, err := s.repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		c.Items = []domain.Category{
			{ID: "books", Name: "Books", ProductCount: 2},
			{ID: "games", Name: "Games", ProductCount: 1},
			{ID: "empty", Name: "Empty", ProductCount: 0},
		}
		return nil
	}); err != nil {
		s.t.Fatalf("categories: %v", err)
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, p := range []domain.Product{
		{Meta: domain.Meta{ID: "book-1"}, Name: "Go in Practice", CategoryID: "books", CategoryName: "Books", PriceCents: 3999},
		{Meta: domain.Meta{ID: "book-2"}, Name: "Cosmos Patterns", CategoryID: "books", CategoryName: "Books", PriceCents: 2999},
		{Meta: domain.Meta{ID: "game-1"}, Name: "Partition Quest", CategoryID: "games", CategoryName: "Games", PriceCents: 5999},
	} {
		p.Currency, p.PriceVersion, p.Version, p.LastUpdated = "USD", 1, 1, now
		p.Description = "A fine " + strings.ToLower(p.CategoryName[:len(p.CategoryName)-1]) + "."
		created, err := s.repos.Products.Create(ctx, p)
		if err != nil {
			s.t.Fatalf("product %s: %v", p.ID, err)
		}
		if _, err := s.repos.ProductSummaries.Put(ctx, domain.SummaryOfProduct(created)); err != nil {
			s.t.Fatalf("summary %s: %v", p.ID, err)
		}
	}
	var reviews []domain.Review
	for i, u := range []string{"rita", "sam"} {
		rv, err := s.repos.Reviews.Create(ctx, domain.Review{ProductID: "book-1", UserID: u, UserName: u,
			Rating: 4 + i, Title: "Good", Body: "Read it twice.", CreatedAt: now.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			s.t.Fatalf("review: %v", err)
		}
		reviews = append(reviews, rv)
	}
	// What the reviews feed does: embed the stats and the newest reviews.
	p, err := s.repos.Products.Update(ctx, "book-1", "", func(p *domain.Product) error {
		p.ReviewStats, p.TopReviews = domain.ComputeReviewStats(reviews)
		p.Version++
		return nil
	})
	if err != nil {
		s.t.Fatalf("review stats: %v", err)
	}
	if _, err := s.repos.ProductSummaries.Put(ctx, domain.SummaryOfProduct(p)); err != nil {
		s.t.Fatalf("summary: %v", err)
	}
}

// address is a valid shipping address.
var address = map[string]any{"paymentMethod": "pm_card_visa", "shippingAddress": map[string]any{
	"name": "Ada Lovelace", "line1": "1 Analytical St", "city": "London", "postalCode": "N1 9GU", "country": "GB",
}}

// TestSpecCopyMatchesRoot checks that ../openapi.yaml still reads as the
// embedded spec: it is a symbolic link to api/openapi.yaml.
func TestSpecCopyMatchesRoot(t *testing.T) {
	root, err := os.ReadFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, embedded) {
		t.Fatal("../openapi.yaml differs from api/openapi.yaml: make it a symbolic link to api/openapi.yaml")
	}
}
