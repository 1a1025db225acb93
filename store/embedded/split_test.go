package embedded

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// TestSplitIsPersistentAndKeepsEverything: after a split, a reopen and a
// new definition, the halves are the container's ranges, every item is where point reads,
// queries and ordered queries find it, each half holds only the keys
// hashing into it, and the half's feed and the parent's continuation
// still work.
func TestSplitIsPersistentAndKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	s, err := Open(path, Options{PhysicalPartitions: 2, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureContainer(bg, orderedDef("c")); err != nil {
		t.Fatal(err)
	}
	c := s.Container("c")
	keys := map[string]int{}
	for i := range 64 {
		pk := fmt.Sprintf("k%02d", i%16)
		if _, err := c.Create(bg, pk, doc(pk, fmt.Sprintf("i%02d", i), "n", 64-i)); err != nil {
			t.Fatal(err)
		}
		keys[pk]++
	}
	parent := feedRanges(2)[0]
	start, err := c.ReadChangeFeed(bg, parent, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	halves, err := s.SplitPartition(bg, "c", parent)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.FeedRange{{Min: "", Max: "40000000"}, {Min: "40000000", Max: "80000000"}}
	if diff := cmp.Diff(want, halves); diff != "" {
		t.Fatalf("halves (-want +got):\n%s", diff)
	}
	s.Close()

	s = openAt(t, path, Options{NoSync: true})
	c = s.Container("c")
	// A new definition keeps the layout.
	def := orderedDef("c")
	def.DefaultTTL = ttlOf(3600)
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatal(err)
	}
	ranges, err := c.ReadFeedRanges(bg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(want, feedRanges(2)[1]), ranges); diff != "" {
		t.Fatalf("ranges after the reopen and a new definition (-want +got):\n%s", diff)
	}
	for pk, n := range keys {
		page, err := c.Query(bg, store.Query{PartitionKey: pk, OrderBy: "n", Limit: 100})
		if err != nil || len(page.Items) != n {
			t.Fatalf("ordered query of %s: %d items, %v; want %d", pk, len(page.Items), err, n)
		}
		if _, err := c.Read(bg, pk, fmt.Sprintf("i%02d", int(pk[1]-'0')*10+int(pk[2]-'0'))); err != nil {
			t.Errorf("point read in %s: %v", pk, err)
		}
	}
	checkOrderIndexes(t, s, "c")
	all, err := c.Query(bg, store.Query{Limit: 1000})
	if err != nil || len(all.Items) != 64 || all.PartitionsTouched != 3 {
		t.Errorf("cross-partition query: %d items over %d partitions, %v; want 64 over 3", len(all.Items), all.PartitionsTouched, err)
	}
	st, err := s.state("c")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for i, h := range halves {
		p := i
		page, err := c.ReadChangeFeed(bg, h, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk := decodeMap(t, it)["pk"].(string)
			if got := st.partitionFor(pk); got != p {
				t.Errorf("%s is in half %d, hashes into %d", pk, p, got)
			}
		}
		seen += len(page.Items)
		rest, err := c.ReadChangeFeed(bg, h, start.Continuation, 1000)
		if err != nil {
			t.Fatalf("half %s from the parent's continuation: %v", h, err)
		}
		seen -= len(rest.Items)
	}
	if seen != 1 {
		t.Errorf("the halves from the parent's continuation miss %d items, want exactly the 1 read before it", seen)
	}
}

// TestSplitUnderWrites: writes running while a partition splits all land,
// each once, and are read back from the partition that now owns them.
func TestSplitUnderWrites(t *testing.T) {
	s := openTemp(t, Options{PhysicalPartitions: 1, NoSync: true})
	c := ensure(t, s, "c", nil)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				pk := fmt.Sprintf("w%d-%d", w, i%10)
				if _, err := c.Upsert(bg, pk, doc(pk, fmt.Sprintf("i%03d", i)), nil); err != nil {
					errs <- err
				}
			}
		})
	}
	if _, err := s.SplitPartition(bg, "c", feedRanges(1)[0]); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write during the split: %v", err)
	}
	ranges, _ := c.ReadFeedRanges(bg)
	total := 0
	for _, r := range ranges {
		page, err := c.ReadChangeFeed(bg, r, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		total += len(page.Items)
	}
	if total != 400 {
		t.Errorf("the feeds of the halves hold %d items, want the 400 written", total)
	}
}

func TestSplitRefusals(t *testing.T) {
	s := openTemp(t, Options{PhysicalPartitions: 2})
	ensure(t, s, "c", nil)
	parent := feedRanges(2)[1]
	if _, err := s.SplitPartition(bg, "c", parent); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		container string
		r         store.FeedRange
		code      string
	}{
		{"a range that split already", "c", parent, domain.EINVALID},
		{"a range the container never had", "c", store.FeedRange{Min: "", Max: "FF"}, domain.EINVALID},
		{"a missing container", "nope", parent, domain.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.SplitPartition(bg, tt.container, tt.r)
			if got := domain.ErrorCode(err); got != tt.code {
				t.Errorf("SplitPartition: %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}
