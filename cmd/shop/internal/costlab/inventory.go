package costlab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	payembedded "github.com/reference-shop/shop/domain/payments/embedded"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// partitionRUs is what Cosmos serves one physical partition at most, and
// so one logical partition (which never spans two): 10,000 RU/s.
const partitionRUs = 10_000

// checkoutLines are the cart sizes whose checkout the lab measures.
var checkoutLines = []int{1, 3, 10}

// checkoutCost is one cart size's checkout before and after inventory.
type checkoutCost struct {
	Lines int `json:"lines"`
	// Untracked: the checkout of products without a stock document. The
	// protocol still runs its stock step: one point read per line, which
	// finds no stock document (checkStock: untracked, sold without a
	// limit, nothing to take).
	Untracked designResult `json:"untracked"`
	// WithoutStep is Untracked less the measured reads that found
	// nothing: the same checkout with no stock step at all.
	WithoutStepRU  float64 `json:"withoutReservationStepRU"`
	WithoutStepOps float64 `json:"withoutReservationStepOps"`
	// Tracked: the checkout of products with stock, one read and one
	// take per line.
	Tracked designResult `json:"tracked"`
	// ExtraRU is Tracked − WithoutStep: what inventory adds.
	ExtraRU float64 `json:"extraRU"`
}

// inventoryResult is the inventory section of the report.
type inventoryResult struct {
	Checkouts []checkoutCost `json:"checkouts"`
	// StockRead is the point read of a stock document the checkout makes
	// before it takes anything (checkStock), MissingStockRead the same
	// read of a product without stock; Take is one reservation batch
	// (create the reservation, patch the stock under available >= q);
	// FailedTake the same batch on a product without stock; Release the
	// read of the reservation and its batch (reservation released under a
	// condition, stock +q).
	StockRead        designResult `json:"stockRead"`
	MissingStockRead designResult `json:"missingStockRead"`
	Take             designResult `json:"take"`
	FailedTake       designResult `json:"failedTake"`
	Release          designResult `json:"release"`
	// CeilingPerSecond is partitionRUs / (StockRead + Take): the sales
	// per second one product's stock document can serve.
	PartitionRUs     int     `json:"partitionRUs"`
	CeilingPerSecond float64 `json:"ceilingPerSecond"`
	// CeilingWithRelease counts a release for every take (every sale
	// called off): the floor of the ceiling.
	CeilingWithRelease float64 `json:"ceilingWithRelease"`
	// Refusals is what a checkout refused out of stock costs.
	Refusals []refusalCost `json:"refusals"`
	// Workflow is the checkout before and after payments, and move by
	// move.
	Workflow workflowResult `json:"workflow"`
}

// inventoryLab measures checkouts of 1, 3 and 10 lines on untracked and
// tracked products, and one take and one release, over the metered store
// ms; raw (unmetered) prepares the products and carts.
type inventoryLab struct {
	raw, ms *repo.Set
	// rawInventory counts what the refusals reserved (reservationsOf).
	rawInventory store.Container
	// rawOrders writes the workflow measure's copies (movePatch).
	rawOrders store.Container
	w         *writes.Writes
	// quiet is w with the outbox off (repo.NewWithoutEvents): the same
	// work without its events, for the events' cost (eventCosts).
	quiet     *writes.Writes
	pay       *payembedded.Provider // the checkouts' payments (no Request Unit)
	untracked []domain.Product
	tracked   []domain.Product
	now       time.Time
	users     int
}

func newInventoryLab(ctx context.Context, raw, ms store.Store) (*inventoryLab, error) {
	l := &inventoryLab{raw: repo.New(raw, 0), ms: repo.New(ms, 0), rawInventory: raw.Container(store.InventoryContainer),
		rawOrders: raw.Container(store.OrdersContainer), now: time.Now().UTC()}
	pay, err := payembedded.Open("")
	if err != nil {
		return nil, err
	}
	l.pay = pay
	l.w = writes.New(l.ms, pay, time.Now)
	l.quiet = writes.New(repo.NewWithoutEvents(ms, 0), pay, time.Now)
	rw := writes.New(l.raw, pay, time.Now)
	for i := range 10 {
		for _, tracked := range []bool{false, true} {
			p := domain.Product{Meta: domain.Meta{ID: fmt.Sprintf("inv-u-%02d", i)}, Name: fmt.Sprintf("Untracked %d", i),
				CategoryID: "inventory-lab", CategoryName: "Inventory lab", PriceCents: 1000 + int64(i), Currency: "USD",
				PriceVersion: 1, Version: 1, LastUpdated: l.now}
			var err error
			if tracked {
				// Enough units that no measured checkout runs out.
				p.ID, p.Name = fmt.Sprintf("inv-t-%02d", i), fmt.Sprintf("Tracked %d", i)
				p, err = rw.CreateProduct(ctx, p, domain.MaxStock, nil)
				l.tracked = append(l.tracked, p)
			} else {
				p, err = l.raw.Products.Create(ctx, p)
				l.untracked = append(l.untracked, p)
			}
			if err != nil {
				return nil, fmt.Errorf("inventory lab product %s: %w", p.ID, err)
			}
		}
	}
	return l, nil
}

// checkout fills a new user's cart with the first n of products (one
// unit each, unmetered), then checks it out through the shop's own write
// path on the metered store.
func (l *inventoryLab) checkout(ctx context.Context, products []domain.Product, n int) (sample, error) {
	return l.checkoutBy(ctx, l.w, products, n)
}

// checkoutBy is checkout through w.
func (l *inventoryLab) checkoutBy(ctx context.Context, w *writes.Writes, products []domain.Product, n int) (sample, error) {
	user, err := l.newBuyer(ctx, products[:n])
	if err != nil {
		return sample{}, err
	}
	return once(ctx, func(ctx context.Context, _ int) error {
		_, err := w.Checkout(ctx, labCheckout(user, user+"-key"))
		return err
	}, 0)
}

// newBuyer is a new user whose cart holds one unit of each of products,
// written unmetered.
func (l *inventoryLab) newBuyer(ctx context.Context, products []domain.Product) (string, error) {
	l.users++
	user := fmt.Sprintf("inv-buyer-%05d", l.users)
	_, err := l.raw.Carts.Update(ctx, user, "", func(c *domain.Cart) error {
		for _, p := range products {
			if err := c.SetQuantity(p, "", 1, l.now); err != nil {
				return err
			}
		}
		return nil
	})
	return user, err
}

// labCheckout is the lab buyer's checkout of user's cart with key, paid
// with a card the provider authorizes.
func labCheckout(user, key string) writes.CheckoutRequest {
	return writes.CheckoutRequest{UserID: user,
		Customer: domain.Customer{Name: "Lab Buyer", Email: "lab@example.com"},
		Address:  domain.Address{Name: "Lab Buyer", Line1: "1 Lab St", City: "Lab", PostalCode: "1000", Country: "BE"},
		Key:      key, RequestHash: "lab", PaymentMethod: "pm_card_visa"}
}

// measureInventory runs the inventory lab reps times per figure.
func measureInventory(ctx context.Context, raw, ms store.Store, reps int) (inventoryResult, error) {
	r := inventoryResult{PartitionRUs: partitionRUs}
	l, err := newInventoryLab(ctx, raw, ms)
	if err != nil {
		return r, err
	}
	defer l.pay.Close()
	// One reservation alone: a take (then its release, measured apart) on
	// a tracked product, and the failed batch on an untracked one; the
	// read of the stock before them, of each.
	var reads, missing, takes, fails, releases []sample
	for i := range reps + 1 {
		read, err := once(ctx, func(ctx context.Context, _ int) error {
			_, err := l.ms.Inventory.Stock(ctx, l.tracked[0].ID, "")
			return err
		}, 0)
		if err != nil {
			return r, fmt.Errorf("stock read: %w", err)
		}
		miss, err := once(ctx, func(ctx context.Context, _ int) error {
			if _, err := l.ms.Inventory.Stock(ctx, l.untracked[0].ID, ""); !errors.Is(err, repo.ErrUntracked) {
				return fmt.Errorf("the stock of an untracked product: %v, want ErrUntracked", err)
			}
			return nil
		}, 0)
		if err != nil {
			return r, err
		}
		order := fmt.Sprintf("inv-take-%05d", i)
		res := domain.NewReservation(l.tracked[0].ID, "", order, "inv-taker", 1, time.Now())
		take, err := once(ctx, func(ctx context.Context, _ int) error { return l.ms.Inventory.Reserve(ctx, res, 0) }, 0)
		if err != nil {
			return r, fmt.Errorf("take: %w", err)
		}
		release, err := once(ctx, func(ctx context.Context, _ int) error {
			return l.ms.Inventory.Release(ctx, res.ProductID, "", order, 0, time.Now())
		}, 0)
		if err != nil {
			return r, fmt.Errorf("release: %w", err)
		}
		fail, err := once(ctx, func(ctx context.Context, _ int) error {
			err := l.ms.Inventory.Reserve(ctx, domain.NewReservation(l.untracked[0].ID, "", order, "inv-taker", 1, time.Now()), 0)
			if err == repo.ErrUntracked {
				return nil
			}
			return fmt.Errorf("a take of an untracked product: %v, want ErrUntracked", err)
		}, 0)
		if err != nil {
			return r, err
		}
		if i > 0 { // the first is a warm-up
			takes, releases, fails = append(takes, take), append(releases, release), append(fails, fail)
			reads, missing = append(reads, read), append(missing, miss)
		}
	}
	r.StockRead = summarize(design{name: "stock read", reads: "point read of the product's stock document, before any take: the checkout refuses a line it shows short with nothing written"}, reads)
	r.MissingStockRead = summarize(design{name: "stock read, none", reads: "the same read of a product without a stock document: a 404"}, missing)
	r.Take = summarize(design{name: "take", reads: "one transactional batch in the product's partition: create the reservation, patch the stock (available −q, version +1) under available >= q"}, takes)
	r.FailedTake = summarize(design{name: "failed take", reads: "the same batch on a product without a stock document: it fails on the patch, nothing is written"}, fails)
	r.Release = summarize(design{name: "release", reads: "point read of the reservation, then one batch: patch it to released under state != released, patch the stock +q"}, releases)
	if sale := r.StockRead.RequestUnits + r.Take.RequestUnits; sale > 0 {
		r.CeilingPerSecond = report.Round2(partitionRUs / sale)
		r.CeilingWithRelease = report.Round2(partitionRUs / (sale + r.Release.RequestUnits))
	}

	var events []eventCost
	for _, n := range checkoutLines {
		var untracked, tracked, quiet []sample
		for i := range reps + 1 {
			u, err := l.checkout(ctx, l.untracked, n)
			if err != nil {
				return r, fmt.Errorf("checkout of %d untracked lines: %w", n, err)
			}
			t, err := l.checkout(ctx, l.tracked, n)
			if err != nil {
				return r, fmt.Errorf("checkout of %d tracked lines: %w", n, err)
			}
			q, err := l.checkoutBy(ctx, l.quiet, l.tracked, n)
			if err != nil {
				return r, fmt.Errorf("checkout of %d tracked lines without events: %w", n, err)
			}
			if i > 0 {
				untracked, tracked, quiet = append(untracked, u), append(tracked, t), append(quiet, q)
			}
		}
		events = append(events, newEventCost(fmt.Sprintf("checkout of %d tracked lines", n), checkoutEvents, tracked, quiet))
		c := checkoutCost{Lines: n,
			Untracked: summarize(design{name: "untracked stock"}, untracked),
			Tracked:   summarize(design{name: "tracked stock"}, tracked)}
		c.WithoutStepRU = report.Round2(c.Untracked.RequestUnits - float64(n)*r.MissingStockRead.RequestUnits)
		c.WithoutStepOps = report.Round2(c.Untracked.StoreOps - float64(n)*r.MissingStockRead.StoreOps)
		c.ExtraRU = report.Round2(c.Tracked.RequestUnits - c.WithoutStepRU)
		r.Checkouts = append(r.Checkouts, c)
	}
	if r.Refusals, err = l.measureRefusals(ctx, reps); err != nil {
		return r, fmt.Errorf("refusals: %w", err)
	}
	if r.Workflow, err = l.measureWorkflow(ctx, ms, reps, r.Checkouts); err != nil {
		return r, fmt.Errorf("workflow: %w", err)
	}
	moves, err := l.measureEventMoves(ctx, reps)
	if err != nil {
		return r, fmt.Errorf("events: %w", err)
	}
	r.Workflow.Events = append(events, moves...)
	return r, nil
}
