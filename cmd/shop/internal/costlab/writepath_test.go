package costlab

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestWritePath runs `shop cost --writepath --json` with a few
// repetitions and checks the figures against each other: every operation
// committed, the PUT once (one cart write), and both sides were timed;
// the orders feed's pass over a placed order, whose every effect is
// done, commits nothing.
func TestWritePath(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--writepath", "--json", "--reps", "3", "--dir", t.TempDir()}
	if err := Run(context.Background(), args, noEnv, &out); err != nil {
		t.Fatalf("shop cost --writepath: %v", err)
	}
	var rep writePathReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, out.String())
	}
	if got, want := len(rep.Ops), 2+len(checkoutLines); got != want {
		t.Fatalf("operations = %d, want %d", got, want)
	}
	for _, o := range rep.Ops {
		if o.Op == feedPassOp {
			// Every effect was carried out: each write is refused by its
			// condition or not sent, and a refusal commits nothing.
			if o.Commits != 0 || o.Writes != 0 || o.StoreOps == 0 || o.Limit != (timing{}) || o.Ratio != 0 {
				t.Errorf("%s: %v commits, %v writes, %v store ops, limit %+v, ratio %v; want reads, no commit and no limit", o.Op, o.Commits, o.Writes, o.StoreOps, o.Limit, o.Ratio)
			}
			continue
		}
		// A batch writes several items (an order's move, its event), so
		// the reads show as store calls that committed nothing.
		if o.Commits < 1 || o.Writes < o.Commits || o.Bytes <= 0 || o.StoreOps <= o.Commits {
			t.Errorf("%s: %v commits, %v writes, %v bytes, %v store ops; want a commit at least, a write per commit, bytes, and reads beside the writes", o.Op, o.Commits, o.Writes, o.Bytes, o.StoreOps)
		}
		if o.Shop.MedianMicros <= 0 || o.Limit.MedianMicros <= 0 || o.Shop.P90Micros < o.Shop.MedianMicros {
			t.Errorf("%s: shop %+v, limit %+v; want both timed, p90 >= median", o.Op, o.Shop, o.Limit)
		}
	}
	if put := rep.Ops[0]; put.Commits != 1 || put.Writes != 1 {
		t.Errorf("cart PUT: %v commits of %v writes, want the cart's one", put.Commits, put.Writes)
	}
}

// TestWritePathRefusesTheLabsFlags: --writepath builds no data set.
func TestWritePathRefusesTheLabsFlags(t *testing.T) {
	err := Run(context.Background(), []string{"--writepath", "--products", "5"}, noEnv, new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), "--products") {
		t.Errorf("--writepath --products: %v, want an error naming --products", err)
	}
}

// TestBareFileHoldsWhatTheStoreHolds: the bare file, given the writes of
// a checkout as the log saw them, holds each item's document as the
// store holds it, under the store's key, with a change-feed entry each.
func TestBareFileHoldsWhatTheStoreHolds(t *testing.T) {
	ctx := context.Background()
	l, err := newWritePathLab(ctx, t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if err := l.bare.commit(l.log.take()); err != nil {
		t.Fatal(err)
	}
	op, err := l.checkout(3)(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.bare.commit(l.log.take()); err != nil {
		t.Fatal(err)
	}
	start := l.es.Commits()
	if err := op(ctx); err != nil {
		t.Fatal(err)
	}
	ws := l.log.take()
	if err := l.bare.replay(ws, int(l.es.Commits()-start)); err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		t.Fatal("the checkout logged no write")
	}
	err = l.bare.db.View(func(tx *bolt.Tx) error {
		for _, w := range ws {
			if w.doc == nil {
				continue
			}
			stored, err := l.es.Container(w.container).Read(ctx, w.pk, w.id)
			if err != nil {
				t.Errorf("%s %s/%s: %v", w.container, w.pk, w.id, err)
				continue
			}
			v := tx.Bucket(itemsOf(w.container)).Get(itemKeyOf(w))
			if v == nil || !bytes.HasSuffix(v, stored.Item) || len(v) != headerSize(w)+len(stored.Item) {
				t.Errorf("%s %s/%s: the bare file holds %q, want a header and %q", w.container, w.pk, w.id, v, stored.Item)
			}
		}
		var items, feed int
		for _, name := range containersOf(ws) {
			items += tx.Bucket(itemsOf(name)).Stats().KeyN
			feed += tx.Bucket(feedOf(name)).Stats().KeyN
		}
		if items != feed {
			t.Errorf("%d items, %d feed entries; want one entry per item", items, feed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// containersOf names the containers ws wrote, once each.
func containersOf(ws []itemWrite) []string {
	var names []string
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w.container] {
			seen[w.container] = true
			names = append(names, w.container)
		}
	}
	return names
}
