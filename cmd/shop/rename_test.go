package main

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCategoryRenameRightAfterProductsJoinReachesThem: an admin creates
// products in a category, or moves products into it, and renames the
// category as soon as those calls have returned. Once the feeds have
// caught up, every one of those products shows the new name and none the
// old: on its product page, on the category page, and in search, where
// the new name's word finds them all and the old name's word none. The
// category name is a copy on each product, and the rename must reach the
// products whose own change the category view had not caught up with
// yet when the rename was handled.
func TestCategoryRenameRightAfterProductsJoinReachesThem(t *testing.T) {
	rounds := 3
	if longRun() {
		rounds = 20
	}
	const (
		perRound = 15
		// converge bounds the wait for the feeds: they take milliseconds.
		converge = 5 * time.Second
	)
	for _, how := range []string{"created", "moved"} {
		t.Run(how, func(t *testing.T) {
			s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
			admin := liveToken(t, "boss", true)
			s.must("PUT", "/v1/categories/home", admin, map[string]string{"name": "Home"}, nil, http.StatusCreated, nil)
			patch := map[string]string{"Content-Type": "application/merge-patch+json"}
			wrongRounds, wrongProducts := 0, 0
			for round := range rounds {
				cat := fmt.Sprintf("%s-%d", how, round)
				oldWord, newWord := fmt.Sprintf("old%s%d", how, round), fmt.Sprintf("new%s%d", how, round)
				ids := make([]string, perRound)
				for i := range ids {
					ids[i] = fmt.Sprintf("%s-p%02d", cat, i)
				}
				if how == "moved" {
					// The products exist, and the feeds have caught up
					// with them, before they move.
					for _, id := range ids {
						s.must("POST", "/v1/products", admin, map[string]any{
							"productId": id, "name": "Cup " + id, "priceCents": 500, "categoryId": "home", "stock": 10,
						}, nil, http.StatusCreated, nil)
					}
					if stale := s.awaitConverged(nil, converge); stale != nil {
						t.Fatalf("round %d: before the moves: %v", round, stale)
					}
				}
				s.must("PUT", "/v1/categories/"+cat, admin, map[string]string{"name": "Cups " + oldWord}, nil, http.StatusCreated, nil)
				for _, id := range ids {
					if how == "moved" {
						s.must("PATCH", "/v1/products/"+id, admin, map[string]string{"categoryId": cat}, patch, http.StatusOK, nil)
					} else {
						s.must("POST", "/v1/products", admin, map[string]any{
							"productId": id, "name": "Cup " + id, "priceCents": 500, "categoryId": cat, "stock": 10,
						}, nil, http.StatusCreated, nil)
					}
				}
				newName := "Cups " + newWord
				s.must("PUT", "/v1/categories/"+cat, admin, map[string]string{"name": newName}, nil, http.StatusOK, nil)

				if stale := s.awaitConverged(nil, converge); stale != nil {
					t.Fatalf("round %d: the feeds did not catch up: %v", round, stale)
				}
				// The feeds may still be passing a change on from one to
				// another: a moment more before the verdict.
				var wrong map[string][]string
				for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
					wrong = s.renameMisses(cat, ids, newName, oldWord, newWord)
					if len(wrong) == 0 || time.Now().After(deadline) {
						break
					}
				}
				if len(wrong) > 0 {
					wrongRounds++
					wrongProducts += len(wrong)
					var lines []string
					for _, id := range slices.Sorted(maps.Keys(wrong)) {
						lines = append(lines, id+": "+strings.Join(wrong[id], "; "))
					}
					t.Errorf("round %d: %d of %d products not shown as %q after the feeds caught up:\n%s",
						round, len(wrong), perRound, newName, strings.Join(lines, "\n"))
				}
			}
			t.Logf("%d rounds of %d products %s, then their category renamed: %d rounds wrong, %d of %d products not shown under the new name",
				rounds, perRound, how, wrongRounds, wrongProducts, rounds*perRound)
		})
	}
}

// renameMisses lists, for each of the products ids of category cat,
// where it does not show newName: its product page, the category page,
// and search, by the new name's word (which must find it) and by the old
// name's word (which must not).
func (s *liveShop) renameMisses(cat string, ids []string, newName, oldWord, newWord string) map[string][]string {
	s.t.Helper()
	wrong := map[string][]string{}
	miss := func(id, format string, args ...any) { wrong[id] = append(wrong[id], fmt.Sprintf(format, args...)) }
	for _, id := range ids {
		var p struct {
			CategoryName string `json:"categoryName"`
		}
		s.must("GET", "/v1/products/"+id, "", nil, nil, http.StatusOK, &p)
		if p.CategoryName != newName {
			miss(id, "product page %q", p.CategoryName)
		}
	}
	type summaries struct {
		Items []struct {
			ID           string `json:"id"`
			CategoryName string `json:"categoryName"`
		} `json:"items"`
	}
	var page summaries
	s.must("GET", "/v1/categories/"+cat+"/products?limit=100", "", nil, nil, http.StatusOK, &page)
	listed := map[string]bool{}
	for _, it := range page.Items {
		listed[it.ID] = true
		if !slices.Contains(ids, it.ID) {
			miss(it.ID, "listed on the category page of %s", cat)
		} else if it.CategoryName != newName {
			miss(it.ID, "category page %q", it.CategoryName)
		}
	}
	for _, q := range []struct {
		word  string
		found bool
	}{{newWord, true}, {oldWord, false}} {
		var res summaries
		s.must("GET", "/v1/search?limit=100&q="+url.QueryEscape(q.word), "", nil, nil, http.StatusOK, &res)
		found := map[string]bool{}
		for _, it := range res.Items {
			found[it.ID] = true
		}
		for _, id := range ids {
			if found[id] != q.found {
				miss(id, "search %q found it: %v", q.word, found[id])
			}
		}
	}
	for _, id := range ids {
		if !listed[id] {
			miss(id, "not on the category page")
		}
	}
	return wrong
}
