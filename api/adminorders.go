package api

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// MaxOrderDays bounds a from/to admin query: one partition per day.
const MaxOrderDays = 31

// handleAdminOrders lists the orders of one status. With day (default
// today, UTC) it reads the day's partitions (OrderSummaries.Buckets) of
// ordersByStatus under the synthetic key status:bucket:day
// (partition-synthetic-keys): one single-partition query per bucket, run
// concurrently and merged newest first, with a continuation that holds
// each bucket's position. With from and to it does that for each day and
// merges the days, returning at most limit orders and no continuation;
// the cost headers count every partition touched.
func handleAdminOrders(summaries *repo.OrderSummaries, now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := queryOf(r)
		status := q.Get("status")
		if status == "" {
			status = domain.StatusPlaced
		}
		if st, ok := domain.StateOf(status); !ok || st.InProgress {
			writeProblem(w, r, domain.Errorf(domain.EINVALID, "status must be placed, shipped, delivered, cancelled, rejected or expired: the view holds the orders that rest"))
			return
		}
		limit, cont, err := pageParamsUpTo(r, maxDayContinuation)
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
			items, next, err := summaries.DayPage(r.Context(), status, day, limit, cont)
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

// maxDayContinuation bounds the continuation of the day query: one store
// continuation per bucket.
const maxDayContinuation = domain.MaxStatusBuckets * maxContinuation

// daysAtOnce bounds the days read concurrently by a from..to query, each
// of which reads its buckets concurrently.
const daysAtOnce = 4

// acrossDays reads each day's first page concurrently (daysAtOnce at a
// time): every query is single-partition and cheap, and they do not wait
// on each other.
func acrossDays(r *http.Request, summaries *repo.OrderSummaries, status string, days []time.Time, limit int) ([]domain.OrderSummary, error) {
	pages := make([][]domain.OrderSummary, len(days))
	g, ctx := errgroup.WithContext(r.Context())
	g.SetLimit(daysAtOnce)
	for i, day := range days {
		g.Go(func() (err error) {
			pages[i], _, err = summaries.DayPage(ctx, status, day, limit, "")
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []domain.OrderSummary
	for _, p := range pages {
		all = append(all, p...)
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
	// Seconds, not a time.Duration: one saturates past 292 years.
	n := int((t.Unix()-f.Unix())/(24*60*60)) + 1
	if n > MaxOrderDays {
		return nil, domain.Errorf(domain.EINVALID, "from..to spans %d days; at most %d are allowed", n, MaxOrderDays)
	}
	days := make([]time.Time, n)
	for i := range days {
		days[i] = f.AddDate(0, 0, i)
	}
	return days, nil
}
