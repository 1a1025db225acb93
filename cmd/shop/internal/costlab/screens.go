package costlab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// Page sizes of the screens the lab renders.
const (
	productPageReviews = 5  // the product page shows the 5 newest reviews
	orderHistoryPage   = 10 // the order history page of 10
	categoryPageSize   = 20 // the API's default page size
)

// design is one way of rendering a screen; render draws its i-th instance
// (the lab walks over products, users and categories so that no single
// document stands for all).
type design struct {
	name   string
	reads  string
	render func(ctx context.Context, i int) error
}

// screen is one screen rendered by both designs.
type screen struct {
	name                     string
	denormalized, normalized design
}

// designResult is what one design of one screen cost, per render.
type designResult struct {
	Design string `json:"design"`
	Reads  string `json:"reads"`
	// StoreOps and RequestUnits are means over the repetitions.
	StoreOps     float64 `json:"storeOps"`
	RequestUnits float64 `json:"requestUnits"`
	// MedianMicros is the median wall time of one render, store calls and
	// decoding included.
	MedianMicros float64 `json:"medianLatencyMicros"`
}

// screenResult puts the two designs of a screen side by side.
type screenResult struct {
	Screen       string       `json:"screen"`
	Denormalized designResult `json:"denormalized"`
	Normalized   designResult `json:"normalized"`
	// Ratio is normalized RU over denormalized RU: how many times cheaper
	// the shop's design is.
	Ratio float64 `json:"ratio"`
}

// labScreens returns the four screens of the issue over the metered store
// ms (every call counts on the Meter in its context).
func labScreens(ms store.Store, d *labData) []screen {
	repos := repo.New(ms, 0)
	normProducts := ms.Container(normProductsContainer)
	normCategories := ms.Container(normCategoriesContainer)
	normCarts := ms.Container(normCartsContainer)
	orders := ms.Container(store.OrdersContainer)
	products := ms.Container(store.ProductsContainer)
	product := func(i int) string { return d.products[i%len(d.products)].ID }
	user := func(i int) string { return d.users[i%len(d.users)] }
	category := func(i int) string { return d.categories[i%len(d.categories)] }

	return []screen{{
		name: "product page",
		denormalized: design{"denormalized", "1 point read (reviews and stats embedded)", func(ctx context.Context, i int) error {
			// Point read, reviews embedded (model-embed-related).
			_, err := repos.Products.Get(ctx, product(i))
			return err
		}},
		normalized: design{"normalized", "product read + reviews query + category read", func(ctx context.Context, i int) error {
			p, err := repo.ReadDoc[normProduct](ctx, normProducts, product(i), product(i))
			if err != nil {
				return err
			}
			if _, _, err := repos.Reviews.Page(ctx, p.ID, productPageReviews, ""); err != nil {
				return err
			}
			_, err = repo.ReadDoc[normCategory](ctx, normCategories, p.CategoryID, p.CategoryID)
			return err
		}},
	}, {
		name: "cart (10 lines)",
		denormalized: design{"denormalized", "1 point read (lines carry name and price)", func(ctx context.Context, i int) error {
			c, err := repos.Carts.Get(ctx, user(i))
			if err == nil && len(c.Items) != cartLines {
				err = fmt.Errorf("cart of %s has %d lines, want %d", c.UserID, len(c.Items), cartLines)
			}
			return err
		}},
		normalized: design{"normalized", "cart read + 1 product read per line (N+1)", func(ctx context.Context, i int) error {
			c, err := repo.ReadDoc[normCart](ctx, normCarts, user(i), user(i))
			if err != nil {
				return err
			}
			lines := make([]domain.CartLine, 0, len(c.Items))
			for _, l := range c.Items {
				p, err := repo.ReadDoc[normProduct](ctx, normProducts, l.ProductID, l.ProductID)
				if err != nil {
					return err
				}
				lines = append(lines, domain.CartLine{ProductID: p.ID, Name: p.Name, UnitPriceCents: p.PriceCents, Quantity: l.Quantity})
			}
			if len(lines) != cartLines {
				return fmt.Errorf("cart of %s has %d lines, want %d", c.UserID, len(lines), cartLines)
			}
			return nil
		}},
	}, {
		name: "order history (10)",
		denormalized: design{"denormalized", "1 single-partition query, projected", func(ctx context.Context, i int) error {
			page, err := repos.Orders.Page(ctx, user(i), orderHistoryPage, "")
			if err != nil {
				return err
			}
			_, err = page.Decode()
			return err
		}},
		normalized: design{"normalized", "ids query + 1 order read per row", func(ctx context.Context, i int) error {
			page, err := orders.Query(ctx, store.Query{
				PartitionKey: user(i),
				Filters:      []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}},
				OrderBy:      "createdAt",
				Desc:         true,
				Limit:        orderHistoryPage,
				Select:       []string{"id"},
			})
			if err != nil {
				return err
			}
			for _, raw := range page.Items {
				ref, err := repo.Decode[struct {
					ID string `json:"id"`
				}](raw)
				if err != nil {
					return err
				}
				if _, err := repos.Orders.Get(ctx, user(i), ref.ID); err != nil {
					return err
				}
			}
			return nil
		}},
	}, {
		name: "category page (20)",
		denormalized: design{"denormalized", "1 single-partition query on productsByCategory", func(ctx context.Context, i int) error {
			page, err := repos.ProductSummaries.Page(ctx, category(i), repo.SortByName, nil, categoryPageSize, "")
			if err != nil {
				return err
			}
			_, err = page.Decode()
			return err
		}},
		normalized: design{"normalized", "unordered cross-partition query, all pages (1 request per physical partition each), sorted by name in the client", func(ctx context.Context, i int) error {
			_, err := categoryPageAcrossPartitions(ctx, products, category(i))
			return err
		}},
	}}
}

// categoryRow is what the category page sorts a product by.
type categoryRow struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// categoryPageAcrossPartitions renders the category page from the products
// container, which is partitioned by product id: what a client of the Go SDK
// must do, as the gateway refuses a cross-partition ORDER BY (the SDK has no
// query plan). It fans out unordered, reads every page of the category
// (query-avoid-cross-partition: each page pays every physical partition),
// then sorts by name, ties by id as the port does, and keeps one page.
func categoryPageAcrossPartitions(ctx context.Context, products store.Container, categoryID string) ([]categoryRow, error) {
	q := store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeProduct},
			{Path: "categoryId", Op: store.OpEqual, Value: categoryID},
		},
		Limit:  store.MaxQueryPageSize,
		Select: []string{"id", "categoryId", "name", "priceCents", "currency", "imageUrl", "reviewStats"},
	}
	var rows []categoryRow
	for {
		page, err := products.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		// The SDK sends one request per physical partition: count each
		// as a store operation (their RU is in the page's charge).
		for range page.PartitionsTouched - 1 {
			store.MeterFrom(ctx).Add(0, 0)
		}
		for _, raw := range page.Items {
			r, err := repo.Decode[categoryRow](raw)
			if err != nil {
				return nil, domain.Errorf(domain.EINTERNAL, "decode product of %s: %v", categoryID, err)
			}
			rows = append(rows, r)
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("category %s: no products", categoryID)
	}
	slices.SortFunc(rows, func(a, b categoryRow) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return rows[:min(len(rows), categoryPageSize)], nil
}

// sample is what one render cost.
type sample struct {
	ops   int
	ru    float64
	nanos int64
}

// once renders one instance with a fresh Meter and returns what it cost.
func once(ctx context.Context, render func(context.Context, int) error, i int) (sample, error) {
	mctx, m := store.WithMeter(ctx)
	start := time.Now()
	err := render(mctx, i)
	elapsed := time.Since(start)
	ops, ru, _ := m.Totals()
	return sample{ops: ops, ru: ru, nanos: elapsed.Nanoseconds()}, err
}

// measureScreen renders the screen reps times in each design, alternating
// the two so that both see the same caches and the same machine load, after
// a short warm-up that is not counted.
func measureScreen(ctx context.Context, sc screen, reps int) (screenResult, error) {
	warm := min(reps, 10)
	for i := range warm {
		for _, d := range []design{sc.denormalized, sc.normalized} {
			if _, err := once(ctx, d.render, i); err != nil {
				return screenResult{}, fmt.Errorf("%s, %s: %w", sc.name, d.name, err)
			}
		}
	}
	var den, norm []sample
	for i := range reps {
		for _, d := range []struct {
			design
			into *[]sample
		}{{sc.denormalized, &den}, {sc.normalized, &norm}} {
			s, err := once(ctx, d.render, i)
			if err != nil {
				return screenResult{}, fmt.Errorf("%s, %s: %w", sc.name, d.name, err)
			}
			*d.into = append(*d.into, s)
		}
	}
	r := screenResult{
		Screen:       sc.name,
		Denormalized: summarize(sc.denormalized, den),
		Normalized:   summarize(sc.normalized, norm),
	}
	if r.Denormalized.RequestUnits > 0 {
		r.Ratio = report.Round2(r.Normalized.RequestUnits / r.Denormalized.RequestUnits)
	}
	return r, nil
}

// summarize reduces the samples of one design: mean operations and RU,
// median latency.
func summarize(d design, samples []sample) designResult {
	r := designResult{Design: d.name, Reads: d.reads}
	if len(samples) == 0 {
		return r
	}
	nanos := make([]int64, len(samples))
	for i, s := range samples {
		r.StoreOps += float64(s.ops)
		r.RequestUnits += s.ru
		nanos[i] = s.nanos
	}
	n := float64(len(samples))
	r.StoreOps = report.Round2(r.StoreOps / n)
	r.RequestUnits = report.Round2(r.RequestUnits / n)
	r.MedianMicros = report.Round2(float64(median(nanos)) / 1e3)
	return r
}

// median returns the middle value (the mean of the two middle ones for an
// even count).
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
