package main

import (
	"io"
	"testing"

	"github.com/reference-shop/shop/domain"
)

func TestStatusBucketsSetting(t *testing.T) {
	c, err := parseConfig("serve", nil, envOf(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.StatusBuckets, domain.DefaultStatusBuckets; got != want {
		t.Errorf("default status buckets = %d, want %d", got, want)
	}
	if c, err = parseConfig("serve", []string{"--status-buckets", "4"}, envOf("SHOP_STATUS_BUCKETS=8"), io.Discard); err != nil || c.StatusBuckets != 4 {
		t.Errorf("--status-buckets 4 over SHOP_STATUS_BUCKETS=8: %d, %v; want 4 (flags first)", c.StatusBuckets, err)
	}
	for _, bad := range []string{"SHOP_STATUS_BUCKETS=0", "SHOP_STATUS_BUCKETS=33", "SHOP_STATUS_BUCKETS=many"} {
		if _, err := parseConfig("serve", nil, envOf(bad), io.Discard); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
