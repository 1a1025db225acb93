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
// ONE batch however many shards; the claim reads the home document and
// the start shard; a take moving on reads every shard once; a refusal of
// a sold-out split stock reads every shard; a release and a commit
// follow a chain of 2 with one more read; a transfer is three batches;
// the feed reads every shard; and the home partition's read caps the
// ceiling however many shards.
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
	for _, st := range r.Stocks {
		n := float64(st.Shards)
		split := st.Shards > 1
		ops("take", st.Take.StoreOps, 1)
		ops("commit", st.Commit.StoreOps, 1)
		if st.Take.RequestUnits != one.Take.RequestUnits {
			t.Errorf("%d shards: a take %.2f RU, never split %.2f RU: want the same batch", st.Shards, st.Take.RequestUnits, one.Take.RequestUnits)
		}
		claim, refusalReads := 1.0, 1.0
		if split {
			claim, refusalReads = 2, n+2
			ops("moved take", st.MovedTake.StoreOps, 1+n+1+1)
			ops("release, chain of 2", st.Release2.StoreOps, 3)
			ops("commit, chain of 2", st.Commit2.StoreOps, 3)
			// Starting on the home shard, the claim has read its start
			// shard with the home document: one read fewer, or, when it
			// goes on to read every shard (servable), n−1 more.
			if h := st.HomeStart; h == nil || h.StoreOps != st.Checkout.StoreOps-1 && h.StoreOps != st.Checkout.StoreOps-1+n {
				t.Errorf("%d shards: starting home %+v, away %+v: want one read fewer, or every shard read", st.Shards, st.HomeStart, st.Checkout)
			}
		}
		ops("claim reads", st.ClaimReads.StoreOps, claim)
		ops("refusal's stock reads", st.RefusalReads.StoreOps, refusalReads)
		ops("short take", st.ShortTake.StoreOps, 1+n)
		ops("release", st.Release.StoreOps, 2)
		ops("commit, chain of 1", st.Commit1.StoreOps, 1)
		ops("feed", st.Feed.StoreOps, n+1)
		if st.Checkout.StoreOps != one.Checkout.StoreOps+claim-1 {
			t.Errorf("%d shards: a checkout %g ops, never split %g: want the start shard's read more", st.Shards, st.Checkout.StoreOps, one.Checkout.StoreOps)
		}
		if c := st.Ceiling; c.Ceiling <= 0 || c.Ceiling > r.HomeReadCeiling || c.WithFeed > c.Ceiling {
			t.Errorf("%d shards: %+v; want at most the home read's %.0f", st.Shards, c, r.HomeReadCeiling)
		}
	}
	if c := r.AtMost; c.Shards != domain.MaxStockShards || c.Ceiling > r.HomeReadCeiling || c.Ceiling < r.Stocks[len(r.Stocks)-1].Ceiling.Ceiling {
		t.Errorf("at most shards: %+v; want between the last stock's and the home read's %.0f", c, r.HomeReadCeiling)
	}
	if r.Stocks[1].Ceiling.Ceiling <= one.Ceiling.Ceiling {
		t.Errorf("ceilings %+v: want 4 shards above never split", r.Stocks)
	}
	ops("transfer", r.Move.StoreOps, 3)
	k := float64(shardSplitTo)
	// Split: home read, k−1 creates, the count (read, replace), k reads,
	// k−1 transfers of 3 batches, k reads.
	ops("split", r.Split.StoreOps, 1+(k-1)+2+k+3*(k-1)+k)
	ops("merge", r.Merge.StoreOps, 1+2+k+3*(k-1)+k)
	ops("feed of a merged stock", r.MergedFeed.StoreOps, k+1)

	var b strings.Builder
	writeShardsPart(&b, costReport{Command: "go run ./cmd/shop cost", Repetitions: 2, Shards: r})
	for _, want := range []string{"Written by `go run ./cmd/shop cost`", "| 1 | ", "| 16 | ", "| 64 (worked out) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the part lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeShardsMarkdown(&b, costReport{Repetitions: 2, Shards: r})
	for _, want := range []string{"| never split | 4 shards | 16 shards |", "| take moving on |", "| split 1 → 16 |", "| 64 (the 16-shard figures, worked out) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, b.String())
		}
	}
}
