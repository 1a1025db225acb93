package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store/repo"
)

// placeOrder fills the user's cart with quantity x book-1 and checks out.
func placeOrder(s *shop, tok, key string, quantity int) orderBody {
	s.t.Helper()
	s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: tok, body: map[string]int{"quantity": quantity}}).want(200)
	return decodeBody[orderBody](s.t, checkout(s, tok, key, address).want(201))
}

func TestOrderLifecycle(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice, admin := token(t, "alice", false), token(t, "boss", true)
	o1 := placeOrder(s, alice, "k1", 1)
	o2 := placeOrder(s, alice, "k2", 2)
	o3 := placeOrder(s, alice, "k3", 3)

	t.Run("HistoryNewestFirst", func(t *testing.T) {
		got := decodeBody[struct{ Items []struct{ ID string } }](t, s.do(req{method: "GET", path: "/v1/orders", token: alice}).want(200))
		if len(got.Items) != 3 {
			t.Fatalf("orders = %+v, want 3", got.Items)
		}
		seen := map[string]bool{}
		for _, it := range got.Items {
			seen[it.ID] = true
		}
		if !seen[o1.ID] || !seen[o2.ID] || !seen[o3.ID] {
			t.Errorf("orders = %+v", got.Items)
		}
	})
	t.Run("OwnerCancelsPlaced", func(t *testing.T) {
		r := s.do(req{method: "POST", path: "/v1/orders/" + o2.ID + "/cancel", token: alice}).want(200)
		if got := decodeBody[orderBody](t, r); got.Status != domain.StatusCancelled {
			t.Errorf("status = %s, want cancelled", got.Status)
		}
	})
	t.Run("CancelTwiceIs409", func(t *testing.T) {
		s.do(req{method: "POST", path: "/v1/orders/" + o2.ID + "/cancel", token: alice}).want(409)
	})
	t.Run("CancelByAnotherUserIs404", func(t *testing.T) {
		s.do(req{method: "POST", path: "/v1/orders/" + o1.ID + "/cancel", token: token(t, "mallory", false)}).want(404)
	})
	t.Run("AdminShipsWithIfMatch", func(t *testing.T) {
		etag := s.do(req{method: "GET", path: "/v1/orders/" + o3.ID, token: alice}).want(200).Header().Get("ETag")
		path := "/v1/admin/orders/alice/" + o3.ID
		r := s.do(req{method: "PATCH", path: path, token: admin, body: map[string]string{"status": "shipped"},
			header: map[string]string{"If-Match": etag}}).want(200)
		if got := decodeBody[orderBody](t, r); got.Status != domain.StatusShipped {
			t.Errorf("status = %s", got.Status)
		}
		s.do(req{method: "PATCH", path: path, token: admin, body: map[string]string{"status": "delivered"},
			header: map[string]string{"If-Match": etag}}).want(412)
		s.do(req{method: "PATCH", path: path, token: admin, body: map[string]string{"status": "delivered"}}).want(200)
	})
	t.Run("CancelAfterShippingIs409", func(t *testing.T) {
		r := s.do(req{method: "POST", path: "/v1/orders/" + o3.ID + "/cancel", token: alice}).want(409)
		if p := decodeBody[problemBody](t, r); p.Detail != fmt.Sprintf("order %s is delivered, which is final: it can no longer be cancelled", o3.ID) {
			t.Errorf("detail = %q, want the final status named", p.Detail)
		}
	})
	t.Run("AdminBadTransitions", func(t *testing.T) {
		s.do(req{method: "PATCH", path: "/v1/admin/orders/alice/" + o1.ID, token: admin, body: map[string]string{"status": "delivered"}}).want(409)
		s.do(req{method: "PATCH", path: "/v1/admin/orders/alice/" + o1.ID, token: admin, body: map[string]string{"status": "placed"}}).want(409)
		s.do(req{method: "PATCH", path: "/v1/admin/orders/bob/" + o1.ID, token: admin, body: map[string]string{"status": "shipped"}}).want(404)
	})
	t.Run("SummaryEqualsNonCancelledOrders", func(t *testing.T) {
		sum := decodeBody[struct{ TotalOrders, TotalSpentCents, AverageOrderCents int64 }](t,
			s.do(req{method: "GET", path: "/v1/me/summary", token: alice}).want(200))
		spent := o1.TotalCents + o3.TotalCents
		if sum.TotalOrders != 2 || sum.TotalSpentCents != spent || sum.AverageOrderCents != (spent+1)/2 {
			t.Errorf("summary = %+v, want 2 orders, %d spent", sum, spent)
		}
	})
}

func TestAdminOrderViews(t *testing.T) {
	s := newShop(t)
	admin := token(t, "boss", true)
	ctx := context.Background()
	start := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	// What the orders feed writes: one placed order per day for 10 days,
	// two on the 25th, and a shipped one.
	put := func(id, status string, at time.Time) {
		o := domain.Order{Meta: domain.Meta{ID: id}, UserID: "u-" + id, Status: status, CreatedAt: at, TotalCents: 100, ItemCount: 1, Version: 1}
		if _, err := s.repos.OrderSummaries.Put(ctx, domain.SummaryOf(o, s.repos.OrderSummaries.Buckets())); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		put(fmt.Sprintf("o-%02d", i), domain.StatusPlaced, start.AddDate(0, 0, i))
	}
	put("o-late", domain.StatusPlaced, start.AddDate(0, 0, 5).Add(time.Hour))
	put("o-ship", domain.StatusShipped, start.AddDate(0, 0, 5))

	type list struct {
		Items []struct {
			ID, UserID, Status string
		}
		Continuation *string
	}
	ids := func(l list) []string {
		var out []string
		for _, it := range l.Items {
			out = append(out, it.ID)
		}
		return out
	}

	t.Run("OneDayReadsEveryBucketOnce", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/admin/orders?status=placed&day=2026-11-25", token: admin}).want(200)
		if got := fmt.Sprint(ids(decodeBody[list](t, r))); got != "[o-late o-05]" {
			t.Errorf("orders = %s, want [o-late o-05]", got)
		}
		if want := fmt.Sprint(s.repos.OrderSummaries.Buckets()); r.ops() != want {
			t.Errorf("X-Store-Operations = %s, want %s (one query per bucket)", r.ops(), want)
		}
	})
	t.Run("OneDayPages", func(t *testing.T) {
		first := decodeBody[list](t, s.do(req{method: "GET", path: "/v1/admin/orders?status=placed&day=2026-11-25&limit=1", token: admin}).want(200))
		if first.Continuation == nil || len(first.Items) != 1 {
			t.Fatalf("first page = %+v", first)
		}
		next := decodeBody[list](t, s.do(req{method: "GET", path: "/v1/admin/orders?status=placed&day=2026-11-25&limit=1&continuation=" + *first.Continuation, token: admin}).want(200))
		if fmt.Sprint(ids(next)) != "[o-05]" {
			t.Errorf("second page = %v", ids(next))
		}
	})
	t.Run("OtherStatus", func(t *testing.T) {
		got := decodeBody[list](t, s.do(req{method: "GET", path: "/v1/admin/orders?status=shipped&day=2026-11-25", token: admin}).want(200))
		if fmt.Sprint(ids(got)) != "[o-ship]" {
			t.Errorf("shipped = %v", ids(got))
		}
	})
	t.Run("RangeMergesNewestFirstAndCountsEveryPartition", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/admin/orders?status=placed&from=2026-11-23&to=2026-11-26", token: admin}).want(200)
		if got := fmt.Sprint(ids(decodeBody[list](t, r))); got != "[o-06 o-late o-05 o-04 o-03]" {
			t.Errorf("orders = %s", got)
		}
		if want := fmt.Sprint(4 * s.repos.OrderSummaries.Buckets()); r.ops() != want {
			t.Errorf("X-Store-Operations = %s, want %s (one per bucket of each day)", r.ops(), want)
		}
	})
	t.Run("RangeHonorsLimit", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/admin/orders?from=2026-11-20&to=2026-11-29&limit=3", token: admin}).want(200)
		if got := fmt.Sprint(ids(decodeBody[list](t, r))); got != "[o-09 o-08 o-07]" {
			t.Errorf("orders = %s", got)
		}
	})
	for _, tc := range []struct{ name, query string }{
		{"UnknownStatus", "status=lost&day=2026-11-25"},
		{"BadDay", "day=25.11.2026"},
		{"FromAfterTo", "from=2026-11-26&to=2026-11-25"},
		{"Over31Days", "from=2026-10-01&to=2026-11-01"},
		{"FromWithoutTo", "from=2026-11-01"},
		{"DayAndRange", "day=2026-11-01&from=2026-11-01&to=2026-11-02"},
		{"ForeignContinuation", "day=2026-11-25&continuation=bm90IGEgY3Vyc29y"},
	} {
		t.Run(tc.name+"Is400", func(t *testing.T) {
			s.do(req{method: "GET", path: "/v1/admin/orders?" + tc.query, token: admin}).want(400)
		})
	}
	t.Run("CenturiesSaySoInTheirDays", func(t *testing.T) {
		// Past 292 years a time.Duration saturates: the span is counted
		// in days, not hours.
		r := s.do(req{method: "GET", path: "/v1/admin/orders?from=0001-01-01&to=9999-12-31", token: admin}).want(400)
		p := decodeBody[struct{ Detail string }](t, r)
		if want := "from..to spans 3652059 days; at most 31 are allowed"; p.Detail != want {
			t.Errorf("detail %q, want %q", p.Detail, want)
		}
	})
	t.Run("ThirtyOneDaysIsAllowed", func(t *testing.T) {
		r := s.do(req{method: "GET", path: "/v1/admin/orders?from=2026-11-01&to=2026-12-01", token: admin}).want(200)
		if want := fmt.Sprint(31 * s.repos.OrderSummaries.Buckets()); r.ops() != want {
			t.Errorf("X-Store-Operations = %s, want %s", r.ops(), want)
		}
	})
}

type feedStatus struct {
	v   []changefeed.ProcessorStatus
	err error
}

func (f feedStatus) FeedStatus(context.Context) ([]changefeed.ProcessorStatus, error) {
	return f.v, f.err
}

func (f feedStatus) FanoutStats() repo.FanoutStats { return repo.FanoutStats{} }

type panicking struct{}

func (panicking) FeedStatus(context.Context) ([]changefeed.ProcessorStatus, error) {
	panic("nil map in the lease table")
}

func (panicking) FanoutStats() repo.FanoutStats { return repo.FanoutStats{} }

func TestAdminFeeds(t *testing.T) {
	admin := token(t, "boss", true)
	t.Run("NotRunningIs503", func(t *testing.T) {
		r := newShop(t).do(req{method: "GET", path: "/v1/admin/feeds", token: admin}).want(503)
		if r.Header().Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	})
	t.Run("Reports", func(t *testing.T) {
		now := time.Now()
		written, checkpoint := now.Add(-8*time.Second), now.Add(-2*time.Second)
		v := []changefeed.ProcessorStatus{
			changefeed.Summarize("products", []changefeed.LeaseStatus{
				{Lease: "products.00-3F", Owner: "shop-1", LagEstimate: 3, LastCheckpoint: &checkpoint, OldestPending: &written},
				{Lease: "products.3F-7F", Owner: "shop-1", LagEstimate: -1},
			}, now),
			changefeed.Summarize("reviews", []changefeed.LeaseStatus{{Lease: "reviews.00-FF", Owner: "shop-1"}}, now),
		}
		s := newShop(t, func(o *options) { o.feeds = feedStatus{v: v} })
		got := decodeBody[struct {
			Processors []struct {
				Processor            string   `json:"processor"`
				CaughtUp             bool     `json:"caughtUp"`
				LagEstimate          int      `json:"lagEstimate"`
				UnknownLeases        int      `json:"unknownLeases"`
				CheckpointAgeSeconds *float64 `json:"checkpointAgeSeconds"`
				OldestPendingSeconds *float64 `json:"oldestPendingSeconds"`
				Leases               []struct {
					LagEstimate int `json:"lagEstimate"`
				} `json:"leases"`
			} `json:"processors"`
		}](t, s.do(req{method: "GET", path: "/v1/admin/feeds", token: admin}).want(200))
		if len(got.Processors) != 2 || len(got.Processors[0].Leases) != 2 || got.Processors[0].Leases[0].LagEstimate != 3 {
			t.Fatalf("status = %+v", got)
		}
		products, reviews := got.Processors[0], got.Processors[1]
		if products.CaughtUp || products.LagEstimate != 3 || products.UnknownLeases != 1 ||
			products.CheckpointAgeSeconds == nil || *products.CheckpointAgeSeconds != 2 ||
			products.OldestPendingSeconds == nil || *products.OldestPendingSeconds != 8 {
			t.Errorf("products = %+v, want behind by 3 and one lease unknown, checkpointed 2 s ago, its oldest change pending written 8 s ago", products)
		}
		if !reviews.CaughtUp || reviews.LagEstimate != 0 || reviews.OldestPendingSeconds == nil || *reviews.OldestPendingSeconds != 0 {
			t.Errorf("reviews = %+v, want caught up, nothing pending", reviews)
		}
	})
	t.Run("APanicIsA500Problem", func(t *testing.T) {
		s := newShop(t, func(o *options) { o.feeds = panicking{} })
		p := decodeBody[problemBody](t, s.do(req{method: "GET", path: "/v1/admin/feeds", token: admin}).want(500))
		if p.Detail != "internal error" {
			t.Errorf("detail = %q", p.Detail)
		}
	})
	t.Run("InternalErrorsDoNotLeak", func(t *testing.T) {
		s := newShop(t, func(o *options) { o.feeds = feedStatus{err: errors.New("lease table on fire at 10.0.0.7")} })
		p := decodeBody[problemBody](t, s.do(req{method: "GET", path: "/v1/admin/feeds", token: admin}).want(500))
		if p.Detail != "internal error" {
			t.Errorf("detail = %q", p.Detail)
		}
	})
}

// TestOrderDetailShowsOnlyOrders: the orders partition also holds the
// user's customerSummary; its id as an order id is a 404, on the first
// request and on every one after (the refusal is kept with the render).
func TestOrderDetailShowsOnlyOrders(t *testing.T) {
	s := newShop(t)
	s.fixture()
	alice := token(t, "alice", false)
	placeOrder(s, alice, "k1", 1)
	for range 3 {
		s.do(req{method: "GET", path: "/v1/orders/" + domain.CustomerSummaryID, token: alice}).want(404)
	}
}
