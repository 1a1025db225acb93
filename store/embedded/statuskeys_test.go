package embedded

import (
	"fmt"
	"testing"
	"time"

	"shop/domain"
)

// TestStatusBucketsSpreadOverPhysicalPartitions: the keys of one status
// on one day (domain.StatusDayKeys) must land on several of the simulated
// physical partitions, or the buckets gain nothing here. FNV-1a mixes a
// key's last characters into the low bits only, so the same buckets
// written after the day ("placed:2026-11-29:07") share one or two.
func TestStatusBucketsSpreadOverPhysicalPartitions(t *testing.T) {
	parts := equalPartitions(4)
	for d := range 31 {
		day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d)
		used := map[int]int{}
		for _, key := range domain.StatusDayKeys(domain.StatusPlaced, day, domain.DefaultStatusBuckets) {
			used[locate(parts, key)]++
		}
		most := 0
		for _, n := range used {
			most = max(most, n)
		}
		if len(used) < 3 || most > domain.DefaultStatusBuckets*5/8 {
			t.Errorf("%s: the %d buckets sit on %d of 4 partitions, at most %d on one", day.Format(time.DateOnly), domain.DefaultStatusBuckets, len(used), most)
		}
		trailing := map[int]bool{}
		for b := range domain.DefaultStatusBuckets {
			trailing[locate(parts, fmt.Sprintf("%s:%02d", domain.StatusDay(domain.StatusPlaced, day), b))] = true
		}
		if len(trailing) > 2 {
			t.Errorf("%s: with the bucket after the day, the keys spread over %d partitions; the key's order no longer matters here", day.Format(time.DateOnly), len(trailing))
		}
	}
}
