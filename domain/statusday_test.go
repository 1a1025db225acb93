package domain_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
)

func TestStatusDayKeyPutsEveryOrderInExactlyOneBucketOfItsDay(t *testing.T) {
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	created := day.Add(13 * time.Hour)
	for _, n := range []int{1, 3, domain.DefaultStatusBuckets, domain.MaxStatusBuckets} {
		t.Run(fmt.Sprintf("%d buckets", n), func(t *testing.T) {
			perBucket := make([]int, n)
			orders := 1000 * n
			statuses := []string{domain.StatusPlaced, domain.StatusShipped, domain.StatusDelivered, domain.StatusCancelled}
			dayKeys := map[string][]string{}
			for _, status := range statuses {
				dayKeys[status] = domain.StatusDayKeys(status, day, n)
			}
			for i := range orders {
				id := domain.OrderID(created, fmt.Sprintf("%06x", i*7919))
				for _, status := range statuses {
					key := domain.StatusDayKey(status, created, id, n)
					keys := dayKeys[status]
					if got := count(keys, key); got != 1 {
						t.Fatalf("order %s %s: key %q is %d of the day's keys %v, want exactly 1", id, status, key, got, keys)
					}
					// A status change moves the summary to the same bucket of
					// another status: the bucket is the order's, not the status's.
					if want := fmt.Sprintf("%s:%02d:2026-11-29", status, domain.StatusBucket(id, n)); key != want {
						t.Fatalf("order %s %s: key %q, want %q", id, status, key, want)
					}
				}
				perBucket[domain.StatusBucket(id, n)]++
			}
			mean := orders / n
			for b, got := range perBucket {
				if got < mean*85/100 || got > mean*115/100 {
					t.Errorf("bucket %d holds %d of %d orders, want within 15%% of %d: the hash does not spread ids", b, got, orders, mean)
				}
			}
		})
	}
}

func TestStatusDayKeysAreDistinctAndInBucketOrder(t *testing.T) {
	keys := domain.StatusDayKeys(domain.StatusPlaced, time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC), domain.DefaultStatusBuckets)
	if got, want := len(keys), domain.DefaultStatusBuckets; got != want {
		t.Fatalf("%d keys, want %d", got, want)
	}
	if got, want := keys[7], "placed:07:2026-11-29"; got != want {
		t.Errorf("keys[7] = %q, want %q", got, want)
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) || strings.HasSuffix(keys[0], ":00") {
		t.Errorf("keys %v are not distinct and in bucket order", keys)
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
