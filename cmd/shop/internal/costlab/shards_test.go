package costlab

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/reference-shop/shop/cmd/shop/internal/shopstore"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
)

// TestShardsPart measures the split stock on a scratch store and checks
// the figures against what the design says, not fixed ones: the take is
// ONE batch however many shards; the claim reads the start shard alone
// once the count is cached, the home document too when it reads the
// count (the home document alone when the take starts there), and a
// checkout spends nothing outside its start shard's partition; a take
// moving on reads every shard once, one gathering its units moves them
// in two transfers; a refusal of a sold-out split stock reads every
// shard; a release and a commit follow a chain of 2 with one more read; a
// transfer is three batches; the feed reads the home document and the
// product in stock, every shard near sold out; a checkout with a count
// stale after a merge moves on; and the ceiling grows with the shards.
func TestShardsPart(t *testing.T) {
	ctx := context.Background()
	s, _, _, closeStore, err := shopstore.OpenScratch(ctx, noEnv, "costlab", 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeStore)
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		t.Fatal(err)
	}
	r, err := measureShards(ctx, s, store.Metered(s), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Stocks) != len(shardCounts) {
		t.Fatalf("%d stocks, want %d", len(r.Stocks), len(shardCounts))
	}
	ops := func(what string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %g store ops, want %g", what, got, want)
		}
	}
	one := r.Stocks[0]
	for i, st := range r.Stocks {
		n := float64(st.Shards)
		ops("take", st.Take.StoreOps, 1)
		ops("commit", st.Commit.StoreOps, 1)
		if st.Take.RequestUnits != one.Take.RequestUnits {
			t.Errorf("%d shards: a take %.2f RU, never split %.2f RU: want the same batch", st.Shards, st.Take.RequestUnits, one.Take.RequestUnits)
		}
		// The count cached, the claim reads the start shard alone: a
		// checkout makes the calls of one of a stock never split.
		ops("claim reads, count cached", st.ClaimReads.StoreOps, 1)
		ops("checkout, count cached", st.Checkout.StoreOps, one.Checkout.StoreOps)
		if st.Shards > 1 {
			ops("claim reads, count read", st.CountClaimReads.StoreOps, 2)
			ops("claim reads, count read, starting home", st.CountClaimReadsHome.StoreOps, 1)
			ops("checkout starting home", st.HomeStart.StoreOps, st.Checkout.StoreOps)
			ops("checkout reading the count", st.CountRead.StoreOps, st.Checkout.StoreOps+1)
			ops("checkout reading the count, starting home", st.CountReadHome.StoreOps, st.Checkout.StoreOps)
			if st.ElsewhereRU != 0 || st.CountReadRU <= 0 || st.HomeStartRU <= 0 {
				t.Errorf("%d shards: %.2f RU outside the start shard's partition, the count's read %.2f RU, starting home %.2f RU: want none, and some", st.Shards, st.ElsewhereRU, st.CountReadRU, st.HomeStartRU)
			}
			ops("moved take", st.MovedTake.StoreOps, 1+n+1+1)
			ops("gathering take", st.GatherTake.StoreOps, 1+n+3*(shardGather-1)+1)
			ops("release, chain of 2", st.Release2.StoreOps, 3)
			ops("commit, chain of 2", st.Commit2.StoreOps, 3)
			ops("feed in stock", st.FeedInStock.StoreOps, 2)
			ops("feed in stock, the home shard", st.FeedInStockHome.StoreOps, 1)
			if st.FeedInStockHomeRU <= 0 {
				t.Errorf("%d shards: the feed's step in stock spends nothing in the home partition", st.Shards)
			}
		} else {
			ops("feed in stock", st.FeedInStock.StoreOps, 1)
			if st.CountRead != nil || st.Ceiling.WithFeed != st.Ceiling.Ceiling {
				t.Errorf("never split: %+v, reading the count %+v; want no count read, and a feed step in stock that reads no stock", st.Ceiling, st.CountRead)
			}
		}
		// The start shard, then every shard (servable); never split, its
		// one document is all.
		refusalReads := 1 + n
		if st.Shards == 1 {
			refusalReads = 1
		}
		ops("refusal's stock reads", st.RefusalReads.StoreOps, refusalReads)
		ops("short take", st.ShortTake.StoreOps, 1+n)
		ops("release", st.Release.StoreOps, 2)
		ops("commit, chain of 1", st.Commit1.StoreOps, 1)
		ops("feed near sold out", st.Feed.StoreOps, n+1)
		c := st.Ceiling
		if c.Ceiling <= 0 || c.WithFeed > c.Ceiling || c.WithFeedLow > c.Ceiling || c.HomeCeiling < 0.9*c.ShardCeiling {
			t.Errorf("%d shards: %+v; want the home partition within 10%% of the shards', the feed's step lowering it", st.Shards, c)
		}
		if i > 0 && c.Ceiling <= r.Stocks[i-1].Ceiling.Ceiling {
			t.Errorf("ceilings %+v: want each more shards higher", r.Stocks)
		}
	}
	if c := r.AtMost; c.Shards != domain.MaxStockShards || c.Ceiling <= r.Stocks[len(r.Stocks)-1].Ceiling.Ceiling {
		t.Errorf("at most shards: %+v; want above the last stock's", c)
	}
	ops("transfer", r.Move.StoreOps, 3)
	k := float64(shardSplitTo)
	// Split: home read, k−1 creates, the count (read, replace), k reads,
	// k−1 transfers of 3 batches, k reads.
	ops("split", r.Split.StoreOps, 1+(k-1)+2+k+3*(k-1)+k)
	ops("merge", r.Merge.StoreOps, 1+2+k+3*(k-1)+k)
	ops("feed of a merged stock, in stock", r.MergedFeed.StoreOps, 1)
	ops("feed of a merged stock, near sold out", r.MergedFeedSum.StoreOps, k+1)
	// The claim: the drained shard, then every shard; the take: the
	// failed batch, every shard, the marker, the batch; the commit: the
	// refused patch, the marker read, the patch.
	ops("a checkout's stock calls, the count stale", r.StaleStock.StoreOps, (1+k)+(1+k+1+1)+3)

	var b strings.Builder
	writeShardsPart(&b, costReport{Command: "go run ./cmd/shop cost", Repetitions: 2, Shards: r})
	for _, want := range []string{"Written by `go run ./cmd/shop cost`", "| 1 | ", "| 16 | ", "| 64 (worked out) |", "after a merge 16 → 4"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the part lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeShardsMarkdown(&b, costReport{Repetitions: 2, Shards: r})
	for _, want := range []string{"| never split | 4 shards | 16 shards |", "| take moving on |", "| take gathering its units |", "| split 1 → 16 |", "| checkout, the count stale |", "| 64 (the 16-shard figures, worked out) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, b.String())
		}
	}
}
