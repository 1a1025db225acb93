package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestAdminShipsEveryOrderItPagesThrough is the admin's day at the shop:
// customers have placed orders, and the admin pages through the placed
// orders (a small limit, so a page takes part of a bucket's store page),
// ships each order a page shows, and asks for the next page once the
// orders feed has moved the shipped orders out of the placed view. Every
// order placed when the walk began is shown exactly once.
func TestAdminShipsEveryOrderItPagesThrough(t *testing.T) {
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
	products := s.catalog(2)
	admin := liveToken(t, "boss", true)
	placed := map[string]string{} // order id -> its day
	var day string
	for i := range 30 {
		user := fmt.Sprintf("buyer-%02d", i)
		tok := liveToken(t, user, false)
		s.must("POST", "/v1/cart/items/"+products[i%2], tok, map[string]int{"quantity": 1}, nil, http.StatusOK, nil)
		var o struct {
			ID        string    `json:"id"`
			CreatedAt time.Time `json:"createdAt"`
		}
		s.must("POST", "/v1/checkout", tok, addressBody, map[string]string{"Idempotency-Key": "k-" + user}, http.StatusCreated, &o)
		if day == "" {
			day = o.CreatedAt.UTC().Format(time.DateOnly)
		}
		placed[o.ID] = o.CreatedAt.UTC().Format(time.DateOnly)
	}
	// The feed's lag is the one its last poll saw: the view itself is
	// waited for.
	awaitPlaced(t, s, admin, day, func(ids map[string]bool) bool {
		for id, d := range placed {
			if d == day && !ids[id] {
				return false
			}
		}
		return true
	})

	shown := map[string]int{}
	cont := ""
	for pages := 0; ; pages++ {
		if pages > len(placed) {
			t.Fatalf("more than %d pages for %d orders", pages, len(placed))
		}
		path := "/v1/admin/orders?status=placed&limit=2&day=" + day
		if cont != "" {
			path += "&continuation=" + cont
		}
		var page struct {
			Items        []adminOrder `json:"items"`
			Continuation *string      `json:"continuation"`
		}
		s.must("GET", path, admin, nil, nil, http.StatusOK, &page)
		for _, o := range page.Items {
			shown[o.ID]++
			s.must("PATCH", "/v1/admin/orders/"+o.UserID+"/"+o.ID, admin, map[string]string{"status": "shipped"}, nil, http.StatusOK, nil)
		}
		awaitPlaced(t, s, admin, day, func(ids map[string]bool) bool {
			return !slices.ContainsFunc(page.Items, func(o adminOrder) bool { return ids[o.ID] })
		})
		if page.Continuation == nil {
			break
		}
		cont = *page.Continuation
	}
	var missed, twice []string
	for id, d := range placed {
		switch {
		case d != day:
		case shown[id] == 0:
			missed = append(missed, id)
		case shown[id] > 1:
			twice = append(twice, id)
		}
	}
	slices.Sort(missed)
	slices.Sort(twice)
	if len(missed) > 0 || len(twice) > 0 {
		t.Errorf("of %d orders placed on %s and shipped page by page, never shown: %v; shown more than once: %v", len(placed), day, missed, twice)
	}
}

// adminOrder is an order as the admin's list shows it.
type adminOrder struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
}

// awaitPlaced waits, up to 10 s, until the day's placed orders (one page
// of 100) satisfy done.
func awaitPlaced(t *testing.T, s *liveShop, admin, day string, done func(ids map[string]bool) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		s.must("GET", "/v1/admin/orders?status=placed&limit=100&day="+day, admin, nil, nil, http.StatusOK, &page)
		ids := map[string]bool{}
		for _, o := range page.Items {
			ids[o.ID] = true
		}
		if done(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the placed orders of %s did not follow the feed within 10 s: %v", day, ids)
		}
	}
}
