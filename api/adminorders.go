package api

import (
	"cmp"
	"net/http"
	"slices"
	"sync"
	"time"

	"shop/domain"
	"shop/store"
)

// MaxOrderDays bounds a from/to admin query: one partition per day.
const MaxOrderDays = 31

// handleAdminOrders lists the orders of one status. With day (default
// today, UTC) it is ONE single-partition query on ordersByStatus under the
// synthetic key status:day (partition-synthetic-key). With from and to it
// runs one such query per day concurrently and merges them newest first,
// returning at most limit orders and no continuation; the cost headers
// count every partition touched.
func handleAdminOrders(summaries *store.OrderSummaries, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		status := q.Get("status")
		if status == "" {
			status = domain.StatusPlaced
		}
		if !domain.ValidStatus(status) {
			writeProblem(w, r, domain.Errorf(domain.EINVALID, "status must be placed, shipped, delivered or cancelled"))
			return
		}
		limit, cont, err := pageParams(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		from, to := q.Get("from"), q.Get("to")
		if from == "" && to == "" {
			day, err := parseDay("day", q.Get("day"), now())
			if err != nil {
				writeProblem(w, r, err)
				return
			}
			items, next, err := summaries.Page(r.Context(), domain.StatusDay(status, day), limit, cont)
			if err != nil {
				writeProblem(w, r, err)
				return
			}
			encode(w, http.StatusOK, pageOf(mapSlice(items, viewOrderSummary), next))
			return
		}
		days, err := dayRange(q.Get("day"), from, to, cont)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		items, err := acrossDays(r, summaries, status, days, limit)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		encode(w, http.StatusOK, pageOf(mapSlice(items, viewOrderSummary), ""))
	}
}

// acrossDays queries one partition per day concurrently: each query is
// single-partition and cheap, and they do not wait on each other.
func acrossDays(r *http.Request, summaries *store.OrderSummaries, status string, days []time.Time, limit int) ([]domain.OrderSummary, error) {
	pages := make([][]domain.OrderSummary, len(days))
	errs := make([]error, len(days))
	var wg sync.WaitGroup
	for i, day := range days {
		wg.Go(func() {
			pages[i], _, errs[i] = summaries.Page(r.Context(), domain.StatusDay(status, day), limit, "")
		})
	}
	wg.Wait()
	var all []domain.OrderSummary
	for i := range days {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, pages[i]...)
	}
	slices.SortFunc(all, func(a, b domain.OrderSummary) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

func parseDay(name, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now.UTC(), nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, domain.Errorf(domain.EINVALID, "%s must be a date YYYY-MM-DD", name)
	}
	return d, nil
}

// dayRange returns the days from..to, both included (UTC).
func dayRange(day, from, to, cont string) ([]time.Time, error) {
	switch {
	case day != "":
		return nil, domain.Errorf(domain.EINVALID, "give either day or from and to, not both")
	case from == "" || to == "":
		return nil, domain.Errorf(domain.EINVALID, "from and to go together")
	case cont != "":
		return nil, domain.Errorf(domain.EINVALID, "continuation is only for one day")
	}
	f, err := parseDay("from", from, time.Time{})
	if err != nil {
		return nil, err
	}
	t, err := parseDay("to", to, time.Time{})
	if err != nil {
		return nil, err
	}
	if t.Before(f) {
		return nil, domain.Errorf(domain.EINVALID, "from must not be after to")
	}
	n := int(t.Sub(f).Hours()/24) + 1
	if n > MaxOrderDays {
		return nil, domain.Errorf(domain.EINVALID, "from..to spans %d days; at most %d are allowed", n, MaxOrderDays)
	}
	days := make([]time.Time, n)
	for i := range days {
		days[i] = f.AddDate(0, 0, i)
	}
	return days, nil
}
