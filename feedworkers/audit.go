package feedworkers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// The audit is the convergence checker of the shop: it derives every copy
// the feeds keep from its source documents, as they are now, and reports
// each stored copy that differs from what it derives, is missing, or
// outlives its source. Once writes stop and the feeds have caught up, a
// shop that converged has no difference; the model-based test of the whole
// shop (cmd/shop: TestEveryCopyConverges) asserts exactly that, and `shop
// audit` runs the same checker on a live store, within a Request Unit
// budget, and repairs what it finds.
//
// The checker refuses to pass on a document it does not know: every type
// in every container must be listed in Kinds, as a source, a copy it
// derives, or bookkeeping. A new copy added without a check therefore
// fails the property until the audit knows how to derive it.

// Roles of a document type in the audit.
const (
	// RoleSource: a document the shop writes on a request; copies are
	// derived from it (it may hold copies itself: a product's categoryName).
	RoleSource = "source"
	// RoleCopy: a document that only the feeds write, derived whole from
	// its sources.
	RoleCopy = "copy"
	// RoleBookkeeping: a record of a protocol (an idempotency key, a
	// lease, a fan-out record), neither a source of a copy nor a copy.
	RoleBookkeeping = "bookkeeping"
	// RoleEvent: an event of the outbox (domain.Event), written in the
	// batch of the change it reports and read by the webhooks feed; no
	// copy derives from it and it is derived from no current source (it
	// reports a change, which the source has since moved past), so the
	// audit counts it and leaves it to its ttl.
	RoleEvent = "event"
)

// Kinds lists every document type of every container and its role. The
// audit reports a document of a type missing here as a difference
// ("unknown"), and a container missing here is never scanned, which
// TestAuditKnowsEveryContainer forbids.
var Kinds = map[string]map[string]string{
	store.ProductsContainer: {
		domain.TypeProduct:    RoleSource,
		domain.TypeCategories: RoleSource,
		domain.TypeEvent:      RoleEvent,
	},
	store.ReviewsContainer: {domain.TypeReview: RoleSource},
	store.CartsContainer:   {domain.TypeCart: RoleSource},
	store.OrdersContainer: {
		domain.TypeOrder:           RoleSource,
		domain.TypeCustomerSummary: RoleCopy,
		domain.TypeIdempotency:     RoleBookkeeping,
		domain.TypeVoidedOrder:     RoleBookkeeping,
		domain.TypeEvent:           RoleEvent,
	},
	store.InventoryContainer: {
		domain.TypeStock:       RoleSource,
		domain.TypeStockShard:  RoleSource,
		domain.TypeTransfer:    RoleBookkeeping,
		domain.TypeReservation: RoleCopy,
	},
	store.ProductsByCategoryContainer: {domain.TypeProductSummary: RoleCopy},
	store.ProductsByTermContainer: {
		domain.TypeSearchEntry:     RoleCopy,
		domain.TypeSearchTombstone: RoleBookkeeping,
		domain.TypeSearchLedger:    RoleBookkeeping,
	},
	store.OrdersByStatusContainer: {domain.TypeOrderSummary: RoleCopy},
	// Webhook subscriptions (the admin's) and their deliveries, records
	// of the delivery protocol (feedworkers/webhooks): no copy of either.
	store.WebhooksContainer: {
		domain.TypeSubscription: RoleSource,
		domain.TypeDelivery:     RoleBookkeeping,
	},
	// The processors' own records: leases, dead letters, fan-out records.
	store.LeasesContainer: nil,
}

// Field roles, for the documents that are sources (Fields).
const (
	// FieldSource: written by a request, copied from nowhere.
	FieldSource = "source"
	// FieldSelf: derived from the document's own fields by every write of
	// it (a cart's totals from its lines), not a copy of another document.
	FieldSelf = "self"
	// FieldGuard: bookkeeping of the copies' protocol (a version they are
	// compared by, the category a moved product left).
	FieldGuard = "guard"
)

// Fields lists every field of the source documents that hold copies, and
// the nested types they embed, by JSON name: the copy the audit derives
// it as (one of Copies), or a role above. A field added to one of these
// types without a line here fails TestAuditKnowsEveryField: a copy
// embedded in a source cannot be added without the audit deriving it.
// Documents that are copies as a whole (a summary, a search entry) are
// compared whole, so a field added there is compared already.
var Fields = map[string]map[string]string{
	"Product": {
		"name": FieldSource, "description": FieldSource, "categoryId": FieldSource, "priceCents": FieldSource,
		"currency": FieldSource, "imageUrl": FieldSource, "tags": FieldSource, "deleted": FieldSource,
		"lastUpdated": FieldSource, "priceVersion": FieldGuard, "version": FieldGuard, "previousCategoryId": FieldGuard,
		"copyVersion":  FieldGuard,
		"categoryName": CopyCategoryName, "topReviews": CopyReviews, "reviewStats": CopyReviews,
		"availability": CopyAvailability, "variants": FieldSource,
	},
	// A variant is the admin's but for its availability, a copy of its
	// own stock document.
	"Variant": {
		"sku": FieldSource, "attributes": FieldSource, "priceCents": FieldSource, "imageUrl": FieldSource,
		"availability": CopyAvailability,
	},
	"Categories": {"items": FieldSource, "featured": CopyFeatured, "lastUpdated": FieldSource},
	"Category":   {"id": FieldSource, "name": FieldSource, "productCount": CopyCategoryCounts},
	"Cart": {
		"userId": FieldSource, "items": FieldSource, "lastUpdated": FieldSource, "pendingCheckout": CopyCartSettled,
		"productIds": FieldSelf, "itemCount": FieldSelf, "subtotalCents": FieldSelf,
	},
	"CartLine": {
		"productId": FieldSource, "sku": FieldSource, "quantity": FieldSource, "lineTotalCents": FieldSelf, "productVersion": FieldGuard,
		"name": CopyCartLine, "attributes": CopyCartLine, "unitPriceCents": CopyCartLine, "priceVersion": CopyCartLine,
		"available": CopyCartLine, "stockStatus": CopyCartLine,
	},
}

// The copies the audit derives, as reports name them.
const (
	CopyCategoryName    = "product.categoryName"    // from the categories index
	CopyReviews         = "product.reviews"         // reviewStats and topReviews, from reviews
	CopyAvailability    = "product.availability"    // from the product's stock
	CopyProductSummary  = "productsByCategory"      // from the product
	CopyCategoryCounts  = "categories.productCount" // from the products
	CopyFeatured        = "categories.featured"     // from the products
	CopySearchEntry     = "productsByTerm"          // from the product
	CopySearchLedger    = "productsByTerm.ledger"   // from the live entries
	CopyCartLine        = "carts.line"              // name, the variant's attributes, price and availability, from the product
	CopyCartSettled     = "carts.settled"           // a committed order's marker gone, its lines paid, from the order
	CopyCustomerSummary = "orders.customerSummary"  // from the user's orders
	CopyOrderSummary    = "ordersByStatus"          // from the order
	CopyReservation     = "inventory.reservation"   // its state, from the order
	CopyUnknown         = "unknown"                 // a document type Kinds does not list
)

// Copies lists every copy the audit derives, in the order it checks them.
var Copies = []string{
	CopyCategoryName, CopyReviews, CopyAvailability, CopyProductSummary, CopyCategoryCounts, CopyFeatured,
	CopySearchEntry, CopySearchLedger, CopyCartLine, CopyCartSettled, CopyCustomerSummary, CopyOrderSummary, CopyReservation,
}

// Difference is one stored copy that is not what its source says.
type Difference struct {
	Copy string `json:"copy"`
	// Container, PartitionKey and ID name the document holding the copy.
	Container    string `json:"container"`
	PartitionKey string `json:"partitionKey"`
	ID           string `json:"id"`
	// Source names the source document ("products/p-1").
	Source string `json:"source,omitempty"`
	// Detail says what differs.
	Detail string `json:"detail"`
	// Repaired is set when --repair rewrote the copy; RepairError says
	// why it could not.
	Repaired    bool   `json:"repaired,omitempty"`
	RepairError string `json:"repairError,omitempty"`
}

func (d Difference) String() string {
	s := fmt.Sprintf("%s %s/%s/%s: %s", d.Copy, d.Container, d.PartitionKey, d.ID, d.Detail)
	if d.Source != "" {
		s += " (source " + d.Source + ")"
	}
	return s
}

// AuditOptions configures one audit.
type AuditOptions struct {
	// Repair rewrites each divergent copy from its current source through
	// the feed's own path, guarded by version (see repair).
	Repair bool
	// RUPerSecond bounds the Request Units the audit spends per second
	// (0: no bound), so it can run against a production account beside
	// the shop's own traffic.
	RUPerSecond float64
	// PageSize is the items of one query page (default 100).
	PageSize int
	// Progress, when set, is told after each page.
	Progress func(AuditProgress)
}

// AuditProgress is where an audit is: the container it reads, and the
// documents of it read so far in this pass (the containers that hold
// sources and copies are read twice).
type AuditProgress struct {
	Container    string
	Documents    int
	Differences  int
	RequestUnits float64
	Elapsed      time.Duration
}

// AuditReport is what an audit found.
type AuditReport struct {
	Differences []Difference
	// Checked counts the copies compared, by copy.
	Checked map[string]int
	// Documents counts the documents read, by container.
	Documents    map[string]int
	Operations   int
	RequestUnits float64
	Elapsed      time.Duration
}

// ByCopy counts the differences by copy.
func (r AuditReport) ByCopy() map[string]int {
	n := map[string]int{}
	for _, d := range r.Differences {
		n[d.Copy]++
	}
	return n
}

// Audit checks every copy against its source (and, with opts.Repair,
// repairs the copies that differ). It reads each container page by page:
// the sources first (the categories index, products, stock, orders), kept
// in memory, then each container of copies, each copy compared with what
// its source derives.
func (h *Handlers) Audit(ctx context.Context, opts AuditOptions) (AuditReport, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	ctx, meter := store.WithMeter(ctx)
	a := &audit{h: h, opts: opts, meter: meter, began: time.Now(),
		report: AuditReport{Checked: map[string]int{}, Documents: map[string]int{}}}
	err := a.run(ctx)
	a.report.Operations, a.report.RequestUnits, _ = meter.Totals()
	a.report.Elapsed = time.Since(a.began)
	return a.report, err
}

// audit is one run: the sources read so far and the report.
type audit struct {
	h      *Handlers
	opts   AuditOptions
	meter  *store.Meter
	began  time.Time
	report AuditReport

	index    domain.Categories
	products map[string]domain.Product // every product, deleted ones too
	stock    map[string]domain.Stock   // by domain.LineLabel(product id, SKU)
	// shardUnits is the units of a split stock's further shards, by label.
	shardUnits map[string]int64
	orders     map[[2]string]domain.Order // by (userId, id)
	byUser     map[string][]domain.Order
	reviews    map[string][]domain.Review // by product id

	// What the scans of the copies met, for the checks of missing copies.
	summarySeen    map[[2]string]bool // (categoryId, productId)
	entrySeen      map[[2]string]bool // (term, productId)
	ledgers        map[string]domain.SearchLedger
	summaries      map[string]bool    // users with a customer summary
	orderSummaries map[[2]string]bool // (statusDay, orderId)
}

func (a *audit) seenSummary(categoryID, id string) { a.summarySeen[[2]string{categoryID, id}] = true }
func (a *audit) seenEntry(term, id string)         { a.entrySeen[[2]string{term, id}] = true }

func (a *audit) run(ctx context.Context) error {
	idx, err := a.h.repos.Products.Categories(ctx)
	if err != nil {
		return err
	}
	a.index = idx
	a.products, a.stock, a.orders, a.byUser = map[string]domain.Product{}, map[string]domain.Stock{}, map[[2]string]domain.Order{}, map[string][]domain.Order{}
	a.shardUnits = map[string]int64{}
	a.summarySeen, a.entrySeen, a.ledgers = map[[2]string]bool{}, map[[2]string]bool{}, map[string]domain.SearchLedger{}
	a.summaries, a.orderSummaries = map[string]bool{}, map[[2]string]bool{}
	a.reviews = map[string][]domain.Review{}
	// Sources first. The containers of sources also hold copies (a
	// customer summary beside the orders, reservations beside the stock):
	// those are checked in the second pass, once every source is known.
	for _, c := range []string{store.ProductsContainer, store.InventoryContainer, store.OrdersContainer, store.ReviewsContainer} {
		if err := a.scan(ctx, c, a.source); err != nil {
			return err
		}
	}
	if err := a.checkProducts(ctx); err != nil {
		return err
	}
	if err := a.checkIndex(ctx); err != nil {
		return err
	}
	checks := []struct {
		container string
		check     func(context.Context, string, []byte) error
	}{
		{store.ProductsByCategoryContainer, a.checkSummaryDoc},
		{store.ProductsByTermContainer, a.checkSearchDoc},
		{store.CartsContainer, a.checkCartDoc},
		{store.OrdersContainer, a.checkOrdersDoc},
		{store.InventoryContainer, a.checkInventoryDoc},
		{store.OrdersByStatusContainer, a.checkOrderSummaryDoc},
	}
	for _, c := range checks {
		if err := a.scan(ctx, c.container, c.check); err != nil {
			return err
		}
	}
	if err := a.checkMissingSummaries(ctx); err != nil {
		return err
	}
	if err := a.checkMissingSearch(ctx); err != nil {
		return err
	}
	if err := a.checkMissingCustomerSummaries(ctx); err != nil {
		return err
	}
	return a.checkMissingOrderSummaries(ctx)
}

// scan reads every document of a container, a page at a time (one
// cross-partition query per page), and hands each to fn with its type,
// after checking that Kinds knows the type.
func (a *audit) scan(ctx context.Context, container string, fn func(ctx context.Context, typ string, item []byte) error) error {
	c := a.h.st.Container(container)
	cont, read := "", 0
	for {
		page, err := c.Query(ctx, store.Query{Limit: a.opts.PageSize, Continuation: cont})
		if err != nil {
			return fmt.Errorf("audit %s: %w", container, err)
		}
		for _, it := range page.Items {
			hd, err := repo.Decode[struct {
				head
				ETag string `json:"_etag"`
			}](it)
			if err != nil {
				return err
			}
			a.report.Documents[container]++
			read++
			if _, ok := Kinds[container][hd.Type]; !ok {
				a.differ(Difference{Copy: CopyUnknown, Container: container, ID: hd.ID,
					Detail: fmt.Sprintf("a document of type %q, which the audit does not know: list it in feedworkers.Kinds and derive it", hd.Type)})
				continue
			}
			if err := fn(ctx, hd.Type, it); err != nil {
				return err
			}
		}
		a.progress(container, read)
		if err := a.pace(ctx); err != nil {
			return err
		}
		if page.Continuation == "" {
			return nil
		}
		cont = page.Continuation
	}
}

// source keeps the sources in memory.
func (a *audit) source(_ context.Context, typ string, item []byte) error {
	switch typ {
	case domain.TypeProduct:
		p, err := repo.Decode[domain.Product](item)
		if err != nil {
			return err
		}
		a.products[p.ID] = p
	case domain.TypeStock:
		s, err := repo.Decode[domain.Stock](item)
		if err != nil {
			return err
		}
		a.stock[domain.LineLabel(s.ProductID, s.SKU)] = s
	case domain.TypeStockShard:
		s, err := repo.Decode[domain.Stock](item)
		if err != nil {
			return err
		}
		a.shardUnits[domain.LineLabel(s.Product(), s.SKU)] += s.Available
	case domain.TypeOrder:
		o, err := repo.Decode[domain.Order](item)
		if err != nil {
			return err
		}
		a.orders[[2]string{o.UserID, o.ID}] = o
		a.byUser[o.UserID] = append(a.byUser[o.UserID], o)
	case domain.TypeReview:
		// One scan of reviews costs far less than a query per product
		// (0.17 RU a review against about 3 RU a query on the sample
		// shop), at the price of holding them until the products are
		// checked.
		r, err := repo.Decode[domain.Review](item)
		if err != nil {
			return err
		}
		a.reviews[r.ProductID] = append(a.reviews[r.ProductID], r)
	}
	return nil
}

// pace holds the audit to its Request Unit budget: after each step it
// sleeps until the Request Units spent so far fit the budget's rate.
func (a *audit) pace(ctx context.Context) error {
	if a.opts.RUPerSecond <= 0 {
		return nil
	}
	_, ru, _ := a.meter.Totals()
	due := time.Duration(ru / a.opts.RUPerSecond * float64(time.Second))
	wait := due - time.Since(a.began)
	if wait <= 0 {
		return nil
	}
	return store.Sleep(ctx, wait)
}

func (a *audit) progress(container string, read int) {
	if a.opts.Progress == nil {
		return
	}
	_, ru, _ := a.meter.Totals()
	a.opts.Progress(AuditProgress{Container: container, Documents: read,
		Differences: len(a.report.Differences), RequestUnits: ru, Elapsed: time.Since(a.began)})
}

// differ records a difference.
func (a *audit) differ(d Difference) {
	a.report.Differences = append(a.report.Differences, d)
}

// differRepaired records a difference and, with Repair, runs its repair.
func (a *audit) differRepaired(ctx context.Context, d Difference, repair func(context.Context) error) error {
	if a.opts.Repair {
		err := repair(ctx)
		switch {
		case err == nil:
			d.Repaired = true
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			d.RepairError = err.Error()
		}
		if err := a.pace(ctx); err != nil {
			return err
		}
	}
	a.differ(d)
	return nil
}

// sameJSON compares a stored copy with the derived one by their JSON, the
// system properties (_etag, _ts) left out, and describes the first field
// that differs.
func sameJSON(stored, derived any) (bool, string) {
	s, d := fields(stored), fields(derived)
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if string(s[k]) != string(d[k]) {
			return false, fmt.Sprintf("%s is %s, its source says %s", k, orNone(s[k]), orNone(d[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if _, ok := d[k]; !ok {
			return false, fmt.Sprintf("%s is %s, its source says none", k, s[k])
		}
	}
	return true, ""
}

func fields(v any) map[string]json.RawMessage {
	b, _ := json.Marshal(v)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	delete(m, "_etag")
	delete(m, "_ts")
	return m
}

func orNone(b json.RawMessage) string {
	if b == nil {
		return "none"
	}
	return string(b)
}
