package domain

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// StatusBuckets is how many logical partitions of ordersByStatus one
// status of one day is spread over. Every checkout writes its summary
// into today's placed partitions, and one logical partition is served by
// one physical partition, at most 10,000 RU/s on Cosmos: at the peak of
// docs/scale.md (2,500 checkouts/s) one unbucketed partition would need
// more than that, and a day of summaries would pass the 20 GB a logical
// partition may hold. `shop scale` prints the buckets each scale needs.
//
// Writers and readers share this number: a summary's bucket is a pure
// function of its order id, and the admin day query reads every bucket.
// Changing it moves summaries, as the unbucketed key did (`shop migrate`,
// migrations.BucketOrderSummaries).
const StatusBuckets = 16

// StatusDay is the status and UTC day of an order, "placed:2026-11-29":
// the prefix of every bucket of that day (and the unbucketed key the
// shop used before StatusBuckets).
func StatusDay(status string, createdAt time.Time) string {
	return status + ":" + createdAt.UTC().Format(time.DateOnly)
}

// StatusBucket is the bucket of an order: FNV-1a of its id modulo
// StatusBuckets, so it is the same in every status (a status change moves
// the summary between the same bucket of two statuses) and spreads ids
// evenly.
func StatusBucket(orderID string) int {
	h := fnv.New32a()
	h.Write([]byte(orderID))
	return int(h.Sum32() % StatusBuckets)
}

// StatusDayKey is the synthetic partition key of an order's summary:
// status, UTC day of creation and bucket, "placed:2026-11-29:07".
func StatusDayKey(status string, createdAt time.Time, orderID string) string {
	return statusDayBucket(StatusDay(status, createdAt), StatusBucket(orderID))
}

// StatusDayKeys are the keys of every bucket of one status on one day, in
// bucket order: the partitions the admin day query reads.
func StatusDayKeys(status string, day time.Time) []string {
	prefix := StatusDay(status, day)
	keys := make([]string, StatusBuckets)
	for b := range keys {
		keys[b] = statusDayBucket(prefix, b)
	}
	return keys
}

func statusDayBucket(statusDay string, bucket int) string {
	return fmt.Sprintf("%s:%02d", statusDay, bucket)
}

// IsBucketedStatusDay reports whether key is a StatusDayKey rather than
// an unbucketed StatusDay: "status:day:bucket" has three parts.
func IsBucketedStatusDay(key string) bool {
	return strings.Count(key, ":") == 2
}
