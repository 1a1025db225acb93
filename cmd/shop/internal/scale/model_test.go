package scale

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// charges are made-up inputs, round enough to check the arithmetic by
// hand; the measured ones come from measureCharges.
func charges() Charges {
	one := func(container string, ru float64) Cost { return Cost{container: {Ops: 1, RU: ru}} }
	return Charges{
		Mix: []ClassCost{
			{Class: classProduct, Share: 0.70, Cost: one(store.ProductsContainer, 1)},
			{Class: classCategory, Share: 0.15, Cost: one(store.ProductsByCategoryContainer, 4)},
			{Class: classCart, Share: 0.10, Cost: one(store.CartsContainer, 10)},
			{Class: classCheckout, Share: 0.05, Cost: Cost{
				store.OrdersContainer:         {Ops: 2, RU: 20},
				store.OrdersByStatusContainer: {Ops: 2, RU: 8},
				store.InventoryContainer:      {Ops: 1, RU: 10},
			}},
		},
		Home:         one(store.ProductsContainer, 1),
		Review:       Cost{store.ReviewsContainer: {Ops: 1, RU: 6}, store.ProductsContainer: {Ops: 1, RU: 10}},
		PriceChange:  Cost{store.CartsContainer: {Ops: 11, RU: 100}},
		CartsHolding: 10,
		Sizes: map[string]int{sizeProduct: 2000, sizeProductSummary: 400, sizeCart: 500, sizeOrder: 1000,
			sizeOrderSummary: 400, sizeStock: 200, sizeReview: 400},
	}
}

func TestModelAddsTheMixPerContainerAndSizesThePartitions(t *testing.T) {
	m := Model(charges(), DefaultAssumptions, Scenario{Name: "test", Users: 1e7, Products: 1e6, PeakRPS: 50000})
	want := map[string]struct {
		rus        float64
		partitions int
	}{
		// 35,000 product pages × 1 + 50,000 home pages × 1.
		store.ProductsContainer: {85000, 9},
		// 7,500 category pages × 4.
		store.ProductsByCategoryContainer: {30000, 3},
		// 5,000 cart updates × 10.
		store.CartsContainer: {50000, 5},
		// 2,500 checkouts × 20; 50 M orders × 1,000 B = 50 GB: 1 for storage.
		store.OrdersContainer: {50000, 5},
		// 2,500 checkouts × 8.
		store.OrdersByStatusContainer: {20000, 2},
		store.InventoryContainer:      {25000, 3},
		// No request of the mix; 10 M reviews × 400 B = 4 GB.
		store.ReviewsContainer: {0, 1},
	}
	if got := len(m.Containers); got != len(want) {
		t.Fatalf("%d containers, want %d", got, len(want))
	}
	for _, l := range m.Containers {
		w := want[l.Container]
		if math.Abs(l.RUs-w.rus) > 1e-6 || l.Partitions != w.partitions {
			t.Errorf("%s: %.2f RU/s on %d partitions, want %.2f on %d", l.Container, l.RUs, l.Partitions, w.rus, w.partitions)
		}
		if l.Partitions > 0 && math.Abs(l.PerPartition*float64(l.Partitions)-l.RUs) > 1e-6 {
			t.Errorf("%s: %d × %.2f RU/s per partition is not the container's %.2f", l.Container, l.Partitions, l.PerPartition, l.RUs)
		}
	}
	if got := containerOf(m.Containers, store.OrdersContainer).ForGB; got != 1 {
		t.Errorf("orders: %d partitions for 50 GB, want 1", got)
	}
}

func TestModelFindsTheStatusViewHotSpotAndTheBucketsItNeeds(t *testing.T) {
	for _, tc := range []struct {
		peak        float64
		unbucketed  float64
		over        bool
		bucketsNeed int
	}{
		// 500 checkouts/s × 8 RU; a day at the peak: 43.2 M × 400 B = 17.28 GB.
		{10000, 4000, false, 1},
		// 2,500 × 8 = 20,000 RU/s: 2 partitions' worth; 86.4 GB: 5 × 20 GB.
		{50000, 20000, true, 5},
	} {
		m := Model(charges(), DefaultAssumptions, Scenario{Name: "test", Users: 1e6, Products: 1e6, PeakRPS: tc.peak})
		spots := map[string]HotSpot{}
		for _, h := range m.HotSpots {
			spots[h.Name] = h
		}
		un, b := spots["today's placed orders, unbucketed"], spots["today's placed orders, one bucket"]
		if math.Abs(un.RUs-tc.unbucketed) > 1e-6 || un.Over != tc.over {
			t.Errorf("peak %v: unbucketed placed partition %.2f RU/s (over %v), want %.2f (over %v)", tc.peak, un.RUs, un.Over, tc.unbucketed, tc.over)
		}
		if math.Abs(b.RUs*domain.DefaultStatusBuckets-un.RUs) > 1e-6 || b.Over {
			t.Errorf("peak %v: one bucket %.2f RU/s, want %.2f ÷ %d", tc.peak, b.RUs, un.RUs, domain.DefaultStatusBuckets)
		}
		if m.StatusBucketsNeeded != tc.bucketsNeed {
			t.Errorf("peak %v: %d buckets needed, want %d", tc.peak, m.StatusBucketsNeeded, tc.bucketsNeed)
		}
		if m.StatusBucketsNeeded > domain.DefaultStatusBuckets {
			t.Errorf("peak %v: the shop's %d buckets are fewer than the %d needed", tc.peak, domain.DefaultStatusBuckets, m.StatusBucketsNeeded)
		}
	}
}

func TestProvisionCoversTheHotKeysPartition(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key, total float64
		partitions int
		want       float64
	}{
		// 4 partitions of 10,000: the key's partition carries 2,000 +
		// 6,000 ÷ 4 = 3,500 of its 2,000 share: 4 × 2,000 + 6,000.
		{"a key over its even share", 2000, 8000, 4, 14000},
		// One partition holds everything: 8,000 RU/s fit in it.
		{"one partition", 2000, 8000, 1, 8000},
		// 9,000 on one key leaves 1,000 for the others' share on its
		// partition: 31,000 ÷ 1,000 = 31 partitions.
		{"a key near the limit", 9000, 40000, 4, 31*9000 + 31000},
		// 4 partitions at 10,000 leave the key's partition 100 + 39,900
		// ÷ 4 = 10,075: a fifth partition.
		{"a key on partitions at their limit", 100, 40000, 4, 5*100 + 39900},
		{"a key of no load", 0, 30000, 4, 30000},
	} {
		h := HotSpot{RUs: tc.key}
		got := provisionFor(h, ContainerLoad{RUs: tc.total, Partitions: tc.partitions})
		if math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: provision %.0f RU/s, want %.0f", tc.name, got, tc.want)
		}
	}
	if got := provisionFor(HotSpot{RUs: 12000, Over: true}, ContainerLoad{RUs: 12000, Partitions: 2}); got != 0 {
		t.Errorf("a key over 10,000 RU/s: provision %.0f, want 0 (none can)", got)
	}
}

func TestMarkdownNamesEveryContainerAndHotSpot(t *testing.T) {
	rep := Report{Store: "test store", Command: "go run ./cmd/shop scale", Repetitions: 1, Charges: charges(), Assumptions: DefaultAssumptions}
	for _, sc := range Scenarios {
		rep.Scenarios = append(rep.Scenarios, Model(rep.Charges, DefaultAssumptions, sc))
	}
	var buf bytes.Buffer
	writeMarkdown(&buf, rep)
	out := buf.String()
	for _, want := range []string{
		"### Measured charges per operation, by container (RU)",
		"### Assumptions",
		"### 1 million users, 10,000 requests/s",
		"### 10 million users, 50,000 requests/s",
		"the largest order history", "the largest category", "today's placed orders, one key",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the section lacks %q", want)
		}
	}
	for _, sc := range rep.Scenarios {
		for _, l := range sc.Containers {
			if !strings.Contains(out, "| "+l.Container+" | ") {
				t.Errorf("no row for container %s", l.Container)
			}
		}
	}
	readCache := 0
	for _, name := range []string{
		"the home page's categories document", "a popular category's page", "today's placed orders, unbucketed",
		"a popular product's document: product pages", "a popular product's document: review recounts",
		"a price change fanned out to open carts", "the stock document of a product on flash sale",
	} {
		if got := strings.Count(out, "| "+name+" | "); got != len(Scenarios) {
			t.Errorf("hot spot %q appears in %d tables, want %d", name, got, len(Scenarios))
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "fixed by the read cache (see the section below)") {
			readCache++
		}
	}
	if want := 3 * len(Scenarios); readCache != want {
		t.Errorf("%d rows say the read cache fixes them, want %d (home page, category page, product page)", readCache, want)
	}
}
