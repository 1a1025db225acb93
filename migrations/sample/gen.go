package sample

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reference-shop/shop/domain"
)

// The fixed seed of the sample catalog: the same options give the same shop.
const sampleSeed1, sampleSeed2 = 20261129, 42

// samplePlan is a generated catalog, held in memory before it is written.
type samplePlan struct {
	categories []domain.Category
	products   []domain.Product
	// reviews[i] are the reviews of products[i].
	reviews     [][]domain.Review
	reviewCount int
	// stocks[i] are the stock documents of products[i], one per SKU.
	stocks [][]domain.Stock
	carts  []domain.Cart
}

type sampleReviewer struct{ id, name string }

// generateSample builds the catalog deterministically from opts; now only
// anchors the dates (reviews over the past year, lastUpdated).
func generateSample(opts Options, now time.Time) *samplePlan {
	rng := rand.New(rand.NewPCG(sampleSeed1, sampleSeed2))
	cats := sampleCategories[:opts.Categories]
	p := &samplePlan{categories: make([]domain.Category, len(cats))}
	for i, c := range cats {
		p.categories[i] = domain.Category{ID: c.id, Name: c.name}
	}

	width := max(4, len(fmt.Sprint(opts.Products)))
	seen := map[string]bool{}
	p.products = make([]domain.Product, opts.Products)
	for i := range p.products {
		// Every category gets a product before any gets a second.
		ci := i
		if i >= len(cats) {
			ci = rng.IntN(len(cats))
		}
		c := cats[ci]
		p.categories[ci].ProductCount++
		name, kind := sampleName(rng, c, seen)
		p.products[i] = domain.Product{
			Meta:         domain.Meta{ID: fmt.Sprintf("p-%0*d", width, i+1), Type: domain.TypeProduct, SchemaVersion: domain.SchemaVersion},
			Name:         name,
			Description:  sampleDescription(rng, c, kind),
			CategoryID:   c.id,
			CategoryName: c.name,
			PriceCents:   samplePrice(rng, c),
			Currency:     "USD",
			PriceVersion: 1,
			Tags:         sampleTags(fmt.Sprintf("p-%0*d", width, i+1)),
			TopReviews:   []domain.TopReview{},
			LastUpdated:  now,
			Version:      1,
		}
		prod := &p.products[i]
		prod.KeepImage()
		if vs := sampleVariantsOf(prod.ID, prod.PriceCents, kind); len(vs) > 0 {
			// The price stays the drawn one, the lowest variant's.
			prod.SetVariants(vs)
		}
		// One stock per SKU, and its availability copy on the product
		// (and so the product's best status) as the inventory feed
		// would leave it.
		var stocks []domain.Stock
		for _, sku := range prod.SKUs() {
			st := domain.NewStock(prod.ID, sku, sampleStock(domain.LineLabel(prod.ID, sku)), now)
			prod.RepairStock(st)
			stocks = append(stocks, st)
		}
		p.stocks = append(p.stocks, stocks)
	}

	reviewers := sampleReviewers()
	counts := allocateReviews(rng, opts.Products, opts.Reviews, len(reviewers))
	p.reviews = make([][]domain.Review, len(p.products))
	for i := range p.products {
		if counts[i] == 0 {
			continue
		}
		prod := &p.products[i]
		rs := sampleReviews(rng, prod.ID, counts[i], reviewers, now)
		prod.ReviewStats, prod.TopReviews = domain.ComputeReviewStats(rs)
		p.reviews[i] = rs
		p.reviewCount += len(rs)
	}

	p.carts = make([]domain.Cart, opts.Users)
	userWidth := max(5, len(fmt.Sprint(opts.Users)))
	for i := range p.carts {
		c := domain.NewCart(fmt.Sprintf("shopper-%0*d", userWidth, i+1))
		lines := 1 + rng.IntN(min(10, len(p.products)))
		for _, pi := range pickDistinct(rng, len(p.products), lines) {
			// Cannot fail: the product is live, the SKU one it sells, the
			// quantity in 1..3, the lines at most 10.
			prod := p.products[pi]
			_ = c.SetQuantity(prod, sampleSKU(c.UserID, prod), 1+rng.IntN(3), now)
		}
		p.carts[i] = c
	}
	return p
}

// sampleTagWords are the tags of the sample's products, searched like
// their names.
var sampleTagWords = []string{"gift", "bestseller", "new", "eco", "handmade", "organic", "limited", "classic"}

// sampleTags are zero to two tags of a product, drawn from its id like
// sampleStock, so that the rest of the sample does not move.
func sampleTags(productID string) []string {
	h := fnv.New64a()
	h.Write([]byte("tags " + productID))
	v := h.Sum64()
	n := int(v % 3)
	var tags []string
	for i := range n {
		t := sampleTagWords[(v>>(8*(i+1)))%uint64(len(sampleTagWords))]
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags
}

// sampleVariantsOf are the variants of a product of kind (none for a kind
// sold as one implicit variant, sampleVariantKinds), priced from its drawn
// price. Whether a garment comes in colours, and which two, is drawn from
// the id like sampleStock, so that the rest of the sample does not move.
func sampleVariantsOf(productID string, price int64, kind sampleKind) []domain.Variant {
	sv, ok := sampleVariantKinds[kind.noun]
	if !ok {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte("variants " + productID))
	v := h.Sum64()
	colours := []string{""}
	if n := uint64(len(sv.colours)); n >= 2 && v%2 == 0 {
		first := (v >> 8) % n
		second := (first + 1 + (v>>16)%(n-1)) % n
		colours = []string{sv.colours[first], sv.colours[second]}
	}
	var out []domain.Variant
	for _, colour := range colours {
		for i, value := range sv.values {
			attrs := map[string]string{sv.attribute: value}
			sku := strings.ReplaceAll(value, " ", "")
			if colour != "" {
				attrs["colour"] = colour
				sku += "-" + strings.ToLower(colour)
			}
			cents := price
			if sv.factors[i] != 1 {
				// Whole dollars, ending in .99 like every sample price.
				cents = int64(math.Round(float64(price)*sv.factors[i]/100))*100 - 1
			}
			out = append(out, domain.Variant{SKU: sku, Attributes: attrs, PriceCents: cents})
		}
	}
	return out
}

// sampleSKU is the SKU a sample cart of userID holds of prod: none for a
// product without variants, else one of its variants drawn from the user
// and the product (not from rng, so that the rest of the sample does not
// move).
func sampleSKU(userID string, prod domain.Product) string {
	skus := prod.SKUs()
	h := fnv.New64a()
	h.Write([]byte("sku " + userID + " " + prod.ID))
	return skus[h.Sum64()%uint64(len(skus))]
}

// sampleStock is the units of a variant in the sample, named by its line
// label (the product id for a product without variants, "p-0014/M-navy"
// for a variant): most in stock (20 to 200), about one in seven low (1 to
// 5), one in twenty sold out. Drawn from the label, not from rng, so that
// the rest of the sample does not move.
func sampleStock(label string) int64 {
	h := fnv.New64a()
	h.Write([]byte(label))
	v := h.Sum64()
	switch b := v % 100; {
	case b < 5:
		return 0
	case b < 20:
		return int64(1 + (v/100)%domain.LowStock)
	}
	return int64(20 + (v/100)%181)
}

// sampleName picks a name of the category not used yet (a kind, one word
// before its noun and one after), and its kind; once every name of the
// category is taken, any.
func sampleName(rng *rand.Rand, c sampleCategory, seen map[string]bool) (string, sampleKind) {
	type option struct {
		name string
		kind sampleKind
	}
	var all, fresh []option
	for _, k := range c.kinds {
		for _, before := range k.before {
			for _, after := range k.after {
				o := option{before + " " + k.noun + " " + after, k}
				all = append(all, o)
				if !seen[o.name] {
					fresh = append(fresh, o)
				}
			}
		}
	}
	if len(fresh) == 0 {
		fresh = all
	}
	o := fresh[rng.IntN(len(fresh))]
	seen[o.name] = true
	return o.name, o.kind
}

// sampleDescription is two sentences about the product's kind and one
// about its category.
func sampleDescription(rng *rand.Rand, c sampleCategory, kind sampleKind) string {
	var parts []string
	for _, j := range pickDistinct(rng, len(kind.sentences), min(2, len(kind.sentences))) {
		parts = append(parts, kind.sentences[j])
	}
	parts = append(parts, c.sentences[rng.IntN(len(c.sentences))])
	return strings.Join(parts, " ")
}

// samplePrice is a shop price in cents ending in .99 or .49.
func samplePrice(rng *rand.Rand, c sampleCategory) int64 {
	dollars := int64(c.minDollars + rng.IntN(c.maxDollars-c.minDollars+1))
	return dollars*100 - []int64{1, 51}[rng.IntN(2)]
}

func sampleReviewers() []sampleReviewer {
	out := make([]sampleReviewer, 0, len(sampleFirstNames)*len(sampleLastInitials))
	for _, last := range sampleLastInitials {
		for _, first := range sampleFirstNames {
			out = append(out, sampleReviewer{
				id:   fmt.Sprintf("reviewer-%03d", len(out)+1),
				name: first + " " + last,
			})
		}
	}
	return out
}

// allocateReviews spreads total reviews over n products, at most maxPer
// each (one review per reviewer per product). Most products get some, but
// when reviews are scarce they gather on fewer products, a few each, and
// popular products get more: review counts in a real catalog are skewed.
func allocateReviews(rng *rand.Rand, n, total, maxPer int) []int {
	counts := make([]int, n)
	if n == 0 || total == 0 {
		return counts
	}
	share := min(0.85, float64(total)/(3*float64(n)))
	// Enough products to hold every review at maxPer each, if there are.
	reviewed := rng.Perm(n)[:min(n, max(1, int(share*float64(n)), (total+maxPer-1)/maxPer))]
	if total <= len(reviewed) {
		for _, i := range reviewed[:total] {
			counts[i] = 1
		}
		return counts
	}
	cum := make([]float64, len(reviewed))
	sum := 0.0
	for k, i := range reviewed {
		counts[i] = 1
		// Exponential popularity: a few products collect many reviews.
		sum += rng.ExpFloat64() + 0.1
		cum[k] = sum
	}
	for left := total - len(reviewed); left > 0; left-- {
		k := sort.SearchFloat64s(cum, rng.Float64()*sum)
		// A product whose reviewers are used up passes on to the next.
		for tries := 0; counts[reviewed[k]] >= maxPer; tries++ {
			if tries == len(reviewed) {
				return counts
			}
			k = (k + 1) % len(reviewed)
		}
		counts[reviewed[k]]++
	}
	return counts
}

// sampleReviews makes n reviews of productID by distinct reviewers, around
// a quality of the product's own, dated over the year before now.
func sampleReviews(rng *rand.Rand, productID string, n int, reviewers []sampleReviewer, now time.Time) []domain.Review {
	quality := 3.0 + rng.Float64()*1.8
	out := make([]domain.Review, n)
	for k, ri := range pickDistinct(rng, len(reviewers), n) {
		rating := int(math.Round(quality + rng.NormFloat64()*0.9))
		rating = min(5, max(1, rating))
		u := reviewers[ri]
		titles, bodies := sampleTitles[rating-1], sampleBodies[rating-1]
		sentences := pickDistinct(rng, len(bodies), 1+rng.IntN(2))
		body := bodies[sentences[0]]
		if len(sentences) == 2 {
			body += " " + bodies[sentences[1]]
		}
		out[k] = domain.Review{
			Meta:      domain.Meta{ID: domain.ReviewID(u.id), Type: domain.TypeReview, SchemaVersion: domain.SchemaVersion},
			ProductID: productID,
			UserID:    u.id,
			UserName:  u.name,
			Rating:    rating,
			Title:     titles[rng.IntN(len(titles))],
			Body:      body,
			CreatedAt: now.Add(-time.Duration(rng.Int64N(365*24*3600)) * time.Second),
		}
	}
	// Newest first, as the reviews screen lists them.
	slices.SortFunc(out, func(a, b domain.Review) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out
}

// pickDistinct returns k distinct numbers in [0, n), k <= n. A few out of
// many are drawn and redrawn on a repeat: a full permutation of 10,000
// products for each of 10,000 carts would dominate a large seed.
func pickDistinct(rng *rand.Rand, n, k int) []int {
	if 4*k > n {
		return rng.Perm(n)[:k]
	}
	out := make([]int, 0, k)
	for len(out) < k {
		if i := rng.IntN(n); !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}
