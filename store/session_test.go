package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

func TestCheckSessionToken(t *testing.T) {
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"none", "", true},
		{"a Cosmos adapter's token", "carts/0:1#12#0=5,products/0:-1#7", true},
		{"at the bound", strings.Repeat("a", store.MaxSessionTokenBytes), true},
		{"over the bound", strings.Repeat("a", store.MaxSessionTokenBytes+1), false},
		{"a space", "carts/0:-1#5, products/0:-1#7", false},
		{"a semicolon", "carts/0:-1#5;x", false},
		{"a control character", "carts/0:-1#5\x00", false},
		{"non-ASCII", "carts/0:-1#5é", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := store.CheckSessionToken(tc.token)
			if tc.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tc.ok && domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("code = %q (%v), want %q", domain.ErrorCode(err), err, domain.EINVALID)
			}
		})
	}
}

func TestSession(t *testing.T) {
	t.Run("NoneWithoutTheStore", func(t *testing.T) {
		ctx, s := store.WithSession(context.Background(), "carts/0:-1#5")
		if store.SessionFrom(ctx) != s {
			t.Fatal("SessionFrom does not return the context's Session")
		}
		if got, want := s.Token(), "carts/0:-1#5"; got != want {
			t.Errorf("Token() = %q, want the client's %q", got, want)
		}
		if tok, ok := s.Issued(); ok {
			t.Errorf("Issued() = %q, true before any store call issued one", tok)
		}
	})
	t.Run("IssuedByTheStore", func(t *testing.T) {
		_, s := store.WithSession(context.Background(), "carts/0:-1#5")
		s.Update(func(tok string) string { return tok + ",orders/0:-1#2" })
		if tok, ok := s.Issued(); !ok || tok != "carts/0:-1#5,orders/0:-1#2" {
			t.Errorf("Issued() = %q, %v; want the updated token", tok, ok)
		}
	})
	t.Run("IssuedEmptyToDropTheClients", func(t *testing.T) {
		_, s := store.WithSession(context.Background(), "carts/0:-1#999")
		s.Update(func(string) string { return "" })
		if tok, ok := s.Issued(); !ok || tok != "" {
			t.Errorf("Issued() = %q, %v; want \"\", true", tok, ok)
		}
	})
	t.Run("ANilSessionIsNone", func(t *testing.T) {
		s := store.SessionFrom(context.Background())
		s.Update(func(string) string { return "x" })
		if tok, ok := s.Issued(); ok || tok != "" || s.Token() != "" {
			t.Errorf("a nil Session holds %q", tok)
		}
	})
}
