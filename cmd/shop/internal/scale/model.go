package scale

import (
	"fmt"
	"math"
	"slices"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Cosmos DB's limits the model holds the design against.
const (
	// partitionRUs is the most Request Units per second one physical
	// partition serves; a logical partition lives on one physical
	// partition, so it is also the most one partition key can spend.
	partitionRUs = 10000
	// physicalGB is the storage of one physical partition.
	physicalGB = 50
	// logicalGB is the most one logical partition (one key) may hold.
	logicalGB = 20
)

// Scenario is one size of the shop.
type Scenario struct {
	Name     string  `json:"name"`
	Users    float64 `json:"users"`
	Products float64 `json:"products"`
	PeakRPS  float64 `json:"peakRps"`
}

// Scenarios are the two sizes of docs/scale.md.
var Scenarios = []Scenario{
	{Name: "1 million users, 10,000 requests/s", Users: 1e6, Products: 1e6, PeakRPS: 10000},
	{Name: "10 million users, 50,000 requests/s", Users: 1e7, Products: 1e6, PeakRPS: 50000},
}

// Assumptions are the shop's shape beyond the mix: who holds what, and
// how concentrated the popular items are. Each is a flag of `shop scale`.
type Assumptions struct {
	OpenCartShare     float64 `json:"openCartShare"`     // users with an open cart
	OrdersPerUser     float64 `json:"ordersPerUser"`     // the mean order history
	LargestHistory    float64 `json:"largestHistory"`    // orders of the biggest buyer
	ReviewsPerProduct float64 `json:"reviewsPerProduct"` // the mean
	LargestCategory   float64 `json:"largestCategory"`   // products in it
	HomePerRequest    float64 `json:"homePerRequest"`    // home page visits per request of the mix
	HotCategoryShare  float64 `json:"hotCategoryShare"`  // of category pages, on the most popular category
	HotProductShare   float64 `json:"hotProductShare"`   // of product pages, on the most popular product
	HotReviewsPerSec  float64 `json:"hotReviewsPerSec"`  // reviews of the most popular product
	HotCartShare      float64 `json:"hotCartShare"`      // of open carts, holding the most popular product
	FlashShare        float64 `json:"flashShare"`        // of checkouts, buying the flash-sale product
	PeakHoursPerDay   float64 `json:"peakHoursPerDay"`   // hours of a day at the peak: today's placed orders
}

// DefaultAssumptions are the flags' defaults.
var DefaultAssumptions = Assumptions{
	OpenCartShare: 0.10, OrdersPerUser: 5, LargestHistory: 5000, ReviewsPerProduct: 10,
	LargestCategory: 50000, HomePerRequest: 1, HotCategoryShare: 0.25, HotProductShare: 0.02,
	HotReviewsPerSec: 5, HotCartShare: 0.05, FlashShare: 0.20, PeakHoursPerDay: 24,
}

// ContainerLoad is one container at one scenario's peak.
type ContainerLoad struct {
	Container string  `json:"container"`
	RUs       float64 `json:"ruPerSecond"`
	GB        float64 `json:"gb"`
	// ForRU and ForGB are the physical partitions the throughput and the
	// storage need; Partitions the larger (at least 1), over which the
	// provisioned RU/s are split evenly: PerPartition each.
	ForRU        int     `json:"partitionsForRu"`
	ForGB        int     `json:"partitionsForStorage"`
	Partitions   int     `json:"partitions"`
	PerPartition float64 `json:"ruPerSecondPerPartition"`
}

// LogicalExtreme is the storage of one logical partition at an extreme.
type LogicalExtreme struct {
	What       string  `json:"what"`
	Container  string  `json:"container"`
	Arithmetic string  `json:"arithmetic"`
	GB         float64 `json:"gb"`
	Over       bool    `json:"over20GB"`
}

// HotSpot is one partition key that concentrates load.
type HotSpot struct {
	Name      string `json:"name"`
	Container string `json:"container"`
	Key       string `json:"key"`
	// Arithmetic says how RUs comes about; RUs is the Request Units per
	// second on the one logical partition.
	Arithmetic string  `json:"arithmetic"`
	RUs        float64 `json:"ruPerSecond"`
	// Over is RUs above the 10,000 RU/s of one physical partition.
	Over bool `json:"over10000"`
	// Provision is the RU/s the container must be provisioned so that
	// the physical partition holding the key gets, from the even split,
	// the key's RU/s plus its share of the other keys'; 0 when no
	// provisioning can (Over).
	Provision float64 `json:"provisionRuPerSecond"`
	// Limit is the load at which the key reaches 10,000 RU/s.
	Limit string `json:"limit"`
	// Answer is the fix, or why none is needed.
	Answer string `json:"answer"`
}

// ScenarioModel is the model of one scenario.
type ScenarioModel struct {
	Scenario   Scenario         `json:"scenario"`
	Containers []ContainerLoad  `json:"containers"`
	TotalRUs   float64          `json:"totalRuPerSecond"`
	Logical    []LogicalExtreme `json:"logicalPartitions"`
	HotSpots   []HotSpot        `json:"hotSpots"`
	// StatusBuckets is the buckets today's placed orders need (by
	// throughput and by storage) against domain.DefaultStatusBuckets.
	StatusBucketsNeeded int `json:"statusBucketsNeeded"`
}

// modelContainers are the containers the shop's requests land in, in the
// order of the tables.
var modelContainers = []string{
	store.ProductsContainer, store.ProductsByCategoryContainer, store.ReviewsContainer,
	store.CartsContainer, store.OrdersContainer, store.OrdersByStatusContainer, store.InventoryContainer,
}

// Answers to the hot spots, the same at every scale.
const (
	answerReadCache = "fixed by the read cache (see the section below)"
	answerBuckets   = "fixed: %d buckets (status:bucket:day), %s per bucket; the admin day query reads %d partitions"
)

// Model computes one scenario from the measured charges.
func Model(ch Charges, a Assumptions, sc Scenario) ScenarioModel {
	m := ScenarioModel{Scenario: sc}
	rate := map[string]float64{}
	cost := map[string]Cost{}
	for _, c := range ch.Mix {
		rate[c.Class] = sc.PeakRPS * c.Share
		cost[c.Class] = c.Cost
	}
	home := sc.PeakRPS * a.HomePerRequest
	orders := sc.Users * a.OrdersPerUser
	docs := map[string]float64{ // documents × bytes, per container
		store.ProductsContainer:           sc.Products * float64(ch.Sizes[sizeProduct]),
		store.ProductsByCategoryContainer: sc.Products * float64(ch.Sizes[sizeProductSummary]),
		store.ReviewsContainer:            sc.Products * a.ReviewsPerProduct * float64(ch.Sizes[sizeReview]),
		store.CartsContainer:              sc.Users * a.OpenCartShare * float64(ch.Sizes[sizeCart]),
		store.OrdersContainer:             orders * float64(ch.Sizes[sizeOrder]),
		store.OrdersByStatusContainer:     orders * float64(ch.Sizes[sizeOrderSummary]),
		store.InventoryContainer:          sc.Products * float64(ch.Sizes[sizeStock]),
	}
	for _, name := range modelContainers {
		l := ContainerLoad{Container: name, RUs: home * ch.Home.RU(name), GB: docs[name] / 1e9}
		for _, c := range ch.Mix {
			l.RUs += rate[c.Class] * c.Cost.RU(name)
		}
		l.ForRU = int(math.Ceil(l.RUs / partitionRUs))
		l.ForGB = int(math.Ceil(l.GB / physicalGB))
		l.Partitions = max(l.ForRU, l.ForGB, 1)
		l.PerPartition = l.RUs / float64(l.Partitions)
		m.TotalRUs += l.RUs
		m.Containers = append(m.Containers, l)
	}

	checkouts := rate[classCheckout]
	placedRU := cost[classCheckout].RU(store.OrdersByStatusContainer)
	placedGB := checkouts * 3600 * a.PeakHoursPerDay * float64(ch.Sizes[sizeOrderSummary]) / 1e9
	m.StatusBucketsNeeded = max(int(math.Ceil(checkouts*placedRU/partitionRUs)), int(math.Ceil(placedGB/logicalGB)), 1)
	m.Logical = []LogicalExtreme{
		extreme("the largest order history", store.OrdersContainer, a.LargestHistory, "orders", ch.Sizes[sizeOrder]),
		extreme("the largest category", store.ProductsByCategoryContainer, a.LargestCategory, "product summaries", ch.Sizes[sizeProductSummary]),
		extreme(fmt.Sprintf("today's placed orders, one key (%s/s × %s h)", count(checkouts), count(a.PeakHoursPerDay)), store.OrdersByStatusContainer,
			checkouts*3600*a.PeakHoursPerDay, "order summaries", ch.Sizes[sizeOrderSummary]),
		extreme(fmt.Sprintf("today's placed orders, one of %d buckets", domain.DefaultStatusBuckets), store.OrdersByStatusContainer,
			checkouts*3600*a.PeakHoursPerDay/domain.DefaultStatusBuckets, "order summaries", ch.Sizes[sizeOrderSummary]),
	}

	homeRU := ch.Home.RU(store.ProductsContainer)
	catRU := cost[classCategory].RU(store.ProductsByCategoryContainer)
	productRU := cost[classProduct].RU(store.ProductsContainer)
	recountRU := ch.Review.RU(store.ProductsContainer)
	perCart := ch.PriceChange.RU(store.CartsContainer) / float64(ch.CartsHolding)
	holding := sc.Users * a.OpenCartShare * a.HotCartShare
	takeRU := cost[classCheckout].RU(store.InventoryContainer)
	hotPages := rate[classProduct] * a.HotProductShare
	carts := containerOf(m.Containers, store.CartsContainer)
	m.HotSpots = []HotSpot{
		spot("the home page's categories document", store.ProductsContainer, "the categories index",
			fmt.Sprintf("%s visits/s × %s RU", count(home), ru(homeRU)), home*homeRU,
			fmt.Sprintf("%s visits/s", count(partitionRUs/homeRU)), answerReadCache),
		spot("a popular category's page", store.ProductsByCategoryContainer, "/categoryId of the category",
			fmt.Sprintf("%s category pages/s × %s × %s RU", count(rate[classCategory]), pct(a.HotCategoryShare), ru(catRU)), rate[classCategory]*a.HotCategoryShare*catRU,
			fmt.Sprintf("%s pages/s of one category", count(partitionRUs/catRU)), answerReadCache),
		spot("today's placed orders, unbucketed", store.OrdersByStatusContainer, "placed:<today>",
			fmt.Sprintf("%s checkouts/s × %s RU (the orders feed's summary)", count(checkouts), ru(placedRU)), checkouts*placedRU,
			fmt.Sprintf("%s checkouts/s", count(partitionRUs/placedRU)),
			fmt.Sprintf(answerBuckets, domain.DefaultStatusBuckets, ru(checkouts*placedRU/domain.DefaultStatusBuckets)+" RU/s", domain.DefaultStatusBuckets)),
		spot("today's placed orders, one bucket", store.OrdersByStatusContainer, "placed:<bucket>:<today>",
			fmt.Sprintf("%s checkouts/s × %s RU ÷ %d buckets", count(checkouts), ru(placedRU), domain.DefaultStatusBuckets), checkouts*placedRU/domain.DefaultStatusBuckets,
			fmt.Sprintf("%s checkouts/s", count(partitionRUs*domain.DefaultStatusBuckets/placedRU)), "the fix above"),
		spot("a popular product's document: product pages", store.ProductsContainer, "/id of the product",
			fmt.Sprintf("%s product pages/s × %s × %s RU", count(rate[classProduct]), pct(a.HotProductShare), ru(productRU)), hotPages*productRU,
			fmt.Sprintf("%s pages/s of one product", count(partitionRUs/productRU)), answerReadCache),
		spot("a popular product's document: review recounts", store.ProductsContainer, "/id of the product",
			fmt.Sprintf("%s reviews/s × %s RU (the reviews feed's rewrite)", count(a.HotReviewsPerSec), ru(recountRU)), a.HotReviewsPerSec*recountRU,
			fmt.Sprintf("%s reviews/s of one product", count(partitionRUs/recountRU)),
			"none needed: a product is reviewed a few times a second at most, and the feed coalesces versions of one document"),
		spot("a price change fanned out to open carts", store.CartsContainer, "/userId of each cart (one write each)",
			fmt.Sprintf("%s carts × %s RU = %s RU once, on %s different keys", count(holding), ru(perCart), count(holding*perCart), count(holding)), perCart,
			fmt.Sprintf("never on one key; the burst is %s s of the container's %s RU/s", ru(holding*perCart/math.Max(carts.RUs, 1)), count(carts.RUs)),
			"none needed: one write per cart, each in its own partition; the feed's 16 writers pace the burst"),
		spot("the stock document of a product on flash sale", store.InventoryContainer, "/productId of the product",
			fmt.Sprintf("%s checkouts/s × %s × %s RU (stock read, take and settle)", count(checkouts), pct(a.FlashShare), ru(takeRU)), checkouts*a.FlashShare*takeRU,
			fmt.Sprintf("%s sales/s of one product", count(partitionRUs/takeRU)), ""),
	}
	for i, h := range m.HotSpots {
		m.HotSpots[i].Provision = provisionFor(h, containerOf(m.Containers, h.Container))
	}
	flash := &m.HotSpots[len(m.HotSpots)-1]
	flash.Answer = flashAnswer(*flash, containerOf(m.Containers, store.InventoryContainer), partitionRUs/takeRU)
	return m
}

// provisionFor is the container throughput under which the key's
// physical partition is not throttled. With P partitions and the
// container's RU/s C, that partition carries the key plus (C − key) ÷ P
// of the others and is given R ÷ P: R ≥ P × key + C − key, with P at
// least the container's and at least (C − key) ÷ (10,000 − key), for no
// partition serves more than 10,000 RU/s.
func provisionFor(h HotSpot, c ContainerLoad) float64 {
	if h.Over {
		return 0
	}
	key, rest := h.RUs, max(c.RUs-h.RUs, 0)
	p := max(float64(c.Partitions), math.Ceil(rest/(partitionRUs-key)))
	return max(c.RUs, p*key+rest)
}

// flashAnswer judges the stock document: over one partition, it needs
// splitting; under it, provisioning may still have to grow for its
// partition's even share to cover it.
func flashAnswer(h HotSpot, c ContainerLoad, ceiling float64) string {
	split := "split the product's stock into several documents under their own keys, the units divided among them"
	switch {
	case h.Over:
		return fmt.Sprintf("over: one product sells at most %s/s; %s", count(ceiling), split)
	case h.Provision > 1.5*c.RUs:
		return fmt.Sprintf("no change of the design at this scale, but of the provisioning: %s RU/s instead of %s, so that the even split gives the product's partition its load; past %s sales/s of one product none can: %s",
			count(h.Provision), count(c.RUs), count(ceiling), split)
	}
	return fmt.Sprintf("none needed at this scale: the partition refuses (429, then the API's 503 with Retry-After) only past %s sales/s of one product", count(ceiling))
}

func spot(name, container, key, arithmetic string, rus float64, limit, answer string) HotSpot {
	return HotSpot{Name: name, Container: container, Key: key, Arithmetic: arithmetic, RUs: rus, Over: rus > partitionRUs, Limit: limit, Answer: answer}
}

func extreme(what, container string, n float64, docs string, size int) LogicalExtreme {
	gb := n * float64(size) / 1e9
	return LogicalExtreme{What: what, Container: container, GB: gb, Over: gb > logicalGB,
		Arithmetic: fmt.Sprintf("%s %s × %d B", count(n), docs, size)}
}

func containerOf(ls []ContainerLoad, name string) ContainerLoad {
	i := slices.IndexFunc(ls, func(l ContainerLoad) bool { return l.Container == name })
	if i < 0 {
		return ContainerLoad{}
	}
	return ls[i]
}
