package embedded

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// TestGroupCommitKeepsWritesApart puts writes that succeed and writes that
// are refused into ONE group commit: each refused write commits nothing,
// each other write commits exactly once, even though the batch that fails
// after writing makes bbolt rerun the whole group.
func TestGroupCommitKeepsWritesApart(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	c := ensure(t, s, "c", nil)
	for _, pk := range []string{"p", "b"} {
		if _, err := c.Create(bg, pk, doc(pk, "existing", "n", 0)); err != nil {
			t.Fatal(err)
		}
	}
	incr := []store.PatchOp{{Op: store.PatchIncrement, Path: "/n", Value: 1}}
	writes := []struct {
		name string
		call func() error
		want string
	}{
		{"create", func() error { _, err := c.Create(bg, "p", doc("p", "new")); return err }, ""},
		{"upsert", func() error { _, err := c.Upsert(bg, "p", doc("p", "upserted"), nil); return err }, ""},
		{"patch", func() error { _, err := c.Patch(bg, "p", "existing", incr, nil); return err }, ""},
		{"create existing", func() error { _, err := c.Create(bg, "p", doc("p", "existing")); return err }, domain.ECONFLICT},
		{"replace stale", func() error {
			_, err := c.Replace(bg, "p", "existing", doc("p", "existing"), &store.WriteOptions{IfMatch: `"stale"`})
			return err
		}, domain.EPRECONDITION},
		{"delete missing", func() error { _, err := c.Delete(bg, "p", "missing", nil); return err }, domain.ENOTFOUND},
		{"batch", func() error {
			_, err := c.ExecuteBatch(bg, "c", []store.BatchOp{{Kind: store.BatchCreate, Item: doc("c", "x")}})
			return err
		}, ""},
		{"batch failing after a write", func() error {
			_, err := c.ExecuteBatch(bg, "b", []store.BatchOp{
				{Kind: store.BatchCreate, Item: doc("b", "y")},
				{Kind: store.BatchCreate, Item: doc("b", "existing")},
			})
			return err
		}, domain.ECONFLICT},
		{"batch failing first", func() error {
			_, err := c.ExecuteBatch(bg, "b", []store.BatchOp{
				{Kind: store.BatchReplace, ID: "missing", Item: doc("b", "missing")},
				{Kind: store.BatchCreate, Item: doc("b", "z")},
			})
			return err
		}, domain.ENOTFOUND},
	}
	got := make([]string, len(writes))
	var calls []func()
	for i, w := range writes {
		calls = append(calls, func() { got[i] = domain.ErrorCode(w.call()) })
	}
	inOneGroup(s, calls)
	for i, w := range writes {
		if got[i] != w.want {
			t.Errorf("%s: error code %q, want %q", w.name, got[i], w.want)
		}
	}

	var feed []string
	ranges, err := c.ReadFeedRanges(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges {
		p, err := c.ReadChangeFeed(bg, r, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			m, err := repo.Decode[map[string]any](it)
			if err != nil {
				t.Fatal(err)
			}
			feed = append(feed, fmt.Sprintf("%v/%v n=%v", m["pk"], m["id"], m["n"]))
		}
	}
	want := []string{"b/existing n=0", "c/x n=<nil>", "p/existing n=1", "p/new n=<nil>", "p/upserted n=<nil>"}
	slices.Sort(feed)
	if diff := cmp.Diff(want, feed); diff != "" {
		t.Errorf("items on the change feed (-want +got):\n%s", diff)
	}
}

// inOneGroup runs calls concurrently and makes their writes one group
// commit: it holds the group commit as if a group were committing until
// every call has queued, then lets the first queued write lead.
func inOneGroup(s *Store, calls []func()) {
	g := &s.group
	g.mu.Lock()
	g.running = true
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, call := range calls {
		wg.Go(call)
	}
	for {
		g.mu.Lock()
		if len(g.queue) == len(calls) {
			g.queue[0].done <- errLead
			g.mu.Unlock()
			break
		}
		g.mu.Unlock()
		runtime.Gosched()
	}
	wg.Wait()
}

// TestGroupCommitPanicStaysWithItsWrite: a write that panics inside a
// group panics in its own goroutine, and the others of the group commit.
func TestGroupCommitPanicStaysWithItsWrite(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	bucket := []byte("test")
	put := func(key string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			return b.Put([]byte(key), []byte("v"))
		}
	}
	var errA, errB error
	var recovered any
	inOneGroup(s, []func(){
		func() { errA = s.update(put("a")) },
		func() {
			defer func() { recovered = recover() }()
			_ = s.update(func(*bolt.Tx) error { panic("boom") })
		},
		func() { errB = s.update(put("b")) },
	})
	if errA != nil || errB != nil {
		t.Errorf("writes grouped with a panic: %v, %v; want both committed", errA, errB)
	}
	if got, want := fmt.Sprint(recovered), "boom"; got != want {
		t.Errorf("panic of the failing write = %q, want %q in its own goroutine", got, want)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, k := range []string{"a", "b"} {
			if tx.Bucket(bucket).Get([]byte(k)) == nil {
				t.Errorf("key %s was not committed", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommitsCountsTransactions: Commits counts the write transactions
// the store committed, one per write made alone and one per group of
// concurrent writes, a batch of several items as one; a read commits
// nothing.
func TestCommitsCountsTransactions(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	c := ensure(t, s, "c", nil)
	start := s.Commits()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.Create(bg, "p", doc("p", id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Read(bg, "p", "a"); err != nil {
		t.Fatal(err)
	}
	if got := s.Commits() - start; got != 3 {
		t.Errorf("three creates and a read: %d commits, want 3", got)
	}
	start = s.Commits()
	_, err := c.ExecuteBatch(bg, "p", []store.BatchOp{
		{Kind: store.BatchCreate, Item: doc("p", "d")},
		{Kind: store.BatchCreate, Item: doc("p", "e")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Commits() - start; got != 1 {
		t.Errorf("a batch of two creates: %d commits, want 1", got)
	}
	start = s.Commits()
	var calls []func()
	for _, id := range []string{"f", "g", "h"} {
		calls = append(calls, func() {
			if _, err := c.Create(bg, "p", doc("p", id)); err != nil {
				t.Error(err)
			}
		})
	}
	inOneGroup(s, calls)
	if got := s.Commits() - start; got != 1 {
		t.Errorf("three creates in one group: %d commits, want 1", got)
	}
}

// TestARefusedWriteCommitsNothing: a write refused by its condition (an
// id that exists, a stale If-Match, a patch's condition, a missing item)
// writes nothing, so there is nothing to make durable: alone, or in a
// group of refusals, it makes no commit (no fsync); beside a write that
// succeeds, the group commits that one.
func TestARefusedWriteCommitsNothing(t *testing.T) {
	s := openTemp(t, Options{NoSync: true})
	c := ensure(t, s, "c", nil)
	if _, err := c.Create(bg, "p", doc("p", "a", "n", 0)); err != nil {
		t.Fatal(err)
	}
	refusals := []func() error{
		func() error { _, err := c.Create(bg, "p", doc("p", "a")); return err },
		func() error {
			_, err := c.Replace(bg, "p", "a", doc("p", "a"), &store.WriteOptions{IfMatch: `"stale"`})
			return err
		},
		func() error {
			_, err := c.Patch(bg, "p", "a", []store.PatchOp{{Op: store.PatchSet, Path: "/n", Value: 1}},
				&store.PatchOptions{Condition: store.Condition{{Path: "n", Op: store.OpEqual, Value: 5}}})
			return err
		},
		func() error { _, err := c.Delete(bg, "p", "missing", nil); return err },
		func() error {
			_, err := c.ExecuteBatch(bg, "p", []store.BatchOp{{Kind: store.BatchCreate, Item: doc("p", "a")}})
			return err
		},
	}
	start := s.Commits()
	for i, refuse := range refusals {
		if err := refuse(); domain.ErrorCode(err) == "" {
			t.Fatalf("refusal %d succeeded", i)
		}
	}
	if got := s.Commits() - start; got != 0 {
		t.Errorf("%d refused writes alone: %d commits, want 0", len(refusals), got)
	}
	start = s.Commits()
	var calls []func()
	for _, refuse := range refusals {
		calls = append(calls, func() { _ = refuse() })
	}
	inOneGroup(s, calls)
	if got := s.Commits() - start; got != 0 {
		t.Errorf("a group of refused writes: %d commits, want 0", got)
	}
	start = s.Commits()
	inOneGroup(s, append(calls, func() {
		if _, err := c.Create(bg, "p", doc("p", "b")); err != nil {
			t.Error(err)
		}
	}))
	if got := s.Commits() - start; got != 1 {
		t.Errorf("refused writes and a create in one group: %d commits, want 1", got)
	}
	if _, err := c.Read(bg, "p", "b"); err != nil {
		t.Errorf("the create grouped with refusals: %v", err)
	}
}
