package cosmos

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/reference-shop/shop/domain"
)

// Continuations leave the store sealed: Cosmos's token, untouched, plus a
// checksum over the token and what it continues (database, container, and
// the query; a feed token's ranges are inside it, see feedtoken.go). The
// token stays opaque and is handed back to the SDK as Cosmos issued it;
// the seal only lets a token that was altered, or that belongs to another
// query or container, be refused as EINVALID here (and a feed token of
// another range by its own ranges), as the port promises, instead of being sent
// and read as something else (the SDK silently restarts a change feed
// from the beginning on a token it cannot parse). The checksum is an
// integrity check, not a secret: a token grants nothing a caller could not
// do with the query itself.

var b64 = base64.RawURLEncoding

// seal wraps token for scope; "" stays "" (the last page).
func seal(scope, token string) string {
	if token == "" {
		return ""
	}
	return b64.EncodeToString([]byte(token)) + "." + b64.EncodeToString(checksum(scope, token))
}

// unseal returns the Cosmos token inside sealed if it was made for scope.
func unseal(scope, sealed string) (string, error) {
	body, sum, ok := strings.Cut(sealed, ".")
	if !ok {
		return "", badContinuation()
	}
	token, err1 := b64.DecodeString(body)
	got, err2 := b64.DecodeString(sum)
	if err1 != nil || err2 != nil || subtle.ConstantTimeCompare(got, checksum(scope, string(token))) != 1 {
		return "", badContinuation()
	}
	return string(token), nil
}

func checksum(scope, token string) []byte {
	h := sha256.Sum256([]byte(scope + "\x00" + token))
	return h[:12]
}

func badContinuation() error {
	return domain.Errorf(domain.EINVALID, "the continuation token is not one this query or feed range returned")
}

// queryScope names a query for its continuations: the container, the
// partition and the rendered SQL with its parameters. The page size is
// left out: Cosmos lets it change between pages.
func (c *Container) queryScope(pk string, sq sqlQuery) string {
	params, _ := json.Marshal(sq.Params)
	return strings.Join([]string{"query", c.store.cfg.Database, c.name, pk, sq.Text, string(params)}, "\x00")
}

// feedScope names the change feed of the container. The range a token
// continues is not part of it: it is inside the token, checked against
// the range read (feedtoken.go), so that a continuation of a range that
// split stays valid on its children.
func (c *Container) feedScope() string {
	return strings.Join([]string{"feed", c.store.cfg.Database, c.name}, "\x00")
}
