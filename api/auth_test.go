package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reference-shop/shop/api"
)

func TestAuth(t *testing.T) {
	s := newShop(t)
	s.fixture()

	expired, err := api.IssueToken(testSecret, "alice", "Alice", "a@example.com", false, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wrongKey, err := api.IssueToken([]byte("another-secret-another-secret-!!"), "alice", "Alice", "a@example.com", true, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{
		"sub": "alice", "roles": []string{"admin"}, "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	noExpiry, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice"}).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	hs512, err := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	badSub, err := api.IssueToken(testSecret, "../etc", "x", "x@example.com", false, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		header string
		path   string
		want   int
	}{
		{"Missing", "", "/v1/cart", http.StatusUnauthorized},
		{"NotBearer", "Basic YWxpY2U6cHc=", "/v1/cart", http.StatusUnauthorized},
		{"Garbage", "Bearer not.a.token", "/v1/cart", http.StatusUnauthorized},
		{"Expired", "Bearer " + expired, "/v1/cart", http.StatusUnauthorized},
		{"WrongSignature", "Bearer " + wrongKey, "/v1/cart", http.StatusUnauthorized},
		{"AlgNone", "Bearer " + none, "/v1/admin/orders", http.StatusUnauthorized},
		{"NoExpiry", "Bearer " + noExpiry, "/v1/cart", http.StatusUnauthorized},
		{"OtherAlgorithm", "Bearer " + hs512, "/v1/cart", http.StatusUnauthorized},
		{"InvalidSubject", "Bearer " + badSub, "/v1/cart", http.StatusUnauthorized},
		{"CustomerOnAdminRoute", "Bearer " + token(t, "alice", false), "/v1/admin/orders", http.StatusForbidden},
		{"CustomerOnFeeds", "Bearer " + token(t, "alice", false), "/v1/admin/feeds", http.StatusForbidden},
		{"CustomerOnThroughput", "Bearer " + token(t, "alice", false), "/v1/admin/throughput", http.StatusForbidden},
		{"Valid", "Bearer " + token(t, "alice", false), "/v1/cart", http.StatusOK},
		{"SchemeIsCaseInsensitive", "bearer " + token(t, "alice", false), "/v1/cart", http.StatusOK},
		{"EmptyBearer", "Bearer ", "/v1/cart", http.StatusUnauthorized},
		{"AdminOnAdminRoute", "Bearer " + token(t, "boss", true), "/v1/admin/orders", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.header != "" {
				h["Authorization"] = tc.header
			}
			r := s.do(req{method: "GET", path: tc.path, header: h}).want(tc.want)
			if tc.want == http.StatusUnauthorized && r.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	t.Run("CustomerCannotWriteProducts", func(t *testing.T) {
		alice := token(t, "alice", false)
		s.do(req{method: "POST", path: "/v1/products", token: alice, body: map[string]any{"name": "x", "priceCents": 1, "categoryId": "books"}}).want(403)
		s.do(req{method: "DELETE", path: "/v1/products/book-1", token: alice}).want(403)
		s.do(req{method: "PUT", path: "/v1/categories/books", token: alice, body: map[string]string{"name": "Mine"}}).want(403)
		s.do(req{method: "PATCH", path: "/v1/admin/orders/alice/o-1", token: alice, body: map[string]string{"status": "shipped"}}).want(403)
	})
}

func TestDevToken(t *testing.T) {
	t.Run("DevModeIssuesAWorkingToken", func(t *testing.T) {
		s := newShop(t)
		r := s.do(req{method: "POST", path: "/v1/dev/token", body: map[string]any{"userId": "dev", "name": "Dev", "email": "dev@example.com", "admin": true}}).want(200)
		tok := decodeBody[struct{ Token string }](t, r).Token
		s.do(req{method: "GET", path: "/v1/admin/orders", token: tok}).want(200)
		var claims struct {
			jwt.RegisteredClaims
			Roles []string `json:"roles"`
		}
		if _, err := jwt.ParseWithClaims(tok, &claims, func(*jwt.Token) (any, error) { return testSecret, nil }); err != nil {
			t.Fatalf("parse dev token: %v", err)
		}
		if claims.Subject != "dev" || len(claims.Roles) != 1 || claims.Roles[0] != "admin" {
			t.Errorf("claims = %+v", claims)
		}
		if left := time.Until(claims.ExpiresAt.Time); left < 11*time.Hour || left > 12*time.Hour {
			t.Errorf("token expires in %v, want about 12h", left)
		}
	})
	t.Run("BadUserIDIs400", func(t *testing.T) {
		s := newShop(t)
		s.do(req{method: "POST", path: "/v1/dev/token", body: map[string]any{"userId": "a/b"}}).want(400)
	})
	t.Run("OffOutsideDevMode", func(t *testing.T) {
		s := newShop(t, func(o *options) { o.devMode = false })
		s.do(req{method: "POST", path: "/v1/dev/token", body: map[string]any{"userId": "dev", "admin": true}}).want(404)
	})
}

// User-specific answers, and tokens, must not be kept by shared caches;
// the public catalog may be.
func TestCacheControlNoStoreOnUserResponses(t *testing.T) {
	s := newShop(t)
	tok := token(t, "alice", false)
	for _, tc := range []struct {
		name string
		r    req
		want string
	}{
		{"Cart", req{method: "GET", path: "/v1/cart", token: tok}, "no-store"},
		{"Orders", req{method: "GET", path: "/v1/orders", token: tok}, "no-store"},
		{"Summary", req{method: "GET", path: "/v1/me/summary", token: tok}, "no-store"},
		{"Unauthorized", req{method: "GET", path: "/v1/cart"}, "no-store"},
		{"DevToken", req{method: "POST", path: "/v1/dev/token", body: map[string]any{"userId": "bob"}}, "no-store"},
		{"Categories", req{method: "GET", path: "/v1/categories"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := s.do(tc.r)
			if got := w.Header().Get("Cache-Control"); got != tc.want {
				t.Errorf("%s %s: Cache-Control %q, want %q", tc.r.method, tc.r.path, got, tc.want)
			}
		})
	}
}
