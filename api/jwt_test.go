package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reference-shop/shop/api"
)

// TestTokenTimeClaims: a token issued in the future (beyond the clock-skew
// allowance), or whose time claims are not JSON numbers, is a 401; within
// the allowance it is accepted.
func TestTokenTimeClaims(t *testing.T) {
	s := newShop(t)
	now := time.Now()
	hour := now.Add(time.Hour).Unix()
	sign := func(c jwt.MapClaims) string {
		t.Helper()
		c["sub"] = "alice"
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(testSecret)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	skew := int64(api.TokenClockSkew / time.Second)
	for _, tc := range []struct {
		name   string
		claims jwt.MapClaims
		want   int
	}{
		{"Valid", jwt.MapClaims{"iat": now.Unix(), "exp": hour}, 200},
		{"IssuedWithinSkew", jwt.MapClaims{"iat": now.Unix() + skew/2, "exp": hour}, 200},
		{"IssuedInTheFuture", jwt.MapClaims{"iat": now.Unix() + 10*skew, "exp": hour}, 401},
		{"IssuedFarInTheFuture", jwt.MapClaims{"iat": now.Add(365 * 24 * time.Hour).Unix(), "exp": hour}, 401},
		{"NotBeforeInTheFuture", jwt.MapClaims{"nbf": now.Unix() + 10*skew, "exp": hour}, 401},
		{"ExpiryAsString", jwt.MapClaims{"exp": "9999999999"}, 401},
		{"ExpiryAsStringWithIat", jwt.MapClaims{"iat": now.Unix(), "exp": "9999999999"}, 401},
		{"IssuedAtAsString", jwt.MapClaims{"iat": "0", "exp": hour}, 401},
		{"NotBeforeAsString", jwt.MapClaims{"nbf": "0", "exp": hour}, 401},
		{"ExpiryAsBoolean", jwt.MapClaims{"exp": true}, 401},
		{"ExpiredBeyondSkew", jwt.MapClaims{"exp": now.Unix() - 2*skew}, 401},
		// Numbers past int64 seconds overflowed the jwt package's time
		// arithmetic and read as the past.
		{"IssuedAtHuge", jwt.MapClaims{"iat": 1e300, "exp": hour}, 401},
		{"IssuedAtMaxInt64", jwt.MapClaims{"iat": json.Number("9223372036854775807"), "exp": hour}, 401},
		{"NotBeforeHuge", jwt.MapClaims{"nbf": 1e19, "exp": hour}, 401},
		{"IssuedAtNegative", jwt.MapClaims{"iat": -1, "exp": hour}, 401},
		// The name and email are copied into orders: stored text's rules.
		{"NameWithBidiOverride", jwt.MapClaims{"name": "ab\u202ecd", "exp": hour}, 401},
		{"EmailWithControl", jwt.MapClaims{"email": "a\u0007@example.com", "exp": hour}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.on(t).do(req{method: "GET", path: "/v1/cart", token: sign(tc.claims)}).want(tc.want)
		})
	}
}
