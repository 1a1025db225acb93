package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reference-shop/shop/api/lru"
)

// RoleAdmin is the role of the admin routes.
const RoleAdmin = "admin"

// claims are the Bearer token's: sub is the userId, the partition key of
// all of the user's data.
type claims struct {
	Name  string   `json:"name,omitempty"`
	Email string   `json:"email,omitempty"`
	Roles []string `json:"roles,omitempty"`
	jwt.RegisteredClaims
}

// UnmarshalJSON refuses time claims that are not JSON numbers: the jwt
// package reads "exp":"9999999999" as a number, which would let a token
// carry a time no issuer of ours writes.
func (c *claims) UnmarshalJSON(b []byte) error {
	var times struct {
		Exp json.RawMessage `json:"exp"`
		Nbf json.RawMessage `json:"nbf"`
		Iat json.RawMessage `json:"iat"`
	}
	if err := json.Unmarshal(b, &times); err != nil {
		return err
	}
	for _, raw := range []json.RawMessage{times.Exp, times.Nbf, times.Iat} {
		if len(raw) == 0 {
			continue
		}
		if !isJSONNumber(raw) {
			return errors.New("a time claim is not a number")
		}
		// Seconds past 9999 overflow the jwt package's time arithmetic
		// (an iat of 1e300 would compare as in the past): no issuer of
		// ours writes one.
		if f, err := strconv.ParseFloat(string(raw), 64); err != nil || f < 0 || f > maxTimeClaim {
			return errors.New("a time claim is out of range")
		}
	}
	type plain claims // without this method
	return json.Unmarshal(b, (*plain)(c))
}

// maxTimeClaim is the last second of the year 9999.
const maxTimeClaim = 253402300799

func isJSONNumber(raw json.RawMessage) bool {
	return raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')
}

// user is the authenticated caller.
type user struct {
	ID    string
	Name  string
	Email string
	Admin bool
}

// userFrom is the caller authenticate accepted (the zero user on a route
// without it).
func userFrom(ctx context.Context) user {
	if u := bearerFrom(ctx).user; u != nil {
		return *u
	}
	return user{}
}

// IssueToken signs an HS256 token for userID valid for ttl from now.
func IssueToken(secret []byte, userID, name, email string, admin bool, ttl time.Duration) (string, error) {
	return issueToken(secret, time.Now(), userID, name, email, admin, ttl)
}

// issueToken is IssueToken at the time now.
func issueToken(secret []byte, now time.Time, userID, name, email string, admin bool, ttl time.Duration) (string, error) {
	c := claims{
		Name:  name,
		Email: email,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	if admin {
		c.Roles = []string{RoleAdmin}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
}

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header, or "". The scheme name is case-insensitive (RFC 9110 §11.1).
func bearerToken(r *http.Request) string {
	scheme, raw, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return raw
}

// TokenClockSkew is how far the clock of the instance that issued a token
// may be from this one's: exp, nbf and iat are each checked with it, so a
// token issued "in the future" by a clock a little ahead is still good,
// and one issued further ahead is not.
const TokenClockSkew = time.Minute

// verifiedToken is what a token proved, once its signature and times
// verified: its claims, and the caller authenticate accepts them as, or
// why it refuses them. Both are worked out once per token, with the
// signature, not on every request that sends it.
type verifiedToken struct {
	claims claims
	// caller is the signed-in user the claims name (shared by every
	// request with the token: nobody writes into it); nil when refusal
	// says why the claims are not acceptable.
	caller  *user
	refusal string
}

// accept is what authenticate makes of verified claims: a sub that is a
// valid id, because it becomes a partition key, and a name and email fit
// to store, because they are copied into orders.
func accept(c claims) verifiedToken {
	v := verifiedToken{claims: c}
	switch {
	case checkID("sub", c.Subject) != nil:
		v.refusal = "the token's subject is not a valid user id"
	case !claimText(c.Name) || !claimText(c.Email):
		v.refusal = "the token's name or email is not valid text"
	default:
		v.caller = &user{ID: c.Subject, Name: c.Name, Email: c.Email, Admin: slices.Contains(c.Roles, RoleAdmin)}
	}
	return v
}

// tokenVerifier checks a token's signature and times: HS256 only (so
// alg:none and key-confusion tokens are refused), an expiry required, not
// before nbf, not issued in the future, give or take TokenClockSkew; then
// what authenticate would make of its claims (accept). A token that
// verified is kept (keepVerified), so a signed-in screen pays the HMAC,
// the claims' decoding and their checks once per token, not once per
// request.
func tokenVerifier(secret []byte, now func() time.Time) func(raw string) (verifiedToken, error) {
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(TokenClockSkew),
		jwt.WithTimeFunc(now),
	)
	keyFunc := func(*jwt.Token) (any, error) { return secret, nil }
	return keepVerified(func(raw string) (verifiedToken, error) {
		var c claims
		if _, err := parser.ParseWithClaims(raw, &c, keyFunc); err != nil {
			return verifiedToken{claims: c}, err
		}
		return accept(c), nil
	}, now, verifiedTokens)
}

// verifiedTokens bounds the tokens keepVerified keeps: a few MB.
const verifiedTokens = 16384

// keepVerified wraps verify with a cache of the tokens it accepted, by
// their exact text, at most maxEntries of them, the least recently used
// out first. Only a token that verified enters, so a forged one cannot
// fill the cache. A kept token is good until its expiry (give or take
// TokenClockSkew, as verify has it): past that, verify runs again and
// refuses it. What else verify checks cannot turn false with time: the
// signature, the claims' form, nbf and iat, which only move into the past.
func keepVerified(verify func(raw string) (verifiedToken, error), now func() time.Time, maxEntries int) func(raw string) (verifiedToken, error) {
	kept := lru.New[string](maxEntries, maxEntries<<10, func(v verifiedToken) int { return len(v.claims.Name) + len(v.claims.Email) + 128 }, nil)
	return func(raw string) (verifiedToken, error) {
		if v, ok := kept.Get(raw); ok && now().Before(v.claims.ExpiresAt.Add(TokenClockSkew)) {
			return v, nil
		}
		v, err := verify(raw)
		if err == nil && v.claims.ExpiresAt != nil {
			kept.Put(raw, v)
		}
		return v, err
	}
}

// DevTokenTTL is how long a dev token lasts.
const DevTokenTTL = 12 * time.Hour

type devTokenRequest struct {
	UserID string `json:"userId" validate:"required,shopid"`
	Name   string `json:"name" validate:"max=200,line"`
	Email  string `json:"email" validate:"omitempty,email,max=254"`
	Admin  bool   `json:"admin"`
}

type tokenResponse struct {
	Token string `json:"token"`
}

// handleDevToken signs a token for anyone who asks: registered in dev
// mode only (routes.go), so production has no such door.
func handleDevToken(secret []byte, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[devTokenRequest](r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		tok, err := issueToken(secret, now(), req.UserID, req.Name, req.Email, req.Admin, DevTokenTTL)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store") // a credential
		encode(w, http.StatusOK, tokenResponse{Token: tok})
	}
}
