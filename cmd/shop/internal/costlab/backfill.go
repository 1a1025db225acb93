package costlab

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations/backfill"
	"github.com/reference-shop/shop/store"
)

// backfillDocs is how many version-1 products (each with its stock, its
// summary, its search entry, a review, an order and the order's summary)
// the backfill measure writes into the scratch store.
const backfillDocs = 200

// backfillCost is what `shop migrate --backfill` costs: per container the
// documents it read and upgraded and their charges, and per 1,000
// documents. The read side is paid for every document of a container
// (the lab's own, current ones too: the backfill cannot tell a version
// before reading it); the write side only for the documents upgraded.
type backfillCost struct {
	Containers []backfillRow `json:"containers"`
	Total      backfillRow   `json:"total"`
}

type backfillRow struct {
	Container string  `json:"container"`
	Read      int     `json:"read"`
	Upgraded  int     `json:"upgraded"`
	Expiring  int     `json:"leftToExpire"`
	RURead    float64 `json:"ruRead"`
	RUWritten float64 `json:"ruWritten"`
	// ReadPer1000 is RURead per 1,000 documents read; WrittenPer1000
	// RUWritten per 1,000 documents upgraded.
	ReadPer1000    float64 `json:"ruReadPer1000"`
	WrittenPer1000 float64 `json:"ruWrittenPer1000"`
}

func rowOf(name string, c backfill.Counts) backfillRow {
	r := backfillRow{Container: name, Read: c.Read, Upgraded: c.Upgraded, Expiring: c.Expiring, RURead: c.RURead, RUWritten: c.RUWritten}
	if c.Read > 0 {
		r.ReadPer1000 = c.RURead / float64(c.Read) * 1000
	}
	if c.Upgraded > 0 {
		r.WrittenPer1000 = c.RUWritten / float64(c.Upgraded) * 1000
	}
	return r
}

// measureBackfill writes n version-1 products and what derives from them
// into s (ids "bf-…", beside whatever s holds), runs the backfill
// unpaced (the lab measures charges, not time) and reports its charges.
func measureBackfill(ctx context.Context, s store.Store, n int) (backfillCost, error) {
	if err := writeV1(ctx, s, n); err != nil {
		return backfillCost{}, err
	}
	rep, err := backfill.Run(ctx, s, backfill.Options{RUPerSecond: 1e9, PageSize: backfill.DefaultPageSize})
	if err != nil {
		return backfillCost{}, err
	}
	var out backfillCost
	for _, name := range backfill.Containers {
		out.Containers = append(out.Containers, rowOf(name, rep.Containers[name]))
	}
	out.Total = rowOf("all", rep.Total)
	return out, nil
}

// writeV1 writes n version-1 products, their stock, summaries, search
// entries, a review each, and an order with its summary each: documents
// as the shop wrote them before variants (schemaVersion 1, no variant
// field).
func writeV1(ctx context.Context, s store.Store, n int) error {
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("bf-%04d", i)
		user := fmt.Sprintf("bf-user-%04d", i)
		p := domain.Product{Meta: domain.Meta{ID: id, Type: domain.TypeProduct}, Name: "Backfill tea " + id, Description: "A tea of the old schema.",
			CategoryID: "bf-tea", CategoryName: "Backfill tea", PriceCents: 500 + int64(i), Currency: "USD", Version: 2, PriceVersion: 1}
		p.Availability.Status = domain.InStock
		o := domain.Order{Meta: domain.Meta{ID: "bf-o-" + id, Type: domain.TypeOrder}, UserID: user, Status: domain.StatusPlaced, TotalCents: 1000, CreatedAt: now,
			Items: []domain.OrderLine{{ProductID: id, Name: p.Name, UnitPriceCents: 500, Quantity: 2, LineTotalCents: 1000}}}
		sum := domain.SummaryOf(o, 1)
		docs := []struct {
			container, pk string
			doc           any
		}{
			{store.ProductsContainer, id, p},
			{store.InventoryContainer, id, domain.Stock{Meta: domain.Meta{ID: domain.StockIDOf(""), Type: domain.TypeStock}, ProductID: id, Available: 10, Version: 1, LastUpdated: now}},
			{store.ProductsByCategoryContainer, p.CategoryID, domain.SummaryOfProduct(p)},
			{store.ProductsByTermContainer, "backfill", domain.EntryOfProduct(p, "backfill", []string{"backfill", "tea"})},
			{store.ReviewsContainer, id, domain.Review{Meta: domain.Meta{ID: "bf-r-" + id, Type: domain.TypeReview}, ProductID: id, UserID: user, Rating: 4, Title: "Good", Body: "Still good.", CreatedAt: now}},
			{store.OrdersContainer, user, o},
			{store.OrdersByStatusContainer, sum.StatusDay, sum},
		}
		for _, d := range docs {
			raw, err := backfill.VersionOne(d.doc)
			if err != nil {
				return err
			}
			if _, err := s.Container(d.container).Upsert(ctx, d.pk, raw, nil); err != nil {
				return fmt.Errorf("version-1 %s %s: %w", d.container, id, err)
			}
		}
	}
	return nil
}

// backfillPart is the docs section of the backfill's cost alone, with the
// command that wrote it.
const backfillPart = "cost backfill"

func writeBackfillPart(out io.Writer, r costReport) {
	fmt.Fprintf(out, "Written by `%s` (the backfill of `shop migrate --backfill` over %d version-1 products, each with its stock, summary, search entry, a review, an order and its summary, beside the lab's current documents):\n\n", r.Command, backfillDocs)
	writeBackfillMarkdown(out, r.Backfill)
}

func writeBackfillMarkdown(out io.Writer, b backfillCost) {
	fmt.Fprintln(out, "| container | read | upgraded | left to expire | RU read | RU written | RU read per 1,000 read | RU written per 1,000 upgraded |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range append(b.Containers, b.Total) {
		name := "`" + r.Container + "`"
		if r.Container == "all" {
			name = "**all**"
		}
		fmt.Fprintf(out, "| %s | %d | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", name, r.Read, r.Upgraded, r.Expiring, r.RURead, r.RUWritten, r.ReadPer1000, r.WrittenPer1000)
	}
}
