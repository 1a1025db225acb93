package embedded

import (
	"fmt"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
)

// TestStatusBucketsSpreadOverPhysicalPartitions: the keys of one status
// on one day (domain.StatusDayKeys) must land on several of the simulated
// physical partitions, or the buckets gain nothing here. FNV-1a mixes a
// key's last characters into the low bits only, so the same buckets
// written after the day ("placed:2026-11-29:07") share one or two.
func TestStatusBucketsSpreadOverPhysicalPartitions(t *testing.T) {
	parts := equalPartitions(4)
	const days = 31
	mostOnOne := func(keys []string) int {
		used := map[int]int{}
		most := 0
		for _, key := range keys {
			used[locate(parts, key)]++
			most = max(most, used[locate(parts, key)])
		}
		return most
	}
	var sum, trailingSum int
	for d := range days {
		day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d)
		most := mostOnOne(domain.StatusDayKeys(domain.StatusPlaced, day, domain.DefaultStatusBuckets))
		if most > domain.DefaultStatusBuckets*5/8 {
			t.Errorf("%s: %d of the %d buckets sit on one of 4 partitions", day.Format(time.DateOnly), most, domain.DefaultStatusBuckets)
		}
		sum += most
		var trailing []string
		for b := range domain.DefaultStatusBuckets {
			trailing = append(trailing, fmt.Sprintf("%s:%02d", domain.StatusDay(domain.StatusPlaced, day), b))
		}
		trailingSum += mostOnOne(trailing)
	}
	// 16 keys hashed at random over 4 partitions: about 6 on the busiest.
	if mean := float64(sum) / days; mean > 7 {
		t.Errorf("the busiest partition holds %.1f of %d buckets on average, want about a quarter", mean, domain.DefaultStatusBuckets)
	}
	if mean := float64(trailingSum) / days; mean < 12 {
		t.Errorf("with the bucket after the day the busiest partition holds %.1f buckets on average; the key's order no longer matters here", mean)
	}
}
