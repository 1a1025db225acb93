package client

import (
	"context"
	"crypto/rand"
	"net/http"
)

// Bearer signs a call in: it sets `Authorization: Bearer <token>`. Pass it
// to one call, or to every call of a client with WithRequestEditorFn.
func Bearer(token string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// NewIdempotencyKey returns a fresh Idempotency-Key for a checkout: 26
// characters the server accepts (its id rule refuses / \ ? #). Keep it
// until the checkout has an answer: sending the same key and body again,
// after a timeout or a lost answer, returns the order the first placed
// instead of placing a second.
func NewIdempotencyKey() string {
	return rand.Text()
}
