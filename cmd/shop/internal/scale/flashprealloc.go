package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reference-shop/shop/cmd/shop/internal/report"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
)

// Prealloc compares, on the embedded store's charges, the counter the
// shop keeps (a stock document, split into shards or not) with the other
// design for numbered items: one document per unit, preallocated, each
// sale claiming one free unit by a conditional write.
type Prealloc struct {
	Store string `json:"store"`
	// The counter, per sale: the checkout's read of the stock, the take
	// (one batch: the reservation created, the stock patched under
	// available >= 1), and the commit of the reservation.
	StockRead      float64 `json:"stockReadRU"`
	Take           float64 `json:"takeRU"`
	Commit         float64 `json:"commitRU"`
	CounterPerSale float64 `json:"counterPerSaleRU"`
	// A unit document: its claim (a patch free → held with the order's
	// id, under state = free: the unit is its own reservation), a claim
	// that lost (the unit was taken: the condition fails, still
	// charged), and its commit (held → sold).
	Claim       float64 `json:"claimRU"`
	FailedClaim float64 `json:"failedClaimRU"`
	UnitCommit  float64 `json:"unitCommitRU"`
	// Finding a free unit: a query of one group's partition for one free
	// unit, and the same query across every partition.
	QueryOne   float64 `json:"queryOnePartitionRU"`
	QueryCross float64 `json:"queryCrossPartitionRU"`
	// Create is the preallocation of one unit (its document created),
	// paid before the sale, once per unit put on sale.
	Create float64 `json:"createRU"`
	// Units in Groups partition keys (<g>#<product>), sold out by each
	// way of finding a free unit with each number of concurrent buyers.
	Units  int          `json:"units"`
	Groups int          `json:"groups"`
	Runs   []SellOutRun `json:"sellOuts"`
}

// Ways of finding a free unit: a claim of a unit picked at random, again
// on a loss; a query of a random group for its first free unit, then its
// claim.
const (
	findByProbe = "probe"
	findByQuery = "query"
)

// SellOutRun is one sell-out of the units: one way of finding a free
// unit, Claimers buyers at once.
type SellOutRun struct {
	How      string `json:"how"`
	Claimers int    `json:"claimers"`
	SellOutStats
}

// SellOutStats is what selling every unit took.
type SellOutStats struct {
	// TriesPerSale are the claims sent per unit sold, LastTenthTries the
	// same over the last tenth of the units; RUPerSale everything the
	// finding and the claims cost per sale, the commit included.
	TriesPerSale   float64 `json:"triesPerSale"`
	LastTenthTries float64 `json:"lastTenthTriesPerSale"`
	RUPerSale      float64 `json:"ruPerSale"`
}

// unitDoc is a preallocated unit: its id is its number.
type unitDoc struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	ProductID string `json:"productId"`
	State     string `json:"state"`
	OrderID   string `json:"orderId,omitempty"`
}

const (
	preallocGroups = 16
	typeStockUnit  = "stockUnit"
)

// preallocClaimers are the numbers of concurrent buyers of the sell-outs.
var preallocClaimers = []int{8, 64}

// measurePrealloc runs the comparison with units units on a scratch
// embedded store of partitions simulated physical partitions, with the
// shop's containers.
func measurePrealloc(ctx context.Context, partitions, units int) (Prealloc, error) {
	r := Prealloc{Units: units, Groups: preallocGroups,
		Store: fmt.Sprintf("embedded store, %d simulated physical partitions, unthrottled, in this process", partitions)}
	dir, err := os.MkdirTemp("", "shop-prealloc-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	es, err := embedded.Open(filepath.Join(dir, "lab.db"), embedded.Options{PhysicalPartitions: partitions, NoSync: true})
	if err != nil {
		return r, err
	}
	defer es.Close()
	if err := migrations.Apply(ctx, es, io.Discard); err != nil {
		return r, err
	}
	if err := r.counter(ctx, es); err != nil {
		return r, fmt.Errorf("counter: %w", err)
	}
	c := es.Container(store.InventoryContainer)
	runs := 0
	for _, how := range []string{findByProbe, findByQuery} {
		for _, claimers := range preallocClaimers {
			runs++
			product := fmt.Sprintf("prealloc-%d", runs)
			created, err := preallocate(ctx, c, product, units)
			if err != nil {
				return r, err
			}
			if runs == 1 {
				r.Create = report.Round2(created / float64(units))
				if err := r.unitCharges(ctx, c, product); err != nil {
					return r, err
				}
			}
			sell := sellByProbe
			if how == findByQuery {
				sell = sellByQuery
			}
			st, err := sell(ctx, c, product, units, claimers)
			if err != nil {
				return r, fmt.Errorf("%s, %d buyers: %w", how, claimers, err)
			}
			r.Runs = append(r.Runs, SellOutRun{How: how, Claimers: claimers, SellOutStats: st})
		}
	}
	return r, nil
}

// counter measures the stock read, the take and the commit of one sale
// through the shop's own inventory repository.
func (r *Prealloc) counter(ctx context.Context, es *embedded.Store) error {
	inv := repo.New(store.Metered(es), 0).Inventory
	now := time.Now().UTC()
	if _, err := inv.CreateStock(ctx, domain.NewStock("prealloc-counter", "", domain.MaxStock, now)); err != nil {
		return err
	}
	const reps = 20
	measure := func(fn func(ctx context.Context, i int) error) (float64, error) {
		var sum float64
		for i := range reps {
			mctx, m := store.WithMeter(ctx)
			if err := fn(mctx, i); err != nil {
				return 0, err
			}
			_, ru, _ := m.Totals()
			sum += ru
		}
		return report.Round2(sum / reps), nil
	}
	var err error
	if r.StockRead, err = measure(func(ctx context.Context, _ int) error {
		_, err := inv.Stock(ctx, "prealloc-counter", "")
		return err
	}); err != nil {
		return err
	}
	order := func(i int) string { return fmt.Sprintf("prealloc-order-%03d", i) }
	if r.Take, err = measure(func(ctx context.Context, i int) error {
		return inv.Reserve(ctx, domain.NewReservation("prealloc-counter", "", order(i), "buyer", 1, now), 1)
	}); err != nil {
		return err
	}
	if r.Commit, err = measure(func(ctx context.Context, i int) error {
		return inv.Commit(ctx, "prealloc-counter", "", order(i), 1)
	}); err != nil {
		return err
	}
	r.CounterPerSale = report.Round2(r.StockRead + r.Take + r.Commit)
	return nil
}

// probeExpectation is what random probes take on average to sell all of
// units one buyer at a time: with r units free, a probe finds one with
// probability r/units, so the sale takes units/r probes; over every r,
// units·H(units) probes, H(units) per sale (the harmonic number); over
// the last tenth, units/tenth · H(tenth) per sale.
func probeExpectation(units int) (perSale, lastTenth float64) {
	harmonic := func(n int) float64 {
		var h float64
		for k := 1; k <= n; k++ {
			h += 1 / float64(k)
		}
		return h
	}
	tenth := units - units*9/10
	return report.Round2(harmonic(units)), report.Round2(float64(units) / float64(tenth) * harmonic(tenth))
}

// unitKey is the partition key and id of unit i of product.
func unitKey(product string, i int) (pk, id string) {
	return fmt.Sprintf("%d#%s", i%preallocGroups, product), fmt.Sprintf("unit-%05d", i)
}

// preallocate writes the product's units, every one free, and returns
// what the creates cost.
func preallocate(ctx context.Context, c store.Container, product string, units int) (float64, error) {
	var ru float64
	for i := range units {
		pk, id := unitKey(product, i)
		b, err := json.Marshal(unitDoc{ID: id, Type: typeStockUnit, ProductID: pk, State: "free"})
		if err != nil {
			return 0, err
		}
		res, err := c.Create(ctx, pk, b)
		if err != nil {
			return 0, err
		}
		ru += res.RequestCharge
	}
	return ru, nil
}

// claim takes a free unit for order: one patch under state = free.
func claim(ctx context.Context, c store.Container, pk, id, order string) (float64, error) {
	res, err := c.Patch(ctx, pk, id, []store.PatchOp{
		{Op: store.PatchSet, Path: "/state", Value: "held"},
		{Op: store.PatchSet, Path: "/orderId", Value: order},
	}, &store.PatchOptions{Condition: store.Condition{{Path: "state", Op: store.OpEqual, Value: "free"}}})
	return res.RequestCharge, err
}

// commitUnit marks a held unit sold.
func commitUnit(ctx context.Context, c store.Container, pk, id string) (float64, error) {
	res, err := c.Patch(ctx, pk, id, []store.PatchOp{{Op: store.PatchSet, Path: "/state", Value: "sold"}},
		&store.PatchOptions{Condition: store.Condition{{Path: "state", Op: store.OpEqual, Value: "held"}}})
	return res.RequestCharge, err
}

// freeUnitQuery finds one free unit: in one group's partition, or across
// every partition when pk is "".
func freeUnitQuery(pk string) store.Query {
	return store.Query{PartitionKey: pk, Limit: 1, Filters: []store.Filter{
		{Path: "type", Op: store.OpEqual, Value: typeStockUnit},
		{Path: "state", Op: store.OpEqual, Value: "free"},
	}}
}

// unitCharges measures one claim, one lost claim, one commit and the two
// queries on units still free (then gives the claimed unit back).
func (r *Prealloc) unitCharges(ctx context.Context, c store.Container, product string) error {
	pk, id := unitKey(product, 0)
	q, err := c.Query(ctx, freeUnitQuery(pk))
	if err != nil {
		return err
	}
	r.QueryOne = q.RequestCharge
	if q, err = c.Query(ctx, freeUnitQuery("")); err != nil {
		return err
	}
	r.QueryCross = q.RequestCharge
	if r.Claim, err = claim(ctx, c, pk, id, "o-1"); err != nil {
		return err
	}
	if r.FailedClaim, err = claim(ctx, c, pk, id, "o-2"); !domain.IsCode(err, domain.EPRECONDITION) {
		return fmt.Errorf("a second claim of one unit: %v, want a failed condition", err)
	}
	if r.UnitCommit, err = commitUnit(ctx, c, pk, id); err != nil {
		return err
	}
	b, err := json.Marshal(unitDoc{ID: id, Type: typeStockUnit, ProductID: pk, State: "free"})
	if err != nil {
		return err
	}
	_, err = c.Replace(ctx, pk, id, b, nil)
	return err
}

// sellOut runs claimers buyers at once until every unit is sold, each
// buyer calling next for a unit until it sells one or none is left.
// next returns the RU it spent, whether it sold, and whether units are
// left.
func sellOut(ctx context.Context, c store.Container, units, claimers int,
	next func(ctx context.Context, rng *rand.Rand, order string) (ru float64, tries int, pk, id string, sold, left bool, err error)) (SellOutStats, error) {
	var (
		mu        sync.Mutex
		sold      int
		tries     int
		lastTries int
		ru        float64
		orders    atomic.Int64
		firstErr  error
		wg        sync.WaitGroup
	)
	for w := range claimers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w)+1, 35))
			for {
				order := fmt.Sprintf("o-%06d", orders.Add(1))
				spent, n, pk, id, ok, left, err := next(ctx, rng, order)
				if ok && err == nil {
					var commit float64
					commit, err = commitUnit(ctx, c, pk, id)
					spent += commit
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				ru += spent
				tries += n
				if ok {
					sold++
					if sold > units*9/10 {
						lastTries += n
					}
				}
				done := err != nil || !left || sold >= units
				mu.Unlock()
				if done {
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return SellOutStats{}, firstErr
	}
	if sold != units {
		return SellOutStats{}, fmt.Errorf("sold %d of %d units", sold, units)
	}
	return SellOutStats{
		TriesPerSale:   report.Round2(float64(tries) / float64(sold)),
		LastTenthTries: report.Round2(float64(lastTries) / float64(units-units*9/10)),
		RUPerSale:      report.Round2(ru / float64(sold)),
	}, nil
}

// sellByProbe: each try claims a unit picked at random; a lost claim
// (the unit was sold) tries another. It knows no unit is left only by
// counting, which a real shop would read from a counter: here the lab
// stops at the last unit.
func sellByProbe(ctx context.Context, c store.Container, product string, units, claimers int) (SellOutStats, error) {
	var left atomic.Int64
	left.Store(int64(units))
	return sellOut(ctx, c, units, claimers, func(ctx context.Context, rng *rand.Rand, order string) (float64, int, string, string, bool, bool, error) {
		var ru float64
		for n := 1; ; n++ {
			if left.Load() <= 0 {
				return ru, n - 1, "", "", false, false, nil
			}
			pk, id := unitKey(product, rng.IntN(units))
			charge, err := claim(ctx, c, pk, id, order)
			ru += charge
			switch {
			case err == nil:
				return ru, n, pk, id, true, left.Add(-1) > 0, nil
			case !domain.IsCode(err, domain.EPRECONDITION):
				return ru, n, "", "", false, false, err
			}
		}
	})
}

// sellByQuery: each try queries a random group's partition for its first
// free unit and claims it; a group found empty is not asked again by
// that buyer, and a buyer that found every group empty stops.
func sellByQuery(ctx context.Context, c store.Container, product string, units, claimers int) (SellOutStats, error) {
	return sellOut(ctx, c, units, claimers, func(ctx context.Context, rng *rand.Rand, order string) (float64, int, string, string, bool, bool, error) {
		var ru float64
		empty := map[int]bool{}
		tries := 0
		for len(empty) < preallocGroups {
			g := rng.IntN(preallocGroups)
			if empty[g] {
				continue
			}
			pk := fmt.Sprintf("%d#%s", g, product)
			page, err := c.Query(ctx, freeUnitQuery(pk))
			ru += page.RequestCharge
			if err != nil {
				return ru, tries, "", "", false, false, err
			}
			if len(page.Items) == 0 {
				empty[g] = true
				continue
			}
			var u unitDoc
			if err := json.Unmarshal(page.Items[0], &u); err != nil {
				return ru, tries, "", "", false, false, err
			}
			tries++
			charge, err := claim(ctx, c, pk, u.ID, order)
			ru += charge
			switch {
			case err == nil:
				return ru, tries, pk, u.ID, true, true, nil
			case !domain.IsCode(err, domain.EPRECONDITION):
				return ru, tries, "", "", false, false, err
			}
		}
		return ru, tries, "", "", false, false, nil
	})
}
