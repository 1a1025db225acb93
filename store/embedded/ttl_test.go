package embedded

import (
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// storedItems counts the items physically in the file, expired or not.
func storedItems(t *testing.T, s *Store, name string) int {
	t.Helper()
	st, err := s.state(name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = s.db.View(func(tx *bolt.Tx) error {
		for p := range st.items {
			n += tx.Bucket(st.items[p]).Stats().KeyN
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestExpiredInvisibleAtOnce(t *testing.T) {
	clk := newClock()
	s := openTemp(t, Options{Now: clk.Now, TTLPurgeInterval: time.Hour})
	c := ensure(t, s, "c", ttlOf(60))
	if _, err := c.Create(bg, "p", doc("p", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(bg, "p", doc("p", "b", "ttl", 120)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(59 * time.Second)
	if _, err := c.Read(bg, "p", "a"); err != nil {
		t.Fatalf("Read before the default ttl: %v", err)
	}
	clk.Advance(time.Second)
	_, err := c.Read(bg, "p", "a")
	if got, want := domain.ErrorCode(err), domain.ENOTFOUND; got != want {
		t.Fatalf("Read at the default ttl: code %q, want %q", got, want)
	}
	q, err := c.Query(bg, store.Query{PartitionKey: "p"})
	if err != nil || len(q.Items) != 1 {
		t.Errorf("query after expiry: %d items, %v; want only b", len(q.Items), err)
	}
	clk.Advance(60 * time.Second)
	if _, err := c.Read(bg, "p", "b"); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Errorf("Read after the item's own ttl: %v, want not found", err)
	}
	ranges, _ := c.ReadFeedRanges(bg)
	for _, r := range ranges {
		p, err := c.ReadChangeFeed(bg, r, "", 10)
		if err != nil || len(p.Items) != 0 {
			t.Errorf("feed of %s after expiry: %d items, %v; want none", r, len(p.Items), err)
		}
	}
	if got, want := storedItems(t, s, "c"), 2; got != want {
		t.Errorf("items in the file before the purge = %d, want %d", got, want)
	}
}

func TestPurgeRunsInBackground(t *testing.T) {
	clk := newClock()
	s := openTemp(t, Options{Now: clk.Now, TTLPurgeInterval: 5 * time.Millisecond})
	c := ensure(t, s, "c", ttlOf(-1))
	for _, d := range [][]byte{doc("p", "short", "ttl", 10), doc("p", "forever", "ttl", -1), doc("p", "inherits")} {
		if _, err := c.Create(bg, "p", d); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(11 * time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for storedItems(t, s, "c") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("expired item still in the file after 10 s of 5 ms purges")
		}
		time.Sleep(5 * time.Millisecond)
	}
	st, _ := s.state("c")
	var feedEntries int
	_ = s.db.View(func(tx *bolt.Tx) error {
		for p := range st.feed {
			feedEntries += tx.Bucket(st.feed[p]).Stats().KeyN
		}
		return nil
	})
	if got, want := feedEntries, 2; got != want {
		t.Errorf("change-feed entries after the purge = %d, want %d", got, want)
	}
}

// TestDefaultTTLChangeApplies: expiry is computed from the container's
// current default, as on Cosmos, not frozen at write time.
func TestDefaultTTLChangeApplies(t *testing.T) {
	clk := newClock()
	s := openTemp(t, Options{Now: clk.Now, TTLPurgeInterval: time.Hour})
	c := ensure(t, s, "c", nil)
	if _, err := c.Create(bg, "p", doc("p", "a")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if _, err := c.Read(bg, "p", "a"); err != nil {
		t.Fatalf("Read with TTL off: %v", err)
	}
	ensure(t, s, "c", ttlOf(60))
	if _, err := c.Read(bg, "p", "a"); !domain.IsCode(err, domain.ENOTFOUND) {
		t.Errorf("Read after turning a 60 s default on, an hour after the write: %v, want not found", err)
	}
}
