package storetest

import (
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// expiryDeadline bounds how long the suite waits for a 1 s ttl to take
// effect; the wait ends as soon as it has.
const expiryDeadline = 20 * time.Second

// waitGone polls until the item reads as not found.
func waitGone(t *testing.T, c store.Container, pk, id string) {
	t.Helper()
	deadline := time.Now().Add(expiryDeadline)
	for {
		_, err := c.Read(ctx, pk, id)
		if domain.IsCode(err, domain.ENOTFOUND) {
			return
		}
		if err != nil {
			t.Fatalf("Read(%s): %v", id, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("item %s still readable %v after its ttl", id, expiryDeadline)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testTTL(t *testing.T, s store.Store) {
	t.Run("PerItem", func(t *testing.T) {
		t.Parallel()
		c := newContainer(t, s, ttl(-1)) // on, no default: only items with a ttl expire
		mustCreate(t, c, "p", item("p", "short", "ttl", 1))
		mustCreate(t, c, "p", item("p", "forever", "ttl", -1))
		mustCreate(t, c, "p", item("p", "inherits"))
		waitGone(t, c, "p", "short")
		mustRead(t, c, "p", "forever")
		mustRead(t, c, "p", "inherits")
		items := queryAll(t, c, store.Query{PartitionKey: "p"})
		if got := ids(items); len(got) != 2 {
			t.Errorf("query after expiry returns %v, want forever and inherits", got)
		}
		fr := newFeedReader(t, c)
		for _, it := range all(fr.drain(10), fr.ranges) {
			if it["id"] == "short" {
				t.Errorf("expired item on the change feed")
			}
		}
	})
	t.Run("ContainerDefault", func(t *testing.T) {
		t.Parallel()
		c := newContainer(t, s, ttl(1))
		mustCreate(t, c, "p", item("p", "default"))
		mustCreate(t, c, "p", item("p", "forever", "ttl", -1))
		waitGone(t, c, "p", "default")
		mustRead(t, c, "p", "forever")
		_, err := c.Replace(ctx, "p", "default", item("p", "default"), nil)
		wantCode(t, "Replace of an expired item", err, domain.ENOTFOUND)
		mustCreate(t, c, "p", item("p", "default", "ttl", 3600))
	})
	t.Run("OffIgnoresItemTTL", func(t *testing.T) {
		t.Parallel()
		off := newContainer(t, s, nil)
		on := newContainer(t, s, ttl(-1))
		mustCreate(t, off, "p", item("p", "kept", "ttl", 1))
		mustCreate(t, on, "p", item("p", "probe", "ttl", 1))
		waitGone(t, on, "p", "probe")
		mustRead(t, off, "p", "kept")
	})
}
