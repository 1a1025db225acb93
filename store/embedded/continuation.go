package embedded

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/reference-shop/shop/domain"
)

// Continuation tokens are opaque to callers (as on Cosmos): base64url of a
// small JSON payload, a dot, and a truncated HMAC-SHA256 of the payload
// under a secret kept in the file. A token that was edited, cut, made up
// or minted by another store fails the MAC; a genuine token of another
// container, feed range or query fails the checks after it. Each is
// EINVALID, never a panic (FuzzContinuation).
const (
	tokenVersion  = 1
	tokenQuery    = "q"
	tokenFeed     = "f"
	maxTokenBytes = 16 << 10
	macBytes      = 16
)

type token struct {
	V         int    `json:"v"`
	Kind      string `json:"k"`
	Container string `json:"c"`
	// Query: the query's shape hash and the last item returned (its sort
	// value, absent when the item had none, its id and partition key).
	Shape string          `json:"h,omitempty"`
	Sort  json.RawMessage `json:"s,omitempty"`
	ID    string          `json:"i,omitempty"`
	PK    string          `json:"p,omitempty"`
	// Feed: the range and the last LSN read in it.
	Range string `json:"r,omitempty"`
	LSN   uint64 `json:"l,omitempty"`
}

func encodeToken(secret []byte, t token) (string, error) {
	t.V = tokenVersion
	payload, err := json.Marshal(t)
	if err != nil {
		return "", domain.Errorf(domain.EINTERNAL, "continuation token: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac(secret, payload)), nil
}

func mac(secret, payload []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(payload)
	return m.Sum(nil)[:macBytes]
}

// decodeToken verifies and parses a token of the given kind for container.
func decodeToken(secret []byte, s, kind, container string) (token, error) {
	if len(s) > maxTokenBytes {
		return token{}, invalidToken("it is longer than any token this store makes")
	}
	enc, sig, ok := strings.Cut(s, ".")
	if !ok {
		return token{}, invalidToken("it is not a token this store made")
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(enc)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return token{}, invalidToken("it is not valid base64")
	}
	if !hmac.Equal(got, mac(secret, payload)) {
		return token{}, invalidToken("it was altered or made by another store")
	}
	t, err := parseToken(payload)
	if err != nil {
		return token{}, err
	}
	if t.Kind != kind {
		return token{}, invalidToken("it belongs to another kind of request")
	}
	if t.Container != container {
		return token{}, invalidToken("it belongs to container " + t.Container)
	}
	return t, nil
}

// parseToken parses a payload strictly: known fields, supported version,
// and a sort value that is valid JSON.
func parseToken(payload []byte) (token, error) {
	d := json.NewDecoder(bytes.NewReader(payload))
	d.DisallowUnknownFields()
	var t token
	if err := d.Decode(&t); err != nil || d.More() {
		return token{}, invalidToken("its payload is not valid")
	}
	if t.V != tokenVersion {
		return token{}, invalidToken("its version is not supported")
	}
	if t.Kind != tokenQuery && t.Kind != tokenFeed {
		return token{}, invalidToken("its kind is unknown")
	}
	if len(t.Sort) > 0 && !json.Valid(t.Sort) {
		return token{}, invalidToken("its position is not valid")
	}
	return t, nil
}

func invalidToken(why string) error {
	return domain.Errorf(domain.EINVALID, "continuation token refused: %s", why)
}
