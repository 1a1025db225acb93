package domain_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"shop/domain"
)

func TestStatusDayKeyPutsEveryOrderInExactlyOneBucketOfItsDay(t *testing.T) {
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	created := day.Add(13 * time.Hour)
	perBucket := make([]int, domain.StatusBuckets)
	const orders = 16000
	for i := range orders {
		id := domain.OrderID(created, fmt.Sprintf("%06x", i*7919))
		for _, status := range []string{domain.StatusPlaced, domain.StatusShipped, domain.StatusDelivered, domain.StatusCancelled} {
			key := domain.StatusDayKey(status, created, id)
			keys := domain.StatusDayKeys(status, day)
			if n := count(keys, key); n != 1 {
				t.Fatalf("order %s %s: key %q is %d of the day's keys %v, want exactly 1", id, status, key, n, keys)
			}
			if !strings.HasPrefix(key, domain.StatusDay(status, created)+":") || !domain.IsBucketedStatusDay(key) {
				t.Fatalf("key %q is not status:day:bucket", key)
			}
			// A status change moves the summary to the same bucket of
			// another status: the bucket is the order's, not the status's.
			if got, want := strings.TrimPrefix(key, domain.StatusDay(status, created)), fmt.Sprintf(":%02d", domain.StatusBucket(id)); got != want {
				t.Fatalf("order %s %s: bucket suffix %q, want %q", id, status, got, want)
			}
		}
		perBucket[domain.StatusBucket(id)]++
	}
	mean := orders / domain.StatusBuckets
	for b, n := range perBucket {
		if n < mean*8/10 || n > mean*12/10 {
			t.Errorf("bucket %d holds %d of %d orders, want within 20%% of %d: the hash does not spread ids", b, n, orders, mean)
		}
	}
}

func TestStatusDayKeysAreDistinctAndInBucketOrder(t *testing.T) {
	keys := domain.StatusDayKeys(domain.StatusPlaced, time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC))
	if got, want := len(keys), domain.StatusBuckets; got != want {
		t.Fatalf("%d keys, want %d", got, want)
	}
	if got, want := keys[7], "placed:2026-11-29:07"; got != want {
		t.Errorf("keys[7] = %q, want %q", got, want)
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Errorf("keys %v are not distinct and in bucket order", keys)
	}
	if domain.IsBucketedStatusDay(domain.StatusDay(domain.StatusPlaced, time.Now())) {
		t.Error("an unbucketed status:day is taken for a bucketed key")
	}
}

func count(keys []string, key string) int {
	n := 0
	for _, k := range keys {
		if k == key {
			n++
		}
	}
	return n
}
