package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentCreatesOfOneProductKeepTheWinnersStock: several admins
// (or one client retrying) create the same product id at once, each with
// its own stock count. The answer must be what running them one after
// another gives: one 201, a 409 for every other, and the stored stock is
// the count of the request that got the 201. A request refused with 409
// wrote nothing.
func TestConcurrentCreatesOfOneProductKeepTheWinnersStock(t *testing.T) {
	const at = 8
	rounds := 20
	if longRun() {
		rounds = 200
	}
	s := newLiveShop(t, filepath.Join(t.TempDir(), "shop.db"), nil)
	admin := liveToken(t, "boss", true)
	s.must("PUT", "/v1/categories/tea", admin, map[string]string{"name": "Tea"}, nil, http.StatusCreated, nil)
	var failed []string
	for round := range rounds {
		id := fmt.Sprintf("contested-%03d", round)
		type answer struct {
			code int
			body []byte
			err  error
		}
		answers := make([]answer, at)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range at {
			wg.Go(func() {
				<-start
				code, b, err := httpDo(s.client, "POST", s.URL+"/v1/products", admin, map[string]any{
					"productId": id, "name": "Contested tea", "priceCents": 700, "categoryId": "tea", "stock": stockOf(i),
				}, nil)
				answers[i] = answer{code, b, err}
			})
		}
		close(start)
		wg.Wait()

		var problems []string
		winner, conflicts := -1, 0
		for i, a := range answers {
			switch {
			case a.err != nil:
				problems = append(problems, fmt.Sprintf("create %d: %v", i, a.err))
			case a.code == http.StatusCreated:
				if winner >= 0 {
					problems = append(problems, fmt.Sprintf("creates %d and %d both answered 201", winner, i))
				}
				winner = i
				var p struct {
					Availability struct {
						Status string `json:"status"`
					} `json:"availability"`
				}
				if err := json.Unmarshal(a.body, &p); err != nil || p.Availability.Status != "in_stock" {
					problems = append(problems, fmt.Sprintf("create %d: 201 with %s, want availability in_stock", i, describe(a.body)))
				}
			case a.code == http.StatusConflict:
				conflicts++
			default:
				problems = append(problems, fmt.Sprintf("create %d: %d %s, want 201 or 409", i, a.code, describe(a.body)))
			}
		}
		var stock struct {
			Available int64 `json:"available"`
		}
		s.must("GET", "/v1/admin/products/"+id+"/stock", admin, nil, nil, http.StatusOK, &stock)
		switch {
		case winner < 0 || conflicts != at-1:
			problems = append([]string{fmt.Sprintf("%d × 201, %d × 409", at-conflicts, conflicts)}, problems...)
		case stock.Available != stockOf(winner):
			loser := "no request's"
			for i := range at {
				if stockOf(i) == stock.Available {
					loser = fmt.Sprintf("create %d's (answered %d)", i, answers[i].code)
				}
			}
			problems = append(problems, fmt.Sprintf("stock %d, %s count; the 201 (create %d) asked for %d",
				stock.Available, loser, winner, stockOf(winner)))
		}
		if len(problems) > 0 {
			failed = append(failed, fmt.Sprintf("round %d: %s", round, strings.Join(problems, "; ")))
		}
	}
	t.Logf("%d rounds of %d concurrent creates of one product id: %d rounds wrong", rounds, at, len(failed))
	if len(failed) > 0 {
		t.Errorf("%d of %d rounds were not as if run one after another:\n%s", len(failed), rounds, strings.Join(failed, "\n"))
	}
}

// stockOf is the stock count create i of a round asks for: all distinct,
// all in stock.
func stockOf(i int) int64 { return int64(100 + i) }
