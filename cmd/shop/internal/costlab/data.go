package costlab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
)

// The cost lab compares the shop's denormalized documents with the
// normalized ones a relational habit would produce. The normalized
// variants live in scratch containers next to the shop's own, filled from
// the same data in the same run, so both designs are measured on equal
// terms.
const (
	normProductsContainer   = "products_normalized"
	normCategoriesContainer = "categories_normalized"
	normCartsContainer      = "carts_normalized"
)

// normContainers are the scratch containers of the normalized design,
// indexed like their denormalized counterparts.
var normContainers = []store.ContainerDef{
	{
		ID:               normProductsContainer,
		PartitionKeyPath: "/id",
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/*"},
			ExcludedPaths: []string{"/description/?", "/\"_etag\"/?"},
		},
	},
	{
		ID:               normCategoriesContainer,
		PartitionKeyPath: "/id",
		IndexingPolicy:   store.IndexingPolicy{IncludedPaths: []string{"/*"}, ExcludedPaths: []string{"/\"_etag\"/?"}},
	},
	{
		ID:               normCartsContainer,
		PartitionKeyPath: "/userId",
		IndexingPolicy: store.IndexingPolicy{
			IncludedPaths: []string{"/type/?", "/userId/?"},
			ExcludedPaths: []string{"/*"},
		},
	},
}

// normProduct is a product without the copies: no category name, no
// embedded reviews, no review stats. Reading it is only the start of the
// product page.
type normProduct struct {
	domain.Meta
	Name         string    `json:"name"`
	Description  string    `json:"description"`
	CategoryID   string    `json:"categoryId"`
	PriceCents   int64     `json:"priceCents"`
	Currency     string    `json:"currency"`
	PriceVersion int64     `json:"priceVersion"`
	ImageURL     string    `json:"imageUrl"`
	LastUpdated  time.Time `json:"lastUpdated"`
}

// normCategory is one category as its own document.
type normCategory struct {
	domain.Meta
	Name string `json:"name"`
}

// normCart holds references only: each line must be joined to its product
// for a name and a price.
type normCart struct {
	domain.Meta
	UserID string         `json:"userId"`
	Items  []normCartLine `json:"items"`
}

type normCartLine struct {
	ProductID string `json:"productId"`
	Quantity  int    `json:"quantity"`
}

// labOptions sizes the cost lab's data set.
type labOptions struct {
	Products          int
	Categories        int
	ReviewsPerProduct int
	// Users each get a 10-line cart and OrdersPerUser orders.
	Users         int
	OrdersPerUser int
	// PriceChanges is how many price changes the workload measures; each
	// changes its own product, held by CartsPerProduct open carts.
	PriceChanges    int
	CartsPerProduct int
	// Progress is called as the data set grows (done of total steps).
	Progress func(done, total int)
}

// cartLines is the size of every cart of the lab: the 10-line cart.
const cartLines = 10

func (o labOptions) validate() error {
	switch {
	case o.Categories < 1:
		return fmt.Errorf("categories: want at least 1, got %d", o.Categories)
	case o.PriceChanges < 1 || o.CartsPerProduct < 1:
		return fmt.Errorf("price changes and carts per product: want at least 1")
	case o.Products < o.PriceChanges+cartLines:
		return fmt.Errorf("products: want at least %d (10 for the carts plus one per price change), got %d", o.PriceChanges+cartLines, o.Products)
	case o.Users < 1 || o.OrdersPerUser < 1 || o.ReviewsPerProduct < 1:
		return fmt.Errorf("users, orders per user and reviews per product: want at least 1")
	}
	return nil
}

// labData is what the lab built: the ids each measurement walks over.
type labData struct {
	products   []domain.Product
	categories []string
	users      []string
	// changeProducts are the products whose price the workload changes;
	// no user's cart holds them, only their fan-out carts.
	changeProducts []string
}

// buildLab fills s with the shop's containers and the normalized scratch
// containers, from one generated data set.
func buildLab(ctx context.Context, s store.Store, o labOptions) (*labData, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		return nil, err
	}
	for _, def := range normContainers {
		if _, err := s.EnsureContainer(ctx, def); err != nil {
			return nil, fmt.Errorf("container %s: %w", def.ID, err)
		}
	}
	b := &labBuilder{s: s, repos: repo.New(s, 0), o: o, now: time.Now().UTC().Truncate(time.Second)}
	b.total = 1 + o.Categories + o.Products*(o.ReviewsPerProduct+1) + o.Users*(1+o.OrdersPerUser) + o.PriceChanges*o.CartsPerProduct
	return b.build(ctx)
}

type labBuilder struct {
	s           store.Store
	repos       *repo.Set
	o           labOptions
	now         time.Time
	done, total int
}

func (b *labBuilder) step() {
	b.done++
	if b.o.Progress != nil {
		b.o.Progress(b.done, b.total)
	}
}

// put writes a normalized document into a scratch container.
func (b *labBuilder) put(ctx context.Context, container, pk string, doc any) error {
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = b.s.Container(container).Upsert(ctx, pk, raw, nil)
	return err
}

func (b *labBuilder) build(ctx context.Context) (*labData, error) {
	d := &labData{}
	names := map[string]string{}
	for c := range b.o.Categories {
		id := fmt.Sprintf("cat-%02d", c)
		names[id] = fmt.Sprintf("Category %02d", c)
		d.categories = append(d.categories, id)
		doc := normCategory{Meta: domain.Meta{ID: id, Type: "category", SchemaVersion: domain.SchemaVersion}, Name: names[id]}
		if err := b.put(ctx, normCategoriesContainer, id, doc); err != nil {
			return nil, err
		}
		b.step()
	}
	counts := map[string]int{}
	for i := range b.o.Products {
		counts[d.categories[i%len(d.categories)]]++
	}
	if _, err := b.repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		c.Items = c.Items[:0]
		for _, id := range d.categories {
			c.Items = append(c.Items, domain.Category{ID: id, Name: names[id], ProductCount: counts[id]})
		}
		c.LastUpdated = time.Now().UTC()
		return nil
	}); err != nil {
		return nil, err
	}
	b.step()
	for i := range b.o.Products {
		p, err := b.product(ctx, i, d.categories[i%len(d.categories)], names)
		if err != nil {
			return nil, err
		}
		d.products = append(d.products, p)
	}
	// The last PriceChanges products are held only by their fan-out carts,
	// so each price change reaches exactly CartsPerProduct carts.
	regular := d.products[:len(d.products)-b.o.PriceChanges]
	for _, p := range d.products[len(regular):] {
		d.changeProducts = append(d.changeProducts, p.ID)
	}
	for u := range b.o.Users {
		id := fmt.Sprintf("user-%05d", u)
		d.users = append(d.users, id)
		lines := make([]domain.Product, cartLines)
		for j := range lines {
			lines[j] = regular[(u*cartLines+j)%len(regular)]
		}
		cart, err := b.cart(ctx, id, lines)
		if err != nil {
			return nil, err
		}
		if err := b.orders(ctx, cart); err != nil {
			return nil, err
		}
	}
	for k, pid := range d.changeProducts {
		target := d.products[len(regular)+k]
		for c := range b.o.CartsPerProduct {
			lines := []domain.Product{target}
			for j := range cartLines - 1 {
				lines = append(lines, regular[(k*b.o.CartsPerProduct+c+j)%len(regular)])
			}
			if _, err := b.cart(ctx, fmt.Sprintf("fanout-%s-%03d", pid, c), lines); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// product writes one product in both designs: the shop's document with its
// reviews embedded and its summary in productsByCategory, and the
// normalized one; its reviews go to `reviews` for both.
func (b *labBuilder) product(ctx context.Context, i int, categoryID string, names map[string]string) (domain.Product, error) {
	id := fmt.Sprintf("p-%05d", i)
	reviews := make([]domain.Review, 0, b.o.ReviewsPerProduct)
	for r := range b.o.ReviewsPerProduct {
		rv, err := b.repos.Reviews.Create(ctx, domain.Review{
			ProductID: id,
			UserID:    fmt.Sprintf("reviewer-%03d", r),
			UserName:  fmt.Sprintf("Reviewer %03d", r),
			Rating:    1 + (i+r)%5,
			Title:     fmt.Sprintf("Review %d of product %d", r, i),
			Body:      strings.Repeat("A fair description of how the product held up in daily use. ", 3),
			CreatedAt: b.now.Add(-time.Duration(r+1) * time.Hour),
		})
		if err != nil {
			return domain.Product{}, err
		}
		reviews = append(reviews, rv)
		b.step()
	}
	stats, top := domain.ComputeReviewStats(reviews)
	p := domain.Product{
		Meta:         domain.Meta{ID: id},
		Name:         fmt.Sprintf("Product %05d", i),
		Description:  strings.Repeat("Sturdy, well made and good value for the price. ", 4),
		CategoryID:   categoryID,
		CategoryName: names[categoryID],
		PriceCents:   int64(500 + 37*i%10000),
		Currency:     "EUR",
		PriceVersion: 1,
		ImageURL:     "/img/" + id + ".jpg",
		TopReviews:   top,
		ReviewStats:  stats,
		LastUpdated:  b.now,
		Version:      1,
	}
	p, err := b.repos.Products.Create(ctx, p)
	if err != nil {
		return domain.Product{}, err
	}
	if _, err := b.repos.ProductSummaries.Put(ctx, domain.SummaryOfProduct(p)); err != nil {
		return domain.Product{}, err
	}
	norm := normProduct{
		Meta:         domain.Meta{ID: id, Type: domain.TypeProduct, SchemaVersion: domain.SchemaVersion},
		Name:         p.Name,
		Description:  p.Description,
		CategoryID:   p.CategoryID,
		PriceCents:   p.PriceCents,
		Currency:     p.Currency,
		PriceVersion: p.PriceVersion,
		ImageURL:     p.ImageURL,
		LastUpdated:  p.LastUpdated,
	}
	if err := b.put(ctx, normProductsContainer, id, norm); err != nil {
		return domain.Product{}, err
	}
	b.step()
	return p, nil
}

// cart writes the user's cart in both designs.
func (b *labBuilder) cart(ctx context.Context, userID string, lines []domain.Product) (domain.Cart, error) {
	cart, err := b.repos.Carts.Update(ctx, userID, "", func(c *domain.Cart) error {
		for j, p := range lines {
			if err := c.SetQuantity(p, "", 1+j%3, b.now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return domain.Cart{}, err
	}
	norm := normCart{Meta: domain.Meta{ID: userID, Type: domain.TypeCart, SchemaVersion: domain.SchemaVersion}, UserID: userID}
	for _, l := range cart.Items {
		norm.Items = append(norm.Items, normCartLine{ProductID: l.ProductID, Quantity: l.Quantity})
	}
	if err := b.put(ctx, normCartsContainer, userID, norm); err != nil {
		return domain.Cart{}, err
	}
	b.step()
	return cart, nil
}

// orders places the user's order history: both designs read the same
// orders, one with a projected query, the other with lookups.
func (b *labBuilder) orders(ctx context.Context, cart domain.Cart) error {
	customer := domain.Customer{Name: cart.UserID, Email: cart.UserID + "@example.com"}
	addr := domain.Address{Name: cart.UserID, Line1: "1 Main Street", City: "Springfield", PostalCode: "12345", Country: "NL"}
	for k := range b.o.OrdersPerUser {
		at := b.now.Add(-time.Duration(k+1) * 24 * time.Hour)
		key := fmt.Sprintf("lab-%03d", k)
		o, err := domain.NewOrder(domain.OrderID(at, fmt.Sprintf("%s-%03d", cart.UserID, k)), cart, customer, addr, key, at)
		if err != nil {
			return err
		}
		o.Status = domain.StatusPlaced
		if _, err := b.repos.Orders.Open(ctx, o, domain.Idempotency{Key: key, RequestHash: key, CreatedAt: at}); err != nil {
			return err
		}
		b.step()
	}
	return nil
}
