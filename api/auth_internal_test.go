package api

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestVerifiedTokensAreKept: a token that verified is not verified again
// on the next request, until it expires (give or take TokenClockSkew),
// when verify runs again and its refusal stands; a token that did not
// verify is never kept.
func TestVerifiedTokensAreKept(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	calls := map[string]int{}
	exp := t0.Add(time.Hour)
	verify := func(raw string) (verifiedToken, error) {
		calls[raw]++
		if raw == "forged" || now.After(exp.Add(TokenClockSkew)) {
			return verifiedToken{}, errors.New("refused")
		}
		return accept(claims{Name: "Alice", RegisteredClaims: jwt.RegisteredClaims{Subject: "alice", ExpiresAt: jwt.NewNumericDate(exp)}}), nil
	}
	check := keepVerified(verify, func() time.Time { return now }, 8)

	for range 3 {
		c, err := check("good")
		if err != nil || c.claims.Subject != "alice" || c.caller == nil || c.caller.ID != "alice" {
			t.Fatalf("good token: %+v, %v", c, err)
		}
		if _, err := check("forged"); err == nil {
			t.Fatal("a forged token verified")
		}
	}
	if calls["good"] != 1 {
		t.Errorf("a good token was verified %d times in 3 requests, want 1", calls["good"])
	}
	if calls["forged"] != 3 {
		t.Errorf("a refused token was verified %d times in 3 requests, want 3 (never kept)", calls["forged"])
	}

	now = exp.Add(TokenClockSkew / 2)
	if _, err := check("good"); err != nil {
		t.Errorf("within the clock skew of its expiry: %v", err)
	}
	now = exp.Add(2 * TokenClockSkew)
	if _, err := check("good"); err == nil {
		t.Error("a kept token was accepted past its expiry")
	}
}

// TestTokenVerifierRefusesAnExpiredKeptToken: the shop's own verifier,
// over the same token before and after its expiry.
func TestTokenVerifierRefusesAnExpiredKeptToken(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	t0 := time.Now()
	now := t0
	verify := tokenVerifier(secret, func() time.Time { return now })
	tok, err := issueToken(secret, t0, "alice", "Alice", "", false, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(tok); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(time.Hour + 2*TokenClockSkew)
	if _, err := verify(tok); err == nil {
		t.Error("an expired token verified because it was kept")
	}
}
