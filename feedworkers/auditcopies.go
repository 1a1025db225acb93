package feedworkers

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// Each check derives one copy from the sources the audit read and
// compares it with the stored one. Each repair goes through the feed's
// own path from the source as it is NOW (read again), so the version
// guards of that path hold: a copy newer than the audit's read is never
// overwritten. A copy that is a document of its own and differs at the
// version it claims (a copy corrupted in place: the guard alone would
// keep it) is first deleted with If-Match on the _etag the audit read,
// so a copy that changed since is left alone, then written again by the
// feed's path.

// checkProducts checks the copies a product holds: its category's name,
// its review stats and top reviews, its availability. The copies outside
// the product are then derived from the product as these say it should
// be (fixed), so one wrong name is reported once, on the product, not
// again on each of its summaries and search entries.
func (a *audit) checkProducts(ctx context.Context) error {
	names := map[string]string{}
	for _, c := range a.index.Items {
		names[c.ID] = c.Name
	}
	for _, id := range sortedKeys(a.products) {
		p := a.products[id]
		if p.Deleted {
			continue
		}
		fixed := p
		repaired := false
		repair := func(d Difference, fn func(context.Context) error) error {
			repaired = repaired || a.opts.Repair
			return a.differRepaired(ctx, d, fn)
		}
		if name, ok := names[p.CategoryID]; ok {
			a.report.Checked[CopyCategoryName]++
			fixed.CategoryName = name
			if p.CategoryName != name {
				d := Difference{Copy: CopyCategoryName, Container: store.ProductsContainer, PartitionKey: p.ID, ID: p.ID,
					Source: "products/categories", Detail: fmt.Sprintf("categoryName %q, the index names %s %q", p.CategoryName, p.CategoryID, name)}
				if err := repair(d, func(ctx context.Context) error { return a.h.nameProduct(ctx, p.ID, p.CategoryID, name) }); err != nil {
					return err
				}
			}
		}
		all := a.reviews[p.ID]
		a.report.Checked[CopyReviews]++
		stats, top := domain.ComputeReviewStats(all)
		if !sameReviews(&p, stats, top) {
			d := Difference{Copy: CopyReviews, Container: store.ProductsContainer, PartitionKey: p.ID, ID: p.ID,
				Source: "reviews/" + p.ID, Detail: fmt.Sprintf("reviewStats %+v, its %d reviews give %+v", p.ReviewStats, len(all), stats)}
			if err := repair(d, func(ctx context.Context) error { return a.h.repairReviews(ctx, p) }); err != nil {
				return err
			}
		}
		fixed.ReviewStats, fixed.TopReviews = stats, top
		for i, sku := range p.SKUs() {
			shown := p.Availability.Status
			if sku != "" {
				shown = p.Variants[i].Availability.Status
			}
			label := domain.LineLabel(p.ID, sku)
			if s, tracked := a.stock[label]; tracked {
				a.report.Checked[CopyAvailability]++
				units := s.Available + a.shardUnits[label] // the sum of a split stock's shards
				want := domain.StatusOf(units)
				if sku == "" {
					fixed.Availability.Status = want
				} else {
					fixed.Variants[i].Availability.Status = want
				}
				if shown != want {
					d := Difference{Copy: CopyAvailability, Container: store.ProductsContainer, PartitionKey: p.ID, ID: p.ID,
						Source: "inventory/" + label, Detail: fmt.Sprintf("availability %q, %d units available give %q", shown, units, want)}
					if err := repair(d, func(ctx context.Context) error { return a.h.repairAvailability(ctx, p.ID, sku) }); err != nil {
						return err
					}
				}
			} else if shown != "" && (sku == "" || shown != domain.SoldOut) {
				a.differ(Difference{Copy: CopyAvailability, Container: store.ProductsContainer, PartitionKey: p.ID, ID: p.ID,
					Source: "inventory/" + label, Detail: fmt.Sprintf("availability %q, and the product has no stock document", shown)})
			}
		}
		a.products[id] = fixed
		if repaired {
			// The product's new version goes out as the products feed
			// sends it, and the copies are checked against that version.
			cur, err := a.h.propagateProduct(ctx, p.ID)
			if err != nil {
				return err
			}
			a.products[id] = cur
		}
		if err := a.pace(ctx); err != nil {
			return err
		}
	}
	return nil
}

// checkIndex checks the categories index's copies: each category's
// product count and its featured products, derived from the products.
func (a *audit) checkIndex(ctx context.Context) error {
	live := map[string][]domain.ProductSummary{}
	for _, p := range a.products {
		if !p.Deleted {
			live[p.CategoryID] = append(live[p.CategoryID], domain.SummaryOfProduct(p))
		}
	}
	derived := a.index
	derived.Featured = nil
	var wrong []string
	for _, c := range a.index.Items {
		a.report.Checked[CopyCategoryCounts]++
		if n := len(live[c.ID]); c.ProductCount != n {
			wrong = append(wrong, c.ID)
			a.differ(Difference{Copy: CopyCategoryCounts, Container: store.ProductsContainer, PartitionKey: domain.CategoriesID,
				ID: domain.CategoriesID, Source: "products of " + c.ID, Detail: fmt.Sprintf("%s counts %d products, it has %d", c.ID, c.ProductCount, n)})
		}
		// The featured query's order: ratingScore, then id, descending.
		best := live[c.ID]
		slices.SortFunc(best, func(x, y domain.ProductSummary) int {
			return cmp.Or(cmp.Compare(y.RatingScore, x.RatingScore), cmp.Compare(y.ID, x.ID))
		})
		derived.SetFeatured(c.ID, best)
	}
	a.report.Checked[CopyFeatured]++
	if ok, detail := sameJSON(a.index.Featured, derived.Featured); !ok || len(a.index.Featured) != len(derived.Featured) {
		wrong = append(wrong, "featured")
		a.differ(Difference{Copy: CopyFeatured, Container: store.ProductsContainer, PartitionKey: domain.CategoriesID,
			ID: domain.CategoriesID, Source: "products", Detail: fmt.Sprintf("featured %v, the products rank %v (%s)",
				featuredIDs(a.index.Featured), featuredIDs(derived.Featured), detail)})
	}
	if len(wrong) == 0 || !a.opts.Repair {
		return nil
	}
	err := a.h.recountAll(ctx)
	for i := len(a.report.Differences) - len(wrong); i < len(a.report.Differences); i++ {
		if err != nil {
			a.report.Differences[i].RepairError = err.Error()
		} else {
			a.report.Differences[i].Repaired = true
		}
	}
	return a.pace(ctx)
}

func featuredIDs(fs []domain.FeaturedProduct) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	return ids
}

// checkSummaryDoc checks one productsByCategory summary: its product is
// live and in that category, and the summary is what the product gives.
func (a *audit) checkSummaryDoc(ctx context.Context, _ string, item []byte) error {
	s, err := repo.Decode[domain.ProductSummary](item)
	if err != nil {
		return err
	}
	a.seenSummary(s.CategoryID, s.ID)
	a.report.Checked[CopyProductSummary]++
	d := Difference{Copy: CopyProductSummary, Container: store.ProductsByCategoryContainer, PartitionKey: s.CategoryID,
		ID: s.ID, Source: "products/" + s.ID}
	p, ok := a.products[s.ID]
	switch {
	case !ok || p.Deleted:
		d.Detail = "a summary of a product that is deleted or gone"
	case p.CategoryID != s.CategoryID:
		d.Detail = fmt.Sprintf("a summary in %s, and the product is in %s", s.CategoryID, p.CategoryID)
	default:
		same, detail := sameJSON(s, domain.SummaryOfProduct(p))
		if same {
			return nil
		}
		d.Detail = detail
	}
	return a.differRepaired(ctx, d, func(ctx context.Context) error {
		if err := deleteIfMatch(ctx, a.h.st.Container(store.ProductsByCategoryContainer), s.CategoryID, s.ID, s.ETag); err != nil {
			return err
		}
		return a.h.repairProduct(ctx, s.ID, s.CategoryID)
	})
}

// checkSearchDoc checks one document of productsByTerm: an entry must be
// under a term its live product holds and be what the product gives; a
// ledger must name every term the product has a live entry under.
func (a *audit) checkSearchDoc(ctx context.Context, typ string, item []byte) error {
	switch typ {
	case domain.TypeSearchLedger:
		l, err := repo.Decode[domain.SearchLedger](item)
		if err != nil {
			return err
		}
		a.ledgers[l.ID] = l
		return nil
	case domain.TypeSearchTombstone:
		return nil
	}
	e, err := repo.Decode[domain.SearchEntry](item)
	if err != nil {
		return err
	}
	a.report.Checked[CopySearchEntry]++
	p, ok := a.products[e.ID]
	d := Difference{Copy: CopySearchEntry, Container: store.ProductsByTermContainer, PartitionKey: e.Term, ID: e.ID, Source: "products/" + e.ID}
	live := ok && !p.Deleted
	var terms []string
	if live {
		terms = domain.SearchTerms(p)
	}
	switch {
	case !live:
		d.Detail = "an entry of a product that is deleted or gone"
	case !slices.Contains(terms, e.Term):
		d.Detail = fmt.Sprintf("an entry under %q, a word the product no longer holds (%v)", e.Term, terms)
	default:
		a.seenEntry(e.Term, e.ID)
		// The entry must show what the product shows. Its version may lag
		// the product's (a version that showed the same wrote nothing:
		// ProductToSearch), never lead it.
		want := domain.EntryOfProduct(p, e.Term, terms)
		if e.SourceVersion <= p.Version {
			want.SourceVersion = e.SourceVersion
		}
		same, detail := sameJSON(e, want)
		if same {
			return nil
		}
		d.Detail = detail
	}
	return a.differRepaired(ctx, d, func(ctx context.Context) error {
		if err := deleteIfMatch(ctx, a.h.st.Container(store.ProductsByTermContainer), e.Term, e.ID, e.ETag); err != nil {
			return err
		}
		return a.h.repairSearch(ctx, e.ID, e.Term)
	})
}

// checkCartDoc checks the copies in one cart's lines against their
// products, and the totals against the lines.
func (a *audit) checkCartDoc(ctx context.Context, _ string, item []byte) error {
	c, err := repo.Decode[domain.Cart](item)
	if err != nil {
		return err
	}
	if err := a.checkSettled(ctx, c); err != nil {
		return err
	}
	for _, l := range c.Items {
		a.report.Checked[CopyCartLine]++
		p, ok := a.products[l.ProductID]
		if !ok {
			continue
		}
		want := copyLine(l, p)
		if reflect.DeepEqual(l, want) {
			continue
		}
		same, detail := sameJSON(l, want)
		if same {
			detail = "the line differs from its product"
		}
		d := Difference{Copy: CopyCartLine, Container: store.CartsContainer, PartitionKey: c.UserID, ID: c.ID,
			Source: "products/" + p.ID, Detail: "line " + domain.LineLabel(p.ID, l.SKU) + ": " + detail}
		if err := a.differRepaired(ctx, d, func(ctx context.Context) error { return a.h.repairCartLine(ctx, c, p.ID, l.SKU) }); err != nil {
			return err
		}
	}
	return nil
}

// checkSettled checks that a cart carries no marker of a checkout whose
// order rests (placed or later, or failed): the checkout, the cart's next
// read or change, or else the orders feed settles the cart (the paid
// lines out, or for a failed order the marker alone). A marker whose
// order is in progress, or was never opened, is no copy: the workflow
// moves the first on, and the cart's next change voids the second
// (store/writes: resolve).
func (a *audit) checkSettled(ctx context.Context, c domain.Cart) error {
	a.report.Checked[CopyCartSettled]++
	id, ok := c.PendingOrder()
	if !ok {
		return nil
	}
	o, opened := a.orders[[2]string{c.UserID, id}]
	if !opened || o.InProgress() {
		return nil
	}
	d := Difference{Copy: CopyCartSettled, Container: store.CartsContainer, PartitionKey: c.UserID, ID: c.ID,
		Source: "orders/" + c.UserID + "/" + id, Detail: "the marker of order " + id + ", which is " + o.Status + ": the cart is not settled"}
	return a.differRepaired(ctx, d, func(ctx context.Context) error {
		cur, err := a.h.repos.Orders.Get(ctx, o.UserID, o.ID)
		if err != nil {
			return err
		}
		_, err = a.h.writes.SettleOrder(ctx, cur)
		return err
	})
}

// copyLine is l with every copy taken from p: what a line converges to.
// Its productVersion is the guard, not a copy: the feed skips the carts
// when a product changes nothing a line shows (feedworkers/fanout.go), so
// it may stay behind the product's; it is never ahead of it.
func copyLine(l domain.CartLine, p domain.Product) domain.CartLine {
	v, sold := p.VariantOf(l.SKU)
	l.Name = p.Name
	l.Available = !p.Deleted && sold
	l.ProductVersion = min(l.ProductVersion, p.Version)
	if sold {
		l.StockStatus = v.Availability.Status
		if l.SKU != "" {
			l.Attributes = v.Attributes
		}
		l.UnitPriceCents, l.PriceVersion = v.PriceCents, p.PriceVersion
	}
	l.LineTotalCents = l.UnitPriceCents * int64(l.Quantity)
	return l
}

// checkOrdersDoc checks a customer summary against the user's orders.
func (a *audit) checkOrdersDoc(ctx context.Context, typ string, item []byte) error {
	if typ != domain.TypeCustomerSummary {
		return nil
	}
	s, err := repo.Decode[domain.CustomerSummary](item)
	if err != nil {
		return err
	}
	a.summaries[s.UserID] = true
	return a.checkCustomerSummary(ctx, s.UserID, &s)
}

// customerSummaryOf derives a user's summary from the orders: every order
// in a counted state (domain.States) counts; the last order is the newest
// ever placed, cancelled ones included (a cancel leaves it).
func customerSummaryOf(userID string, orders []domain.Order) domain.CustomerSummary {
	s := domain.NewCustomerSummary(userID)
	for _, o := range orders {
		if st, _ := domain.StateOf(o.Status); !st.Counted && o.Status != domain.StatusCancelled {
			continue
		}
		s.AddOrder(o, o.CreatedAt)
		if o.Status == domain.StatusCancelled {
			s.RemoveOrder(o, o.CreatedAt)
		}
	}
	return s
}

func (a *audit) checkCustomerSummary(ctx context.Context, userID string, stored *domain.CustomerSummary) error {
	a.report.Checked[CopyCustomerSummary]++
	want := customerSummaryOf(userID, a.byUser[userID])
	d := Difference{Copy: CopyCustomerSummary, Container: store.OrdersContainer, PartitionKey: userID,
		ID: domain.CustomerSummaryID, Source: "orders of " + userID}
	etag := ""
	if stored == nil {
		d.Detail = fmt.Sprintf("missing, and the user has %d orders", len(a.byUser[userID]))
	} else {
		etag = stored.ETag
		got := *stored
		got.Meta, got.LastUpdated = want.Meta, want.LastUpdated
		same, detail := sameJSON(got, want)
		if same {
			return nil
		}
		d.Detail = detail
	}
	return a.differRepaired(ctx, d, func(ctx context.Context) error {
		return a.h.repos.Orders.PutSummary(ctx, want, etag, a.h.now())
	})
}

// checkInventoryDoc checks a reservation's state against its order's
// state (domain.States): committed once the order sold its units,
// released once it returned them, anything while it is still taking
// them. A reservation with no order is no copy: an order is opened
// before its takes, so only a legacy checkout's can be one.
func (a *audit) checkInventoryDoc(ctx context.Context, typ string, item []byte) error {
	if typ != domain.TypeReservation {
		return nil
	}
	r, err := repo.Decode[domain.Reservation](item)
	if err != nil {
		return err
	}
	if r.State == domain.ReservationMoved {
		return nil // a split stock's marker: the take went on to another shard
	}
	o, ok := a.orders[[2]string{r.UserID, r.OrderID}]
	if !ok {
		return nil
	}
	a.report.Checked[CopyReservation]++
	st, _ := domain.StateOf(o.Status)
	want := map[string]string{
		domain.StockHeld: domain.ReservationHeld, domain.StockSold: domain.ReservationCommitted,
		domain.StockReturned: domain.ReservationReleased,
	}[st.Stock]
	if want == "" || r.State == want {
		return nil // an order still taking its units: any state will do
	}
	d := Difference{Copy: CopyReservation, Container: store.InventoryContainer, PartitionKey: r.ProductID, ID: r.ID,
		Source: "orders/" + o.UserID + "/" + o.ID, Detail: fmt.Sprintf("state %s, the order is %s", r.State, o.Status)}
	return a.differRepaired(ctx, d, func(ctx context.Context) error {
		cur, err := a.h.repos.Orders.Get(ctx, o.UserID, o.ID)
		if err != nil {
			return err
		}
		return a.h.writes.SettleStock(ctx, cur)
	})
}

// checkOrderSummaryDoc checks one ordersByStatus summary: its order
// exists, and the summary is what it gives, in its status's partition.
func (a *audit) checkOrderSummaryDoc(ctx context.Context, _ string, item []byte) error {
	s, err := repo.Decode[domain.OrderSummary](item)
	if err != nil {
		return err
	}
	a.report.Checked[CopyOrderSummary]++
	a.orderSummaries[[2]string{s.StatusDay, s.ID}] = true
	d := Difference{Copy: CopyOrderSummary, Container: store.OrdersByStatusContainer, PartitionKey: s.StatusDay, ID: s.ID,
		Source: "orders/" + s.UserID + "/" + s.ID}
	o, ok := a.orders[[2]string{s.UserID, s.ID}]
	switch {
	case !ok:
		d.Detail = "a summary of an order that does not exist"
	case o.InProgress():
		d.Detail = "a summary of an order in progress: the view holds orders that rest"
	default:
		same, detail := sameJSON(s, domain.SummaryOf(o, a.h.repos.OrderSummaries.Buckets()))
		if same {
			return nil
		}
		d.Detail = detail
	}
	return a.differRepaired(ctx, d, func(ctx context.Context) error {
		if err := deleteIfMatch(ctx, a.h.st.Container(store.OrdersByStatusContainer), s.StatusDay, s.ID, s.ETag); err != nil {
			return err
		}
		if !ok || o.InProgress() {
			return nil
		}
		return a.h.OrdersToStatusView(ctx, []domain.Order{o})
	})
}

// The checks of copies that should exist and were not met in a scan.

func (a *audit) checkMissingSummaries(ctx context.Context) error {
	for _, id := range sortedKeys(a.products) {
		p := a.products[id]
		if p.Deleted || a.summarySeen[[2]string{p.CategoryID, p.ID}] {
			continue
		}
		a.report.Checked[CopyProductSummary]++
		d := Difference{Copy: CopyProductSummary, Container: store.ProductsByCategoryContainer, PartitionKey: p.CategoryID,
			ID: p.ID, Source: "products/" + p.ID, Detail: "missing"}
		if err := a.differRepaired(ctx, d, func(ctx context.Context) error { return a.h.repairProduct(ctx, p.ID, "") }); err != nil {
			return err
		}
	}
	return nil
}

func (a *audit) checkMissingSearch(ctx context.Context) error {
	for _, id := range sortedKeys(a.products) {
		p := a.products[id]
		if p.Deleted {
			continue
		}
		terms := domain.SearchTerms(p)
		for _, t := range terms {
			if a.entrySeen[[2]string{t, p.ID}] {
				continue
			}
			a.report.Checked[CopySearchEntry]++
			d := Difference{Copy: CopySearchEntry, Container: store.ProductsByTermContainer, PartitionKey: t, ID: p.ID,
				Source: "products/" + p.ID, Detail: "missing"}
			if err := a.differRepaired(ctx, d, func(ctx context.Context) error { return a.h.repairSearch(ctx, p.ID, t) }); err != nil {
				return err
			}
		}
		// The ledger names every term, and its claim is what the product
		// shows (its Shown is the product's fingerprint), at a version no
		// newer than the product's: the next change of the product then
		// writes exactly when what it shows differs.
		a.report.Checked[CopySearchLedger]++
		l, ok := a.ledgers[p.ID]
		var unnamed []string
		for _, t := range terms {
			if !ok || !slices.Contains(l.Terms, t) {
				unnamed = append(unnamed, t)
			}
		}
		shown := domain.SearchFingerprint(p)
		if !ok || len(unnamed) > 0 || l.Version > p.Version || l.Shown != shown {
			d := Difference{Copy: CopySearchLedger, Container: store.ProductsByTermContainer, PartitionKey: domain.SearchLedgerKey(p.ID),
				ID: p.ID, Source: "products/" + p.ID, Detail: fmt.Sprintf("missing, or at version %d (the product's is %d), or showing %q (the product shows %q), or not naming %v",
					l.Version, p.Version, l.Shown, shown, unnamed)}
			if err := a.differRepaired(ctx, d, func(ctx context.Context) error { return a.h.repairSearch(ctx, p.ID, "") }); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *audit) checkMissingCustomerSummaries(ctx context.Context) error {
	for _, user := range sortedKeys(a.byUser) {
		if !a.summaries[user] {
			if err := a.checkCustomerSummary(ctx, user, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *audit) checkMissingOrderSummaries(ctx context.Context) error {
	n := a.h.repos.OrderSummaries.Buckets()
	for _, k := range sortedKeys(a.orders) {
		o := a.orders[k]
		if o.InProgress() {
			continue
		}
		key := domain.StatusDayKey(o.Status, o.CreatedAt, o.ID, n)
		if a.orderSummaries[[2]string{key, o.ID}] {
			continue
		}
		a.report.Checked[CopyOrderSummary]++
		d := Difference{Copy: CopyOrderSummary, Container: store.OrdersByStatusContainer, PartitionKey: key, ID: o.ID,
			Source: "orders/" + o.UserID + "/" + o.ID, Detail: "missing"}
		if err := a.differRepaired(ctx, d, func(ctx context.Context) error {
			return a.h.OrdersToStatusView(ctx, []domain.Order{o})
		}); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[K comparable, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y K) int { return cmp.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
	return keys
}

// deleteIfMatch deletes a divergent copy unless it changed since the
// audit read it (etag); a copy already gone is fine.
func deleteIfMatch(ctx context.Context, c store.Container, pk, id, etag string) error {
	_, err := c.Delete(ctx, pk, id, &store.WriteOptions{IfMatch: etag})
	if domain.IsCode(err, domain.ENOTFOUND) {
		return nil
	}
	if domain.IsCode(err, domain.EPRECONDITION) {
		return fmt.Errorf("the copy changed since the audit read it: left to its feed")
	}
	return err
}
