package domain_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
)

var (
	buyer = domain.Customer{Name: "Ada Lovelace", Email: "ada@example.com"}
	addr  = domain.Address{Name: "Ada Lovelace", Line1: "12 St James's Square", City: "London", PostalCode: "SW1Y 4JH", Country: "GB"}
)

func TestNewOrder(t *testing.T) {
	c := domain.NewCart("u1")
	for _, l := range []struct {
		p domain.Product
		q int
	}{{product("a", 1250), 2}, {product("b", 399), 3}} {
		if err := c.SetQuantity(l.p, "", l.q, now); err != nil {
			t.Fatal(err)
		}
	}
	c.ETag = `"cart-etag"`
	at := now.In(time.FixedZone("PST", -8*3600))

	o, err := domain.NewOrder("o1", c, buyer, addr, "key-1", at)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.Order{
		Meta:     domain.Meta{ID: "o1", Type: domain.TypeOrder, SchemaVersion: domain.SchemaVersion},
		UserID:   "u1",
		Customer: buyer,
		Items: []domain.OrderLine{
			{ProductID: "a", Name: "Name of a", UnitPriceCents: 1250, Quantity: 2, LineTotalCents: 2500},
			{ProductID: "b", Name: "Name of b", UnitPriceCents: 399, Quantity: 3, LineTotalCents: 1197},
		},
		ItemCount:       5,
		SubtotalCents:   3697,
		TotalCents:      3697,
		Status:          domain.StatusPending,
		ShippingAddress: addr,
		CreatedAt:       now,
		LastUpdated:     now,
		IdempotencyKey:  "key-1",
		CartETag:        `"cart-etag"`,
		Version:         1,
	}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := o.CreatedAt.Location(); got != time.UTC {
		t.Errorf("createdAt location = %v, want UTC", got)
	}

	// The lines are a snapshot: a later change to the cart does not reach them.
	c.Items[0].UnitPriceCents = 1
	if got, want := o.Items[0].UnitPriceCents, int64(1250); got != want {
		t.Errorf("order line price after the cart changed = %d, want %d", got, want)
	}
}

func TestNewOrderRefused(t *testing.T) {
	withUnavailable := func(ids ...string) domain.Cart {
		c := cartWith(t, product("alpha", 100), product("beta", 200), product("gamma", 300))
		for _, id := range ids {
			p := product(id, 100)
			p.Version, p.Deleted = 2, true
			c.ApplyProduct(p, now)
		}
		return c
	}
	tests := []struct {
		name      string
		cart      domain.Cart
		wantNamed []string
		wantNot   []string
	}{
		{"empty cart", domain.NewCart("u1"), []string{"empty"}, nil},
		{"one unavailable line", withUnavailable("beta"), []string{"beta"}, []string{"alpha", "gamma"}},
		{"two unavailable lines", withUnavailable("alpha", "gamma"), []string{"alpha", "gamma"}, []string{"beta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := domain.NewOrder("o1", tt.cart, buyer, addr, "k", now)
			if got, want := domain.ErrorCode(err), domain.ECONFLICT; got != want {
				t.Fatalf("code = %q, want %q (err %v)", got, want, err)
			}
			msg := domain.ErrorMessage(err)
			for _, s := range tt.wantNamed {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not name %q", msg, s)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(msg, s) {
					t.Errorf("message %q names available product %q", msg, s)
				}
			}
		})
	}
}

func TestOrderSetStatus(t *testing.T) {
	var statuses []string
	for _, s := range domain.States {
		statuses = append(statuses, s.Name)
	}
	// The moves a person makes; the checkout's own are refused to them.
	allowed := map[[2]string]bool{
		{domain.StatusPlaced, domain.StatusShipped}:    true,
		{domain.StatusPlaced, domain.StatusCancelled}:  true,
		{domain.StatusShipped, domain.StatusDelivered}: true,
		{domain.StatusShipped, domain.StatusCancelled}: true,
	}
	later := now.Add(time.Hour)
	for _, from := range statuses {
		for _, to := range statuses {
			t.Run(from+" to "+to, func(t *testing.T) {
				o := domain.Order{Meta: domain.Meta{ID: "o1"}, Status: from, Version: 4, LastUpdated: now}
				err := o.SetStatus(to, later)
				if allowed[[2]string{from, to}] {
					if err != nil {
						t.Fatalf("SetStatus: %v", err)
					}
					if o.Status != to || o.Version != 5 || !o.LastUpdated.Equal(later) {
						t.Errorf("after SetStatus: status %q version %d lastUpdated %v; want %q 5 %v", o.Status, o.Version, o.LastUpdated, to, later)
					}
					return
				}
				if got, want := domain.ErrorCode(err), domain.ECONFLICT; got != want {
					t.Fatalf("code = %q, want %q", got, want)
				}
				msg := domain.ErrorMessage(err)
				if !strings.Contains(msg, from) || !strings.Contains(msg, to) {
					t.Errorf("message %q does not name both %q and %q", msg, from, to)
				}
				if o.Status != from || o.Version != 4 || !o.LastUpdated.Equal(now) {
					t.Errorf("a refused transition changed the order: %q v%d %v", o.Status, o.Version, o.LastUpdated)
				}
			})
		}
	}
	for _, to := range []string{"", "lost", "Placed", "SHIPPED"} {
		t.Run("unknown status "+to, func(t *testing.T) {
			o := domain.Order{Status: domain.StatusPlaced, Version: 1}
			if got, want := domain.ErrorCode(o.SetStatus(to, later)), domain.EINVALID; got != want {
				t.Errorf("code = %q, want %q", got, want)
			}
			if o.Status != domain.StatusPlaced || o.Version != 1 {
				t.Errorf("an unknown status changed the order: %q v%d", o.Status, o.Version)
			}
		})
	}
}

func TestValidStatus(t *testing.T) {
	tests := []struct {
		status string
		want   bool
	}{
		{"placed", true}, {"shipped", true}, {"delivered", true}, {"cancelled", true},
		{"", false}, {"canceled", false}, {"Placed", false},
	}
	for _, tt := range tests {
		if got := domain.ValidStatus(tt.status); got != tt.want {
			t.Errorf("ValidStatus(%q) = %v, want %v", tt.status, got, tt.want)
		}
	}
}

func TestCustomerSummary(t *testing.T) {
	order := func(id string, cents int64, daysAgo int) domain.Order {
		return domain.Order{Meta: domain.Meta{ID: id}, TotalCents: cents, CreatedAt: now.AddDate(0, 0, -daysAgo)}
	}
	t1, t2 := now.AddDate(0, 0, -1), now.AddDate(0, 0, -2)
	tests := []struct {
		name   string
		add    []domain.Order
		remove []domain.Order
		want   domain.CustomerSummary
	}{
		{"none", nil, nil, domain.CustomerSummary{}},
		{"one", []domain.Order{order("a", 1000, 1)}, nil,
			domain.CustomerSummary{TotalOrders: 1, TotalSpentCents: 1000, AverageOrderCents: 1000, LastOrderAt: &t1}},
		{"average rounds down below half a cent", []domain.Order{order("a", 100, 2), order("b", 100, 1), order("c", 101, 2)}, nil,
			domain.CustomerSummary{TotalOrders: 3, TotalSpentCents: 301, AverageOrderCents: 100, LastOrderAt: &t1}},
		{"average rounds up from half a cent", []domain.Order{order("a", 100, 2), order("b", 101, 1)}, nil,
			domain.CustomerSummary{TotalOrders: 2, TotalSpentCents: 201, AverageOrderCents: 101, LastOrderAt: &t1}},
		{"average rounds up above half a cent", []domain.Order{order("a", 100, 1), order("b", 101, 2), order("c", 101, 2)}, nil,
			domain.CustomerSummary{TotalOrders: 3, TotalSpentCents: 302, AverageOrderCents: 101, LastOrderAt: &t1}},
		{"an older order does not move lastOrderAt back", []domain.Order{order("a", 500, 1), order("b", 700, 2)}, nil,
			domain.CustomerSummary{TotalOrders: 2, TotalSpentCents: 1200, AverageOrderCents: 600, LastOrderAt: &t1}},
		{"cancel one of two", []domain.Order{order("a", 500, 2), order("b", 700, 2)}, []domain.Order{order("b", 700, 2)},
			domain.CustomerSummary{TotalOrders: 1, TotalSpentCents: 500, AverageOrderCents: 500, LastOrderAt: &t2}},
		{"cancel the only one: average 0", []domain.Order{order("a", 500, 2)}, []domain.Order{order("a", 500, 2)},
			domain.CustomerSummary{TotalOrders: 0, TotalSpentCents: 0, AverageOrderCents: 0, LastOrderAt: &t2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := domain.NewCustomerSummary("u1")
			for _, o := range tt.add {
				s.AddOrder(o, now)
			}
			for _, o := range tt.remove {
				s.RemoveOrder(o, now)
			}
			tt.want.Meta = domain.Meta{ID: domain.CustomerSummaryID, Type: domain.TypeCustomerSummary, SchemaVersion: domain.SchemaVersion}
			tt.want.UserID = "u1"
			if len(tt.add)+len(tt.remove) > 0 {
				tt.want.LastUpdated = now
			}
			if diff := cmp.Diff(tt.want, s); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryOf(t *testing.T) {
	created := time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC)
	o := domain.Order{
		Meta: domain.Meta{ID: "o1", Type: domain.TypeOrder, ETag: `"x"`}, UserID: "u1",
		Status: domain.StatusShipped, CreatedAt: created, TotalCents: 4200, ItemCount: 3, Version: 2,
		Items: []domain.OrderLine{{ProductID: "a"}},
	}
	want := domain.OrderSummary{
		Meta:      domain.Meta{ID: "o1", Type: domain.TypeOrderSummary, SchemaVersion: domain.SchemaVersion},
		StatusDay: fmt.Sprintf("shipped:%02d:2026-11-29", domain.StatusBucket("o1", 16)), Status: domain.StatusShipped, UserID: "u1",
		CreatedAt: created, TotalCents: 4200, ItemCount: 3, SourceVersion: 2,
	}
	if diff := cmp.Diff(want, domain.SummaryOf(o, 16)); diff != "" {
		t.Errorf("SummaryOf (-want +got):\n%s", diff)
	}
}

func TestStatusDay(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	newYork := time.FixedZone("EST", -5*3600)
	tests := []struct {
		name   string
		status string
		at     time.Time
		want   string
	}{
		{"utc", domain.StatusPlaced, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), "placed:2026-11-29"},
		{"early morning in Tokyo is the previous UTC day", domain.StatusShipped, time.Date(2026, 11, 30, 8, 0, 0, 0, tokyo), "shipped:2026-11-29"},
		{"late evening in New York is the next UTC day", domain.StatusCancelled, time.Date(2026, 11, 29, 20, 0, 0, 0, newYork), "cancelled:2026-11-30"},
		{"last instant of the day", domain.StatusDelivered, time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC), "delivered:2026-12-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.StatusDay(tt.status, tt.at); got != tt.want {
				t.Errorf("StatusDay(%q, %v) = %q, want %q", tt.status, tt.at, got, tt.want)
			}
		})
	}
}

func TestOrderAndIdempotencyIDs(t *testing.T) {
	at := time.Date(2026, 11, 29, 18, 5, 7, 0, time.FixedZone("CET", 3600))
	if got, want := domain.OrderID(at, "ab12"), "o-20261129T170507-ab12"; got != want {
		t.Errorf("OrderID = %q, want %q", got, want)
	}
	if got, want := domain.IdempotencyID("k-1"), "idem-k-1"; got != want {
		t.Errorf("IdempotencyID = %q, want %q", got, want)
	}
	if err := domain.ValidateID("orderId", domain.OrderID(at, "ab12")); err != nil {
		t.Errorf("an order id is not a valid id: %v", err)
	}
}
