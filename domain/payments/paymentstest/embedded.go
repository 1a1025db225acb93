package paymentstest

import (
	"testing"

	"github.com/reference-shop/shop/domain/payments/embedded"
)

// Embedded is the embedded provider in a temporary file, closed (and
// removed) when the test ends: the provider of every test that checks
// out.
func Embedded(tb testing.TB) *embedded.Provider {
	tb.Helper()
	p, err := embedded.Open("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}
