package repo_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/repo"
)

// TestOrderSummariesDayPageIsTheDaysOrdersInOrder is model-based: orders
// of three days move through the status machine in a random order of
// events, the view follows each move (Project, as the orders feed does),
// and the day query paged at several sizes must return exactly the orders
// the model holds for that status and day, newest first, ties by id.
func TestOrderSummariesDayPageIsTheDaysOrdersInOrder(t *testing.T) {
	ctx := t.Context()
	views := repo.NewOrderSummaries(newStore(t))
	rng := rand.New(rand.NewPCG(18, 2))
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	model := map[string]domain.Order{} // order id -> its current version
	next := map[string][]string{
		domain.StatusPlaced:  {domain.StatusShipped, domain.StatusCancelled},
		domain.StatusShipped: {domain.StatusDelivered},
	}
	for i := range 150 {
		// Three days, and many orders in the same second: ties by id.
		at := day.AddDate(0, 0, i%3-1).Add(time.Duration(rng.IntN(40)) * time.Second)
		o := newOrder(t, fmt.Sprintf("u%d", i%7), fmt.Sprintf("o-%03d", i), int64(100+i), at)
		o.Version = 1
		model[o.ID] = o
		if err := views.Project(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range model {
			if !yield(id) {
				return
			}
		}
	})
	for range 200 {
		o := model[ids[rng.IntN(len(ids))]]
		moves := next[o.Status]
		if len(moves) == 0 {
			continue
		}
		o.Status, o.Version = moves[rng.IntN(len(moves))], o.Version+1
		model[o.ID] = o
		if err := views.Project(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	for _, status := range []string{domain.StatusPlaced, domain.StatusShipped, domain.StatusDelivered, domain.StatusCancelled} {
		var want []string
		for _, o := range model {
			if o.Status == status && o.CreatedAt.Format(time.DateOnly) == day.Format(time.DateOnly) {
				want = append(want, o.ID)
			}
		}
		slices.SortFunc(want, func(a, b string) int {
			if c := model[b].CreatedAt.Compare(model[a].CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b, a)
		})
		for _, limit := range []int{1, 3, 7, 20, 100} {
			t.Run(fmt.Sprintf("%s/limit=%d", status, limit), func(t *testing.T) {
				var got []string
				cont := ""
				for pages := 0; ; pages++ {
					if pages > len(want)+1 {
						t.Fatalf("more than %d pages for %d orders", pages, len(want))
					}
					items, next, err := views.DayPage(ctx, status, day.Add(15*time.Hour), limit, cont)
					if err != nil {
						t.Fatal(err)
					}
					if len(items) > limit {
						t.Fatalf("page of %d items, limit %d", len(items), limit)
					}
					for _, s := range items {
						got = append(got, s.ID)
						if s.Status != status || s.SourceVersion != model[s.ID].Version {
							t.Errorf("summary of %s is %s v%d, want %s v%d", s.ID, s.Status, s.SourceVersion, status, model[s.ID].Version)
						}
					}
					if next == "" {
						break
					}
					cont = next
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the day's %s orders across pages (-want +got):\n%s", status, diff)
				}
			})
		}
	}
}

// TestOrderSummariesProjectKeepsOneSummaryPerOrder: after every move the
// order's summary is in exactly one of the 4 × Buckets() partitions of
// its day, and projecting the current version again changes nothing.
func TestOrderSummariesProjectKeepsOneSummaryPerOrder(t *testing.T) {
	ctx := t.Context()
	views := repo.NewOrderSummaries(newStore(t))
	o := newOrder(t, "u1", "o-move", 1000, now)
	versions := []domain.Order{o}
	for _, s := range []string{domain.StatusShipped, domain.StatusDelivered} {
		o.Status, o.Version = s, o.Version+1
		versions = append(versions, o)
	}
	for _, v := range append(versions, versions[2], versions[2]) {
		if err := views.Project(ctx, v); err != nil {
			t.Fatal(err)
		}
		var holders []string
		for _, s := range []string{domain.StatusPlaced, domain.StatusShipped, domain.StatusDelivered, domain.StatusCancelled} {
			for _, key := range domain.StatusDayKeys(s, now, views.Buckets()) {
				if _, err := views.Get(ctx, key, o.ID); err == nil {
					holders = append(holders, key)
				} else if !domain.IsCode(err, domain.ENOTFOUND) {
					t.Fatal(err)
				}
			}
		}
		if want := []string{views.Key(v.Status, v)}; !slices.Equal(holders, want) {
			t.Errorf("after projecting v%d (%s): held by %v, want %v", v.Version, v.Status, holders, want)
		}
	}
}

func TestOrderSummariesDayPageRefusesAForeignContinuation(t *testing.T) {
	ctx := t.Context()
	views := repo.NewOrderSummaries(newStore(t))
	for i := range 3 {
		if err := views.Project(ctx, newOrder(t, "u1", fmt.Sprintf("o%d", i), 100, now)); err != nil {
			t.Fatal(err)
		}
	}
	_, next, err := views.DayPage(ctx, domain.StatusPlaced, now, 1, "")
	if err != nil || next == "" {
		t.Fatalf("first page: next %q, %v; want a continuation", next, err)
	}
	if len(next) > domain.MaxStatusBuckets*4096 {
		t.Errorf("continuation of %d bytes, more than the API accepts", len(next))
	}
	for name, cont := range map[string]string{
		"another day":   next,
		"not base64":    "%%%",
		"not a cursor":  "bm90IGpzb24",
		"wrong buckets": "eyJrIjoicGxhY2VkOjIwMjYtMTEtMjkiLCJiIjpbXX0",
		"negative skip": "eyJrIjoicGxhY2VkOjIwMjYtMTEtMjkiLCJiIjpbeyJzIjotMX1dfQ",
	} {
		day := now
		if name == "another day" {
			day = now.AddDate(0, 0, 1)
		}
		_, _, err := views.DayPage(ctx, domain.StatusPlaced, day, 1, cont)
		wantCode(t, name, err, domain.EINVALID)
	}
}

// TestDayPageMissesNothingTheAdminShips: the admin pages through the
// day's placed orders and ships each order of a page before asking for
// the next, so the summaries a page showed leave the placed partitions
// (Project, as the orders feed does after the PATCH). Every order that
// was placed when the walk began must still be shown once: a bucket's
// position counts from what the client saw, not from an index into a
// store page that the shipped orders have since left.
func TestDayPageMissesNothingTheAdminShips(t *testing.T) {
	ctx := t.Context()
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for _, limit := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			views := repo.NewOrderSummaries(newStore(t))
			placed := map[string]domain.Order{}
			for i := range 60 {
				o := newOrder(t, fmt.Sprintf("u%d", i%7), fmt.Sprintf("o-%03d", i), int64(100+i), day.Add(time.Duration(i)*time.Minute))
				o.Version = 1
				placed[o.ID] = o
				if err := views.Project(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			shown := map[string]int{}
			cont := ""
			for pages := 0; ; pages++ {
				if pages > len(placed) {
					t.Fatalf("more than %d pages for %d orders", pages, len(placed))
				}
				items, next, err := views.DayPage(ctx, domain.StatusPlaced, day, limit, cont)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range items {
					shown[s.ID]++
					o := placed[s.ID]
					o.Status, o.Version = domain.StatusShipped, o.Version+1
					if err := views.Project(ctx, o); err != nil {
						t.Fatal(err)
					}
				}
				if next == "" {
					break
				}
				cont = next
			}
			var missed, twice []string
			for id := range placed {
				switch shown[id] {
				case 0:
					missed = append(missed, id)
				case 1:
				default:
					twice = append(twice, id)
				}
			}
			if len(missed) > 0 || len(twice) > 0 {
				slices.Sort(missed)
				slices.Sort(twice)
				t.Errorf("of %d placed orders shipped page by page, never shown: %v; shown twice: %v", len(placed), missed, twice)
			}
		})
	}
}
