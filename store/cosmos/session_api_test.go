package cosmos

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// Read-your-writes across two instances of the shop, end to end: a
// client writes through instance A, carries A's X-Session-Token to
// instance B, and B's read sends the write's token to Cosmos. Each
// instance is the API over its own Store and client, as two `shop serve`
// processes would be.
func TestSessionTokenAcrossInstances(t *testing.T) {
	g := newGateway(t)
	secret := []byte("session-test-secret-of-32-bytes!")
	instance := func(endpoint string) http.Handler {
		return api.NewServer(api.Deps{Writes: writes.New(repo.New(store.Metered(g.open(endpoint)), 0), nil, nil), Store: g.open(endpoint), Secret: secret, SessionTokens: true})
	}
	a := instance("")
	b := instance("http://localhost:" + g.srv.URL[len("http://127.0.0.1:"):])
	admin, err := api.IssueToken(secret, "ada", "Ada", "ada@example.com", true, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	call := func(h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+admin)
		if body != "" {
			r.Header.Set("Content-Type", "application/merge-patch+json")
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}

	g.respond("0:-1#5")
	seed := repo.NewProducts(g.open(""))
	if _, err := seed.Create(context.Background(), domain.Product{Meta: domain.Meta{ID: "p1"}, Name: "Lamp",
		CategoryID: "home", CategoryName: "Home", PriceCents: 1200, Currency: "USD", PriceVersion: 1, Version: 1}); err != nil {
		t.Fatal(err)
	}

	g.respond("0:-1#12")
	patched := call(a, http.MethodPatch, "/v1/products/p1", `{"name":"Desk lamp"}`, nil)
	if patched.Code != http.StatusOK {
		t.Fatalf("PATCH on A = %d: %s", patched.Code, patched.Body)
	}
	token := patched.Header().Get("X-Session-Token")
	if token == "" || strings.Contains(token, "#12") || strings.Contains(token, "products") {
		t.Fatalf("A's X-Session-Token = %q, want a sealed token that shows neither containers nor LSNs", token)
	}

	g.respond("0:-1#9") // B's reads are answered by a replica behind A's write
	g.sent()
	if rec := call(b, http.MethodGet, "/v1/products/p1", "", nil); rec.Code != http.StatusOK {
		t.Fatalf("GET on B = %d: %s", rec.Code, rec.Body)
	}
	read := call(b, http.MethodGet, "/v1/products/p1", "", map[string]string{"X-Session-Token": token})
	if read.Code != http.StatusOK {
		t.Fatalf("GET on B with the token = %d: %s", read.Code, read.Body)
	}
	// Without the header B knows nothing of A's write; with it, the read
	// asks for a replica that has it.
	wantSent(t, g, "GET ", "GET 0:-1#12")
	carried := read.Header().Get("X-Session-Token")
	if rec := call(a, http.MethodGet, "/v1/products/p1", "", map[string]string{"X-Session-Token": carried}); rec.Code != http.StatusOK {
		t.Fatalf("GET on A with B's token = %d: %s", rec.Code, rec.Body)
	}
	wantSent(t, g, "GET 0:-1#12")

	// Only a token an instance sealed opens: a store token written by
	// hand, or a sealed one edited, is a 400 that reaches no store, and
	// B's own tokens are as they were.
	edited := []byte(token)
	edited[len(edited)-3] ^= 'A' ^ 'B'
	for _, forged := range []string{"products/0:-1#999999", string(edited), token + " "} {
		rec := call(b, http.MethodGet, "/v1/products/p1", "", map[string]string{"X-Session-Token": forged})
		if rec.Code != http.StatusBadRequest || rec.Header().Get("X-Store-Operations") != "0" {
			t.Errorf("X-Session-Token %q = %d, %s operations; want 400 before any store call: %s",
				forged, rec.Code, rec.Header().Get("X-Store-Operations"), rec.Body)
		}
	}
	if rec := call(b, http.MethodGet, "/v1/products/p1", "", nil); rec.Code != http.StatusOK {
		t.Fatalf("GET on B = %d: %s", rec.Code, rec.Body)
	}
	wantSent(t, g, "GET 0:-1#9")
}
