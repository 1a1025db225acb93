package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reference-shop/shop/domain/payments"
	"github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/domain/payments/stripe"
)

// openPayments opens the payment provider cfg selects: Stripe with
// SHOP_STRIPE_KEY, the embedded provider otherwise (its state in
// payments.db beside the embedded store's shop.db). It returns the
// provider, a description for the start-up line and its close.
func openPayments(cfg config) (payments.Provider, string, func(), error) {
	if cfg.StripeKey != "" {
		return stripe.New(cfg.StripeKey, stripe.WithBaseURL(cfg.StripeURL)), "payments by Stripe at " + cfg.StripeURL, func() {}, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, "", nil, err
	}
	path := filepath.Join(cfg.DataDir, "payments.db")
	p, err := embedded.Open(path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("payments: %w", err)
	}
	return p, "payments by the embedded provider (Stripe's test cards) in " + path, func() { _ = p.Close() }, nil
}
