package writes_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// TestUnitsLeftInFlightByADeadMoverAreSold: a merge's transfer dies
// between its sender's batch and its delivery (the process killed), so
// its units are in flight until the inventory feed delivers them, which
// for a dead instance waits for its lease to expire (10 s by default;
// TestSplitStockThroughKills in cmd/shop met it over HTTP: every buyer
// refused for those seconds with "requested 1, available 11"). Meanwhile
// a buyer is served from them, and a refusal never names a line with
// enough: the take delivers what it finds in flight before it refuses.
func TestUnitsLeftInFlightByADeadMoverAreSold(t *testing.T) {
	ctx := t.Context()
	s := newShop(t, map[string]int64{"hot": 4})
	if l := s.split("hot", 2); !slices.Equal(l.Units, []int64{2, 2}) {
		t.Fatalf("split into 2: %+v", l)
	}
	d := &dying{Store: s.st}
	d.left.Store(1) // the sender's batch, and no more
	if err := repo.NewInventory(d).Move(ctx, "hot", "", 1, 0, 2, time.Now()); !errors.Is(err, errDead) {
		t.Fatalf("a transfer dying after its sender's batch: %v", err)
	}
	if l := s.layout("hot"); !slices.Equal(l.Units, []int64{2, 0}) {
		t.Fatalf("after the dead transfer: %v, want [2 0] and 2 in flight", l.Units)
	}
	for _, u := range []string{"a", "b"} {
		s.fill(u, 1, "hot")
		if o, err := s.writes(s.st).Checkout(ctx, checkout(u, "k", "pm_card_visa")); err != nil || o.Status != domain.StatusPlaced {
			t.Fatalf("buyer %s of shard 0's units: %v (%s)", u, err, o.Status)
		}
	}
	// Shard 0 sold out; the 2 units in flight are the stock's last.
	s.fill("c", 1, "hot")
	o, err := s.writes(s.st).Checkout(ctx, checkout("c", "k", "pm_card_visa"))
	if err != nil || o.Status != domain.StatusPlaced {
		t.Errorf("a buyer of 1 with 2 units in flight: %v (%s), want it served", err, o.Status)
	}
	s.fill("d", 2, "hot")
	_, err = s.writes(s.st).Checkout(ctx, checkout("d", "k", "pm_card_visa"))
	if de, ok := errors.AsType[*domain.Error](err); ok && de.Code == domain.EOUTOFSTOCK {
		for _, l := range de.Shortages {
			if l.Available >= l.Requested {
				t.Errorf("refused %d units, naming %d available", l.Requested, l.Available)
			}
		}
	}
	s.deliver("hot")
	s.settle(false)
	s.check()
}
