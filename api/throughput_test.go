package api_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/reference-shop/shop/store/embedded"
)

// throughputBody is the part of GET /v1/admin/throughput tests look at.
type throughputBody struct {
	Containers []struct {
		Container   string  `json:"container"`
		Provisioned float64 `json:"provisioned"`
		Throttled   int64   `json:"throttled"`
		Partitions  []struct {
			Partition   string  `json:"partition"`
			Provisioned float64 `json:"provisioned"`
			Throttled   int64   `json:"throttled"`
		} `json:"partitions"`
	} `json:"containers"`
}

// TestThrottledCartWrites: with 40 RU/s per container (10 per partition)
// on a store whose clock stands still, so no budget ever refills, one
// user's cart writes at full speed are answered 503 with Retry-After once
// their partitions are spent, never 500; the admin route shows where.
func TestThrottledCartWrites(t *testing.T) {
	frozen := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := newShop(t, func(o *options) {
		o.storeNow = func() time.Time { return frozen }
		o.throughput = true
	})
	s.fixture()
	s.store.(*embedded.Store).SetThroughput(40)
	alice, admin := token(t, "alice", false), token(t, "boss", true)

	status := map[int]int{}
	for i := range 30 {
		r := s.do(req{method: "PUT", path: "/v1/cart/items/book-1", token: alice, body: map[string]int{"quantity": i%5 + 1}})
		status[r.Code]++
		if r.Code == 503 {
			if ra, err := strconv.Atoi(r.Header().Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("503 with Retry-After %q, want whole seconds of at least 1", r.Header().Get("Retry-After"))
			}
		}
	}
	if status[200] == 0 || status[503] == 0 || status[200]+status[503] != 30 {
		t.Errorf("30 cart writes on a spent budget answered %v, want some 200 then 503s, nothing else", status)
	}

	got := decodeBody[throughputBody](t, s.do(req{method: "GET", path: "/v1/admin/throughput", token: admin}).want(200))
	throttled := map[string]int64{}
	for _, c := range got.Containers {
		throttled[c.Container] = c.Throttled
		if c.Provisioned != 40 || len(c.Partitions) != 4 || c.Partitions[0].Provisioned != 10 {
			t.Errorf("%s: %+v, want 40 RU/s over 4 partitions of 10", c.Container, c)
		}
	}
	if n := throttled["carts"] + throttled["products"]; n != int64(status[503]) {
		t.Errorf("throttles reported: carts %d, products %d; want one per 503, %d", throttled["carts"], throttled["products"], status[503])
	}
}

func TestAdminThroughput(t *testing.T) {
	admin := token(t, "boss", true)
	t.Run("NotReportedIs503", func(t *testing.T) {
		newShop(t).do(req{method: "GET", path: "/v1/admin/throughput", token: admin}).want(503)
	})
	t.Run("UnlimitedStillCounts", func(t *testing.T) {
		s := newShop(t, func(o *options) { o.throughput = true })
		s.fixture()
		s.do(req{method: "GET", path: "/v1/products/book-1"}).want(200)
		got := decodeBody[struct {
			Containers []struct {
				Container     string  `json:"container"`
				Provisioned   float64 `json:"provisioned"`
				RequestCharge float64 `json:"requestCharge"`
			} `json:"containers"`
		}](t, s.do(req{method: "GET", path: "/v1/admin/throughput", token: admin}).want(200))
		charged := map[string]string{}
		for _, c := range got.Containers {
			charged[c.Container] = fmt.Sprintf("%v RU of %v RU/s", c.RequestCharge, c.Provisioned)
			if c.Provisioned != 0 {
				t.Errorf("%s: %v RU/s provisioned, want 0 (unlimited)", c.Container, c.Provisioned)
			}
		}
		if got.Containers == nil || charged["products"] == "" || charged["products"] == "0 RU of 0 RU/s" {
			t.Errorf("charges %v, want the products container charged for the fixture and the read", charged)
		}
	})
}
