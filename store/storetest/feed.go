package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// feedReader drains the change feed of every range, remembering each
// range's continuation like a processor's lease would.
type feedReader struct {
	t      *testing.T
	c      store.Container
	ranges []store.FeedRange
	tokens map[store.FeedRange]string
}

func newFeedReader(t *testing.T, c store.Container) *feedReader {
	t.Helper()
	ranges, err := c.ReadFeedRanges(ctx)
	if err != nil || len(ranges) == 0 {
		t.Fatalf("ReadFeedRanges: %d ranges, %v", len(ranges), err)
	}
	return &feedReader{t: t, c: c, ranges: ranges, tokens: map[store.FeedRange]string{}}
}

// drain reads every range to its end in pages of pageSize and returns the
// items per range.
func (f *feedReader) drain(pageSize int) map[store.FeedRange][]map[string]any {
	f.t.Helper()
	out := map[store.FeedRange][]map[string]any{}
	for _, r := range f.ranges {
		for pages := 0; ; pages++ {
			if pages > 1000 {
				f.t.Fatalf("range %s did not end", r)
			}
			p, err := f.c.ReadChangeFeed(ctx, r, f.tokens[r], pageSize)
			if err != nil {
				f.t.Fatalf("ReadChangeFeed(%s): %v", r, err)
			}
			charged(f.t, "ReadChangeFeed", p.RequestCharge)
			if p.Continuation == "" {
				f.t.Fatalf("ReadChangeFeed(%s) returned no continuation", r)
			}
			if len(p.Items) > pageSize {
				f.t.Fatalf("page of %d items, max %d", len(p.Items), pageSize)
			}
			f.tokens[r] = p.Continuation
			for _, it := range p.Items {
				out[r] = append(out[r], decode(f.t, it))
			}
			if len(p.Items) == 0 {
				if p.Remaining > 0 {
					f.t.Errorf("empty page of %s says %d remain", r, p.Remaining)
				}
				break
			}
		}
	}
	return out
}

// all flattens the items of every range, in range order.
func all(byRange map[store.FeedRange][]map[string]any, ranges []store.FeedRange) []map[string]any {
	var out []map[string]any
	for _, r := range ranges {
		out = append(out, byRange[r]...)
	}
	return out
}

func testChangeFeed(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	f := newFeedReader(t, c)
	var created []string
	for i := range 40 {
		pk, id := fmt.Sprintf("k%d", i%8), fmt.Sprintf("i%02d", i)
		mustCreate(t, c, pk, item(pk, id, "n", i, "v", 1))
		created = append(created, pk+"/"+id)
	}

	t.Run("EveryItemInExactlyOneRange", func(t *testing.T) {
		byRange := f.drain(3)
		seen := map[string]int{}
		rangeOfKey := map[string]store.FeedRange{}
		for r, items := range byRange {
			for _, it := range items {
				pk := it["pk"].(string)
				seen[pk+"/"+it["id"].(string)]++
				if prev, ok := rangeOfKey[pk]; ok && prev != r {
					t.Errorf("partition key %s appears in ranges %s and %s", pk, prev, r)
				}
				rangeOfKey[pk] = r
			}
		}
		want := map[string]int{}
		for _, k := range created {
			want[k] = 1
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("times each item appeared (-want +got):\n%s", diff)
		}
	})

	t.Run("OrderedPerPartitionKey", func(t *testing.T) {
		for _, id := range []string{"o1", "o2", "o3"} {
			mustCreate(t, c, "ordered", item("ordered", id))
		}
		if _, err := c.Upsert(ctx, "ordered", item("ordered", "o1", "v", 2), nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"o2", "o3", "o1"}, ids(all(f.drain(2), f.ranges))); diff != "" {
			t.Errorf("feed order within one partition key (-want +got):\n%s", diff)
		}
	})

	t.Run("LatestVersionCollapses", func(t *testing.T) {
		for v := 2; v <= 4; v++ {
			if _, err := c.Replace(ctx, "k1", "i01", item("k1", "i01", "n", 1, "v", v), nil); err != nil {
				t.Fatal(err)
			}
		}
		items := all(f.drain(100), f.ranges)
		if got := ids(items); !cmp.Equal(got, []string{"i01"}) {
			t.Fatalf("after three updates of one item the feed holds %v, want [i01] once", got)
		}
		if got := items[0]["v"]; got != 4.0 {
			t.Errorf("feed item version v = %v, want the newest, 4", got)
		}
	})

	t.Run("DeletesAbsent", func(t *testing.T) {
		mustCreate(t, c, "k2", item("k2", "gone"))
		mustCreate(t, c, "k2", item("k2", "kept"))
		if _, err := c.Delete(ctx, "k2", "gone", nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"kept"}, ids(all(f.drain(100), f.ranges))); diff != "" {
			t.Errorf("feed after a create and a delete (-want +got):\n%s", diff)
		}
	})

	t.Run("FromTheBeginningAgain", func(t *testing.T) {
		again := newFeedReader(t, c)
		if got, want := len(all(again.drain(50), again.ranges)), len(created)+3+1; got != want {
			t.Errorf("a new reader sees %d items, want %d (each live item once)", got, want)
		}
	})

	t.Run("BadContinuation", func(t *testing.T) {
		r0 := f.ranges[0]
		tok := f.tokens[r0]
		flipped := []byte(tok)
		flipped[len(flipped)/2] ^= 1
		cases := map[string]string{"garbage": "garbage", "altered": string(flipped)}
		for name, tok := range cases {
			_, err := c.ReadChangeFeed(ctx, r0, tok, 10)
			wantCode(t, name, err, domain.EINVALID)
		}
		if len(f.ranges) > 1 {
			_, err := c.ReadChangeFeed(ctx, f.ranges[1], tok, 10)
			wantCode(t, "continuation of another range", err, domain.EINVALID)
		}
		other := newContainer(t, s, nil)
		_, err := other.ReadChangeFeed(ctx, r0, tok, 10)
		wantCode(t, "continuation of another container", err, domain.EINVALID)
	})
}
