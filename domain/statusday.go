package domain

import (
	"fmt"
	"hash/fnv"
	"time"
)

// DefaultStatusBuckets is how many logical partitions of ordersByStatus
// one status of one day is spread over, unless the shop is configured
// otherwise (SHOP_STATUS_BUCKETS). Every checkout writes its summary into
// today's placed partitions, and one logical partition is served by one
// physical partition, at most 10,000 RU/s on Cosmos: at the 50,000
// requests/s of docs/scale.md one unbucketed partition would need more
// than that, and a day of summaries would pass the 20 GB a logical
// partition may hold. `shop scale` prints the buckets each scale needs;
// 16 leaves room over both.
//
// Writers and readers must agree on the number: a summary's bucket is a
// pure function of its order id and the number, and the admin day query
// reads every bucket. Changing it moves summaries (`shop migrate`,
// migrations.BucketOrderSummaries).
const DefaultStatusBuckets = 16

// MaxStatusBuckets bounds the setting: the admin day query reads every
// bucket, one query each, and its continuation holds a position per
// bucket.
const MaxStatusBuckets = 32

// StatusDay is the status and UTC day of an order, "placed:2026-11-29":
// the unbucketed key the shop used before the buckets.
func StatusDay(status string, createdAt time.Time) string {
	return status + ":" + createdAt.UTC().Format(time.DateOnly)
}

// StatusBucket is the bucket of an order among n: FNV-1a of its id modulo
// n, so it is the same in every status (a status change moves the summary
// between the same bucket of two statuses) and spreads ids evenly.
func StatusBucket(orderID string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(orderID))
	return int(h.Sum32() % uint32(n))
}

// StatusDayKey is the synthetic partition key of an order's summary among
// n buckets: status, bucket and UTC day of creation,
// "placed:07:2026-11-29". The bucket comes before the day so that the
// keys of one day differ early: a partition-key hash then sends them to
// different physical partitions. Cosmos's hash mixes every character, but
// the embedded store's FNV-1a places keys that differ only in their last
// characters on one physical partition, where the buckets would gain
// nothing.
func StatusDayKey(status string, createdAt time.Time, orderID string, n int) string {
	return statusDayBucket(status, StatusBucket(orderID, n), createdAt)
}

// StatusDayKeys are the keys of the n buckets of one status on one day,
// in bucket order: the partitions the admin day query reads.
func StatusDayKeys(status string, day time.Time, n int) []string {
	keys := make([]string, n)
	for b := range keys {
		keys[b] = statusDayBucket(status, b, day)
	}
	return keys
}

func statusDayBucket(status string, bucket int, day time.Time) string {
	return fmt.Sprintf("%s:%02d:%s", status, bucket, day.UTC().Format(time.DateOnly))
}
