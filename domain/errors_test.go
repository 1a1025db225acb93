package domain_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		wantCode string
		wantMsg  string
	}{
		{"valid", "p-0042", "", ""},
		{"valid with spaces and unicode", "café crème 1", "", ""},
		{"1023 bytes", strings.Repeat("x", 1023), "", ""},
		{"empty", "", domain.EINVALID, "productId must not be empty"},
		{"1024 bytes", strings.Repeat("x", 1024), domain.EINVALID, "productId is 1024 bytes; at most 1023 are allowed"},
		{"1024 bytes of multibyte runes", strings.Repeat("é", 512), domain.EINVALID, "productId is 1024 bytes; at most 1023 are allowed"},
		{"slash", "a/b", domain.EINVALID, `productId must not contain / \ ? or #`},
		{"backslash", `a\b`, domain.EINVALID, `productId must not contain / \ ? or #`},
		{"question mark", "a?b", domain.EINVALID, `productId must not contain / \ ? or #`},
		{"hash", "a#b", domain.EINVALID, `productId must not contain / \ ? or #`},
		// azcosmos writes a batch operation's id into the body unescaped.
		{"double quote", `a"b`, domain.EINVALID, `productId must not contain " or a control character`},
		{"line feed", "a\nb", domain.EINVALID, `productId must not contain " or a control character`},
		{"NUL", "a\x00b", domain.EINVALID, `productId must not contain " or a control character`},
		{"DEL", "a\x7fb", domain.EINVALID, `productId must not contain " or a control character`},
		{"C1 control", "a\u0085b", domain.EINVALID, `productId must not contain " or a control character`},
		{"invalid UTF-8", "a\xffb", domain.EINVALID, "productId is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.ValidateID("productId", tt.id)
			if got := domain.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("code = %q, want %q (err %v)", got, tt.wantCode, err)
			}
			if err == nil {
				return
			}
			if got := domain.ErrorMessage(err); got != tt.wantMsg {
				t.Errorf("message = %q, want %q", got, tt.wantMsg)
			}
		})
	}
}

func TestErrorCodeAndMessage(t *testing.T) {
	notFound := domain.Errorf(domain.ENOTFOUND, "product %q not found", "p1")
	tests := []struct {
		name     string
		err      error
		wantCode string
		wantMsg  string
	}{
		{"nil", nil, "", "internal error"},
		{"domain error", notFound, domain.ENOTFOUND, `product "p1" not found`},
		{"wrapped domain error", fmt.Errorf("reading: %w", notFound), domain.ENOTFOUND, `product "p1" not found`},
		{"twice wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", domain.Errorf(domain.EPRECONDITION, "stale"))), domain.EPRECONDITION, "stale"},
		{"joined: the first domain error", errors.Join(io.EOF, domain.Errorf(domain.ECONFLICT, "taken")), domain.ECONFLICT, "taken"},
		{"plain error is internal with a safe message", errors.New("bolt: database at /secret/path is locked"), domain.EINTERNAL, "internal error"},
		{"wrapped plain error", fmt.Errorf("open: %w", io.ErrUnexpectedEOF), domain.EINTERNAL, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.ErrorCode(tt.err); got != tt.wantCode {
				t.Errorf("ErrorCode = %q, want %q", got, tt.wantCode)
			}
			if tt.err == nil {
				return
			}
			if got := domain.ErrorMessage(tt.err); got != tt.wantMsg {
				t.Errorf("ErrorMessage = %q, want %q", got, tt.wantMsg)
			}
		})
	}
}

func TestErrorf(t *testing.T) {
	err := domain.Errorf(domain.ECONFLICT, "order %s is %s", "o1", "shipped")
	if got, want := err.Code, domain.ECONFLICT; got != want {
		t.Errorf("Code = %q, want %q", got, want)
	}
	if got, want := err.Message, "order o1 is shipped"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if got, want := err.Error(), "conflict: order o1 is shipped"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !domain.IsCode(err, domain.ECONFLICT) || domain.IsCode(err, domain.ENOTFOUND) {
		t.Errorf("IsCode disagrees with the code %q", err.Code)
	}
	if domain.IsCode(nil, domain.EINTERNAL) {
		t.Error("IsCode(nil, EINTERNAL) = true, want false")
	}
}
