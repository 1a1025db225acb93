package embedded

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// throttled opens a store of 4 partitions on a clock at a whole second,
// with a container "c" holding item "i" in a partition key of partition 0
// (hot) and one of partition 1 (cold), written before the throughput is
// provisioned at ru RU/s (ru/4 per partition).
func throttled(t *testing.T, ru float64) (s *Store, c store.Container, clk *clock, hot, cold string) {
	t.Helper()
	clk = newClock()
	s = openTemp(t, Options{Now: clk.Now, PhysicalPartitions: 4, NoSync: true})
	c = ensure(t, s, "c", nil)
	parts := equalPartitions(4)
	for i := 0; hot == "" || cold == ""; i++ {
		switch pk := fmt.Sprintf("k%d", i); locate(parts, pk) {
		case 0:
			hot = cmp.Or(hot, pk)
		case 1:
			cold = cmp.Or(cold, pk)
		}
	}
	for _, pk := range []string{hot, cold} {
		if _, err := c.Create(bg, pk, doc(pk, "i")); err != nil {
			t.Fatal(err)
		}
	}
	s.SetThroughput(ru)
	clk.Advance(time.Second)
	return s, c, clk, hot, cold
}

// wantThrottled fails unless err is a 429: EUNAVAILABLE with RetryAfter
// retry, and the refused call was charged nothing.
func wantThrottled(t *testing.T, what string, err error, charge float64, retry time.Duration) {
	t.Helper()
	e, ok := errors.AsType[*domain.Error](err)
	if !ok || e.Code != domain.EUNAVAILABLE || e.RetryAfter != retry {
		t.Fatalf("%s: %v (retry after %v), want EUNAVAILABLE with RetryAfter %v", what, err, retryOf(err), retry)
	}
	if charge != 0 {
		t.Errorf("%s: refused, yet charged %v RU", what, charge)
	}
}

func retryOf(err error) time.Duration {
	if e, ok := errors.AsType[*domain.Error](err); ok {
		return e.RetryAfter
	}
	return 0
}

// partitionOf returns what Throughput reports of container c's partition i.
func partitionOf(t *testing.T, s *Store, c string, i int) store.PartitionThroughput {
	t.Helper()
	var ps []store.PartitionThroughput
	for _, p := range s.Throughput() {
		if p.Container == c {
			ps = append(ps, p)
		}
	}
	if i >= len(ps) {
		t.Fatalf("Throughput reports %d partitions of %s, want at least %d", len(ps), c, i+1)
	}
	return ps[i]
}

// TestThrottle: 40 RU/s over 4 partitions is 10 RU per partition per
// second. Point reads of 1 RU on one partition: ten run, the eleventh is
// refused until the second is over, while another partition serves.
func TestThrottle(t *testing.T) {
	s, c, clk, hot, cold := throttled(t, 40)
	clk.Advance(250 * time.Millisecond)
	for i := range 10 {
		if _, err := c.Read(bg, hot, "i"); err != nil {
			t.Fatalf("read %d of 10 within the budget: %v", i+1, err)
		}
	}
	r, err := c.Read(bg, hot, "i")
	wantThrottled(t, "11th read", err, r.RequestCharge, 750*time.Millisecond)
	if !strings.Contains(domain.ErrorMessage(err), "10 RU/s") {
		t.Errorf("message %q does not say the partition's budget", domain.ErrorMessage(err))
	}

	t.Run("OtherPartitionServes", func(t *testing.T) {
		if _, err := c.Read(bg, cold, "i"); err != nil {
			t.Errorf("read on another partition: %v", err)
		}
	})
	t.Run("RefusedWriteWritesNothing", func(t *testing.T) {
		_, err := c.Create(bg, hot, doc(hot, "new"))
		wantThrottled(t, "create", err, 0, 750*time.Millisecond)
		s.SetThroughput(0)
		defer s.SetThroughput(40)
		if _, err := c.Read(bg, hot, "new"); !domain.IsCode(err, domain.ENOTFOUND) {
			t.Errorf("read of the refused create: %v, want ENOTFOUND", err)
		}
	})
	t.Run("Reported", func(t *testing.T) {
		p := partitionOf(t, s, "c", 0)
		// The create wrote two index terms, id and pk.
		if p.Provisioned != 10 || p.Throttled != 2 || p.RequestCharge != round2(writeCharge(1, 2)+10+1) {
			t.Errorf("hot partition = %+v, want 10 RU/s provisioned, 2 throttled, charged the create, ten reads and the read after", p)
		}
	})
	t.Run("RefillsNextSecond", func(t *testing.T) {
		clk.Advance(750 * time.Millisecond)
		if _, err := c.Read(bg, hot, "i"); err != nil {
			t.Fatalf("read in the next second: %v", err)
		}
		clk.Advance(time.Second)
		if got := partitionOf(t, s, "c", 0).LastSecond; got != 1 {
			t.Errorf("LastSecond = %v, want the one read of the second before", got)
		}
	})
}

// TestThrottleOverrunIsOwed: a call costing more than a whole second's
// budget runs at the start of a second, and the next seconds pay it off.
func TestThrottleOverrunIsOwed(t *testing.T) {
	// 16 RU/s: 4 per partition; the replace adds four index terms, so it
	// costs writeCharge(1, 4) = 6.8 RU.
	_, c, clk, hot, _ := throttled(t, 16)
	big := doc(hot, "i", "a", 1, "b", 2, "c", 3, "d", 4)
	r, err := c.Replace(bg, hot, "i", big, nil)
	if err != nil {
		t.Fatalf("a replace over the whole budget, at the start of a second: %v", err)
	}
	if r.RequestCharge <= 4 || r.RequestCharge >= 8 {
		t.Fatalf("replace charged %v RU, want between one and two seconds' budget of 4", r.RequestCharge)
	}
	_, err = c.Read(bg, hot, "i")
	wantThrottled(t, "read in the same second", err, 0, time.Second)
	clk.Advance(time.Second)
	// 6.8 − 4 = 2.8 still owed: below the budget, so calls run again.
	if _, err := c.Read(bg, hot, "i"); err != nil {
		t.Fatalf("read in the next second: %v", err)
	}
}

// TestThrottleCrossPartitionQuery: a query across partitions charges each
// of them, and is refused while any one has no budget left.
func TestThrottleCrossPartitionQuery(t *testing.T) {
	s, c, clk, hot, cold := throttled(t, 40)
	page, err := c.Query(bg, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if got, want := partitionOf(t, s, "c", i).RequestCharge, round2(page.RequestCharge/4); got < want {
			t.Errorf("partition %d charged %v RU in all, want at least its share %v of the query's %v", i, got, want, page.RequestCharge)
		}
	}
	for i := 0; i < 20; i++ {
		if _, err = c.Read(bg, hot, "i"); err != nil {
			break
		}
	}
	clk.Advance(100 * time.Millisecond)
	_, err = c.Query(bg, store.Query{})
	wantThrottled(t, "cross-partition query with one partition out of budget", err, 0, 900*time.Millisecond)
	if _, err := c.Query(bg, store.Query{PartitionKey: cold}); err != nil {
		t.Errorf("query of a partition with budget: %v", err)
	}
}

// TestThrottleFeedAndBatch: the change feed and batches spend the same
// budget as the API's calls: the feed workers and the requests share it.
func TestThrottleFeedAndBatch(t *testing.T) {
	_, c, _, hot, _ := throttled(t, 40)
	ranges, err := c.ReadFeedRanges(bg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err = c.ReadChangeFeed(bg, ranges[0], "", 10); err != nil {
			break
		}
	}
	wantThrottled(t, "change feed past the budget", err, 0, time.Second)
	_, err = c.ExecuteBatch(bg, hot, []store.BatchOp{{Kind: store.BatchUpsert, Item: doc(hot, "b")}})
	wantThrottled(t, "batch on the spent partition", err, 0, time.Second)
	if _, err := c.ReadChangeFeed(bg, ranges[0], store.FeedFromNow, 10); err != nil {
		t.Errorf("FeedFromNow sends no request, yet: %v", err)
	}
}

// TestThrottleSplit: a split halves the partition's share; each half
// starts with a budget of its own, the other partitions keep their count.
func TestThrottleSplit(t *testing.T) {
	s, c, _, _, cold := throttled(t, 40)
	if _, err := c.Read(bg, cold, "i"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SplitPartition(bg, "c", feedRanges(4)[0]); err != nil {
		t.Fatal(err)
	}
	ps := s.Throughput()
	if len(ps) != 5 {
		t.Fatalf("%d partitions after a split, want 5: %+v", len(ps), ps)
	}
	for _, p := range ps {
		if p.Provisioned != 8 {
			t.Errorf("%s: %v RU/s, want 40/5", p.Partition, p.Provisioned)
		}
	}
	if got := ps[2].RequestCharge; got != round2(writeCharge(1, 2)+1) {
		t.Errorf("the partition after the halves was charged %v RU, want its create and read before the split", got)
	}
}

func TestNegativeThroughputRefused(t *testing.T) {
	if _, err := Open(t.TempDir()+"/shop.db", Options{Throughput: -1}); !domain.IsCode(err, domain.EINVALID) {
		t.Errorf("Open with -1 RU/s: %v, want EINVALID", err)
	}
}

// TestLogicalPartitionFull: a write that would take one partition key
// value past the limit is refused (Cosmos: 403, substatus 1014), whatever
// the write; other keys, and writes that do not grow it, go on.
func TestLogicalPartitionFull(t *testing.T) {
	s := openTemp(t, Options{MaxLogicalPartitionBytes: 4 << 10, NoSync: true})
	c := ensure(t, s, "c", nil)
	pad, more := strings.Repeat("x", 900), strings.Repeat("y", 2000)
	var err error
	n := 0
	for ; n < 10; n++ {
		if _, err = c.Create(bg, "full", doc("full", fmt.Sprint(n), "pad", pad)); err != nil {
			break
		}
	}
	if !domain.IsCode(err, domain.EPARTITIONFULL) || n < 3 || !strings.Contains(domain.ErrorMessage(err), "4 KB") {
		t.Fatalf("after %d items of 1 KB: %v, want EPARTITIONFULL naming the 4 KB limit", n, err)
	}
	tests := []struct {
		name  string
		write func() error
		code  string
	}{
		{"Upsert", func() error { _, err := c.Upsert(bg, "full", doc("full", "new", "pad", pad), nil); return err }, domain.EPARTITIONFULL},
		{"ReplaceGrowing", func() error {
			_, err := c.Replace(bg, "full", "0", doc("full", "0", "pad", pad+more), nil)
			return err
		}, domain.EPARTITIONFULL},
		{"PatchGrowing", func() error {
			_, err := c.Patch(bg, "full", "0", []store.PatchOp{{Op: store.PatchSet, Path: "/more", Value: more}}, nil)
			return err
		}, domain.EPARTITIONFULL},
		{"Batch", func() error {
			_, err := c.ExecuteBatch(bg, "full", []store.BatchOp{{Kind: store.BatchCreate, Item: doc("full", "b", "pad", pad)}})
			return err
		}, domain.EPARTITIONFULL},
		{"ReplaceShrinking", func() error { _, err := c.Replace(bg, "full", "0", doc("full", "0"), nil); return err }, ""},
		{"Delete", func() error { _, err := c.Delete(bg, "full", "1", nil); return err }, ""},
		{"OtherKey", func() error { _, err := c.Create(bg, "other", doc("other", "0", "pad", pad)); return err }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); domain.ErrorCode(err) != tt.code {
				t.Errorf("%s: %v, want code %q", tt.name, err, tt.code)
			}
		})
	}
}

// TestContainerThroughputOverridesTheStores: one container provisioned
// apart is throttled at its own budget while another keeps the store's.
func TestContainerThroughputOverridesTheStores(t *testing.T) {
	s, c, clk, hot, _ := throttled(t, 40)
	other := ensure(t, s, "other", nil)
	if _, err := other.Create(bg, hot, doc(hot, "i")); err != nil {
		t.Fatal(err)
	}
	s.SetContainerThroughput("c", 8) // 2 RU per partition per second
	clk.Advance(time.Second)
	for i := range 2 {
		if _, err := c.Read(bg, hot, "i"); err != nil {
			t.Fatalf("read %d of 2 within c's own budget: %v", i+1, err)
		}
	}
	r, err := c.Read(bg, hot, "i")
	wantThrottled(t, "3rd read of c", err, r.RequestCharge, time.Second)
	for i := range 5 {
		if _, err := other.Read(bg, hot, "i"); err != nil {
			t.Fatalf("read %d of another container, on the store's budget: %v", i+1, err)
		}
	}
	if got := partitionOf(t, s, "c", 0).Provisioned; got != 2 {
		t.Errorf("c's partition reports %v RU/s provisioned, want 2", got)
	}
}
