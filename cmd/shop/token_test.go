package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

// TestTokenTakesTheDevEndpointsBody: `shop token` takes the body the dev
// endpoint takes, so the workshop's token helper works unchanged on a
// shop with dev mode off (Cosmos): `token() { shop token "$1"; }`.
func TestTokenTakesTheDevEndpointsBody(t *testing.T) {
	type got struct {
		Sub, Name, Email string
		Roles            []string
	}
	for _, tc := range []struct {
		name string
		args []string
		want got
	}{
		{"Flags", []string{"--user", "bob"}, got{Sub: "bob", Name: "bob", Email: "bob@example.com"}},
		{"Body", []string{`{"userId":"rita","name":"Rita","email":"rita@example.com","admin":true}`},
			got{Sub: "rita", Name: "Rita", Email: "rita@example.com", Roles: []string{"admin"}}},
		{"BodyDefaults", []string{`{"userId":"alice"}`}, got{Sub: "alice", Name: "alice", Email: "alice@example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			env := envOf("SHOP_DATA_DIR="+t.TempDir(), "SHOP_JWT_SECRET="+testJWTSecret)
			if err := run(context.Background(), append([]string{"shop", "token"}, tc.args...), env, &out); err != nil {
				t.Fatal(err)
			}
			claims := jwt.MapClaims{}
			if _, err := jwt.ParseWithClaims(strings.TrimSpace(out.String()), claims, func(*jwt.Token) (any, error) {
				return []byte(testJWTSecret), nil
			}); err != nil {
				t.Fatalf("the token does not verify with the configured secret: %v", err)
			}
			g := got{Sub: str(claims["sub"]), Name: str(claims["name"]), Email: str(claims["email"])}
			if roles, ok := claims["roles"].([]any); ok {
				for _, r := range roles {
					g.Roles = append(g.Roles, str(r))
				}
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{`{"userId":""}`, `{"userId":"a/b"}`, `{"user":"x"}`, `not json`, `{"userId":"a"} extra`} {
		if err := run(context.Background(), []string{"shop", "token", bad}, envOf("SHOP_DATA_DIR="+t.TempDir(), "SHOP_JWT_SECRET="+testJWTSecret), &bytes.Buffer{}); err == nil {
			t.Errorf("shop token %s: no error", bad)
		}
	}
}

func str(v any) string { s, _ := v.(string); return s }
