package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// Splitter is a store that can split a physical partition on demand, as
// the embedded store does (embedded.Store.SplitPartition). Cosmos splits
// on its own (a partition past 50 GB, or throughput raised past 10,000
// RU/s per partition), so against an account the split test is skipped,
// saying what shows it instead (Options.Elsewhere).
type Splitter interface {
	SplitPartition(ctx context.Context, container string, r store.FeedRange) ([]store.FeedRange, error)
}

// testFeedAcrossSplit: a continuation taken before a split, read over the
// ranges that replaced its range, yields exactly the changes written after
// it, each once, in the child its partition key now lives in; the range
// that split is gone.
func testFeedAcrossSplit(t *testing.T, s store.Store) {
	sp, ok := s.(Splitter)
	if !ok {
		withoutHook(t, ChangeFeedAcrossSplit, "Splitter")
		return
	}
	def := define(t, suite.Plain(nil))
	name := def.ID
	c := ensureDefined(t, s, def)
	write := func(prefix string, n int) map[string]bool {
		out := map[string]bool{}
		for i := range n {
			pk, id := fmt.Sprintf("k%02d", i%16), fmt.Sprintf("%s%02d", prefix, i)
			if _, err := c.Upsert(ctx, pk, item(pk, id, "v", prefix), nil); err != nil {
				t.Fatal(err)
			}
			out[pk+"/"+id] = true
		}
		return out
	}
	write("old", 48)
	f := newFeedReader(t, c)
	old := f.drain(10)
	// The range to split is the one holding the most keys: a new
	// container's ranges all hold some, but one emptied after an earlier
	// split (Options.Provisioned) may have a range none of the 16 keys
	// hashes to, where no change would land to show anything.
	parent := f.ranges[0]
	for _, r := range f.ranges {
		if len(old[r]) > len(old[parent]) {
			parent = r
		}
	}
	before := f.tokens[parent]
	// After the continuation: new items, and a rewrite of old ones.
	after := write("new", 32)
	for i := range 8 {
		pk, id := fmt.Sprintf("k%02d", i), fmt.Sprintf("old%02d", i)
		if _, err := c.Upsert(ctx, pk, item(pk, id, "v", "rewritten"), nil); err != nil {
			t.Fatal(err)
		}
		after[pk+"/"+id] = true
	}

	children, err := sp.SplitPartition(ctx, name, parent)
	if err != nil {
		t.Fatalf("SplitPartition(%s): %v", parent, err)
	}
	ranges, err := c.ReadFeedRanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ranges), len(f.ranges)+len(children)-1; got != want {
		t.Fatalf("after the split %d ranges, want %d: %v", got, want, ranges)
	}
	if len(children) < 2 || children[0].Min != parent.Min || children[len(children)-1].Max != parent.Max {
		t.Fatalf("children %v do not cover the range %s that split", children, parent)
	}

	t.Run("ContinuationValidOnEachChild", func(t *testing.T) {
		inParent := map[string]bool{}
		for _, cr := range children {
			child := &feedReader{t: t, c: c, ranges: []store.FeedRange{cr}, tokens: map[store.FeedRange]string{cr: before}}
			for _, it := range child.drain(5)[cr] {
				key := it["pk"].(string) + "/" + it["id"].(string)
				if inParent[key] {
					t.Errorf("%s delivered by two children", key)
				}
				inParent[key] = true
			}
		}
		// What the parent's own reader would have read next.
		want := map[string]bool{}
		for _, it := range (&feedReader{t: t, c: c, ranges: children, tokens: map[store.FeedRange]string{}}).drainAll() {
			key := it["pk"].(string) + "/" + it["id"].(string)
			if after[key] {
				want[key] = true
			}
		}
		if diff := cmp.Diff(want, inParent); diff != "" {
			t.Errorf("changes after the continuation, read over the children (-want +got):\n%s", diff)
		}
		if len(want) == 0 {
			t.Error("no change after the continuation landed in the range that split: the test shows nothing")
		}
	})

	t.Run("RangeThatSplitIsGone", func(t *testing.T) {
		_, err := c.ReadChangeFeed(ctx, parent, before, 10)
		wantCode(t, "read of the range that split", err, domain.EUNAVAILABLE)
		if !errors.Is(err, store.ErrFeedRangeGone) {
			t.Errorf("error %v is not ErrFeedRangeGone", err)
		}
	})

	t.Run("WritesAfterTheSplitInTheirChild", func(t *testing.T) {
		for _, cr := range children {
			f.tokens[cr] = before
		}
		f.ranges = ranges
		f.drain(50)
		later := write("later", 16)
		got := map[string]bool{}
		for _, it := range all(f.drain(50), f.ranges) {
			got[it["pk"].(string)+"/"+it["id"].(string)] = true
		}
		if diff := cmp.Diff(later, got); diff != "" {
			t.Errorf("changes after the split (-want +got):\n%s", diff)
		}
	})
}

// drainAll reads every range of f from the beginning and returns the
// items, in range order.
func (f *feedReader) drainAll() []map[string]any {
	return all(f.drain(100), f.ranges)
}

// testFeedFromNow: a reader starting at FeedFromNow sees every change
// written after it, those of the call's own second included (the new
// writes follow it at once), and none older than FeedFromNowEarly before
// it (Cosmos starts that much early: its StartFrom has whole seconds, on
// the service's clock); the call costs no read of the history.
func testFeedFromNow(t *testing.T, s store.Store) {
	c := newContainer(t, s, nil)
	// The call comes after every old write: an old item older than the
	// last one's second by more than FeedFromNowEarly is certainly older
	// than the earliest start the call may take.
	var lastOld float64
	for i := range 40 {
		pk := fmt.Sprintf("k%d", i%8)
		r := mustCreate(t, c, pk, item(pk, fmt.Sprintf("old%02d", i)))
		lastOld = decode(t, r.Item)["_ts"].(float64)
	}
	f := newFeedReader(t, c)
	for _, r := range f.ranges {
		p, err := c.ReadChangeFeed(ctx, r, store.FeedFromNow, 10)
		if err != nil {
			t.Fatalf("ReadChangeFeed(%s, FeedFromNow): %v", r, err)
		}
		if len(p.Items) != 0 || p.Continuation == "" || p.Continuation == store.FeedFromNow || p.Remaining != 0 {
			t.Fatalf("FeedFromNow page = %d items, continuation %q, remaining %d; want none, a position, 0", len(p.Items), p.Continuation, p.Remaining)
		}
		f.tokens[r] = p.Continuation
	}
	want := map[string]bool{}
	for i := range 16 {
		pk, id := fmt.Sprintf("k%d", i%8), fmt.Sprintf("new%02d", i)
		mustCreate(t, c, pk, item(pk, id))
		want[id] = true
	}
	got := map[string]bool{}
	for _, it := range all(f.drain(7), f.ranges) {
		id := it["id"].(string)
		if want[id] {
			got[id] = true
			continue
		}
		if ts := it["_ts"].(float64); ts < lastOld-store.FeedFromNowEarly.Seconds() {
			t.Errorf("%s, written at %v, over %v before the call's second, delivered from now", id, ts, store.FeedFromNowEarly)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes after FeedFromNow (-want +got):\n%s", diff)
	}
}
