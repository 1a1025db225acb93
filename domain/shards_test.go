package domain_test

import (
	"testing"

	"github.com/reference-shop/shop/domain"
)

// TestShardKeys: a shard's partition key gives back its product and
// shard, and is never a product's own key (ids never hold "#").
func TestShardKeys(t *testing.T) {
	for _, tc := range []struct {
		product string
		k       int
		key     string
	}{{"lamp", 0, "lamp"}, {"lamp", 3, "3#lamp"}, {"p-0051", 15, "15#p-0051"}, {"12", 2, "2#12"}} {
		if got := domain.ShardKey(tc.product, tc.k); got != tc.key {
			t.Errorf("ShardKey(%q, %d) = %q, want %q", tc.product, tc.k, got, tc.key)
		}
		if p, k := domain.ShardOf(tc.key); p != tc.product || k != tc.k {
			t.Errorf("ShardOf(%q) = %q, %d; want %q, %d", tc.key, p, k, tc.product, tc.k)
		}
		if tc.k > 0 && domain.ValidateID("productId", tc.key) == nil {
			t.Errorf("shard key %q is a valid product id", tc.key)
		}
	}
	for _, key := range []string{"x#lamp", "#lamp"} {
		if p, k := domain.ShardOf(key); p != key || k != 0 {
			t.Errorf("ShardOf(%q) = %q, %d; want the key itself, 0", key, p, k)
		}
	}
}
