package feedworkers_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// pausedRead is a store whose first read of one document, once armed,
// returns what it read only when released: a worker that read a version
// and was then overtaken by another worker with a newer one (two
// instances during a lease handover).
type pausedRead struct {
	store.Store
	container, id string

	once     sync.Once
	read     chan struct{} // closed once the paused read has read
	released chan struct{} // closed to let it return
}

func newPausedRead(st store.Store, container, id string) *pausedRead {
	return &pausedRead{Store: st, container: container, id: id, read: make(chan struct{}), released: make(chan struct{})}
}

func (p *pausedRead) Container(name string) store.Container {
	c := p.Store.Container(name)
	if name != p.container {
		return c
	}
	return pausedContainer{c, p}
}

type pausedContainer struct {
	store.Container
	p *pausedRead
}

func (c pausedContainer) Read(ctx context.Context, pk, id string) (store.ItemResponse, error) {
	r, err := c.Container.Read(ctx, pk, id)
	if id == c.p.id {
		c.p.pause()
	}
	return r, err
}

// Query pauses on a query of the partition named by id.
func (c pausedContainer) Query(ctx context.Context, q store.Query) (store.QueryPage, error) {
	page, err := c.Container.Query(ctx, q)
	if q.PartitionKey == c.p.id {
		c.p.pause()
	}
	return page, err
}

func (p *pausedRead) pause() {
	p.once.Do(func() {
		close(p.read)
		<-p.released
	})
}

// TestStatusViewOvertakenByANewerStatusConverges: a worker reads an order
// as shipped and pauses; meanwhile the order is delivered and another
// worker projects it; then the first writes its shipped summary. The view
// must end with the one delivered summary, not a shipped one besides it.
func TestStatusViewOvertakenByANewerStatusConverges(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	ctx := t.Context()
	p := createProduct(t, repos, "p1", "coffee", 1000)
	addToCart(t, repos, "u1", p, 1)
	o := placeOrder(t, repos, "u1", "o-1")
	fresh := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	if err := fresh.OrdersToStatusView(ctx, []domain.Order{o}); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Orders.SetStatus(ctx, "u1", "o-1", "", domain.StatusShipped, now); err != nil {
		t.Fatal(err)
	}

	paused := newPausedRead(st, store.OrdersContainer, "o-1")
	slow := feedworkers.NewHandlers(paused, writes.New(repo.New(paused, 0), nil, nil), feedworkers.HandlersConfig{})
	done := make(chan error)
	go func() { done <- slow.OrdersToStatusView(ctx, []domain.Order{o}) }()
	<-paused.read
	if _, err := repos.Orders.SetStatus(ctx, "u1", "o-1", "", domain.StatusDelivered, now); err != nil {
		t.Fatal(err)
	}
	if err := fresh.OrdersToStatusView(ctx, []domain.Order{o}); err != nil {
		t.Fatal(err)
	}
	close(paused.released)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	var held []string
	for _, status := range []string{domain.StatusPlaced, domain.StatusShipped, domain.StatusDelivered} {
		if _, err := repos.OrderSummaries.Get(ctx, repos.OrderSummaries.Key(status, o), "o-1"); err == nil {
			held = append(held, status)
		}
	}
	if len(held) != 1 || held[0] != domain.StatusDelivered {
		t.Errorf("the view holds the order as %v, want only delivered", held)
	}
}

// TestCategoryViewOvertakenByAMoveConverges: a worker reads a product in
// its first category and pauses; meanwhile the product moves and another
// worker puts its summary in the new category and deletes it from the
// old; then the first writes its summary in the old category. The view
// must end with the one summary, in the new category.
func TestCategoryViewOvertakenByAMoveConverges(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	ctx := t.Context()
	createProduct(t, repos, "p1", "coffee", 1000)
	name := "Tea"
	changeProduct(t, repos, "p1", domain.ProductChange{Name: &name})
	batch := func() changefeed.Batch {
		return changefeed.Batch{Items: [][]byte{raw(t, st, store.ProductsContainer, "p1", "p1")}}
	}
	fresh := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	paused := newPausedRead(st, store.ProductsContainer, "p1")
	slow := feedworkers.NewHandlers(paused, writes.New(repo.New(paused, 0), nil, nil), feedworkers.HandlersConfig{})
	done := make(chan error)
	first := batch()
	go func() { done <- slow.Products(ctx, first) }()
	<-paused.read
	tea, teaName := "tea", "Name of tea"
	changeProduct(t, repos, "p1", domain.ProductChange{CategoryID: &tea, CategoryName: &teaName})
	if err := fresh.Products(ctx, batch()); err != nil {
		t.Fatal(err)
	}
	close(paused.released)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, cat := range []string{"coffee", "tea"} {
		if _, err := repos.ProductSummaries.Get(ctx, cat, "p1"); err == nil {
			held = append(held, cat)
		}
	}
	if len(held) != 1 || held[0] != "tea" {
		t.Errorf("the view holds p1 in %v, want only tea", held)
	}
}

// TestReviewStatsOvertakenByANewerReviewConverge: a worker reads a
// product's reviews and pauses; meanwhile another review arrives and
// another worker writes the stats of both; then the first writes the stats
// of one. The product must keep the stats of its two reviews.
func TestReviewStatsOvertakenByANewerReviewConverge(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	ctx := t.Context()
	createProduct(t, repos, "p1", "coffee", 1000)
	review := func(user string, rating int) domain.Review {
		r, err := repos.Reviews.Create(ctx, domain.Review{Meta: domain.Meta{ID: domain.ReviewID(user)},
			ProductID: "p1", UserID: user, UserName: user, Rating: rating, Title: "t", Body: "b", CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := review("u1", 5)
	fresh := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	paused := newPausedRead(st, store.ReviewsContainer, "p1")
	slow := feedworkers.NewHandlers(paused, writes.New(repo.New(paused, 0), nil, nil), feedworkers.HandlersConfig{})
	done := make(chan error)
	go func() { done <- slow.ReviewsToProducts(ctx, []domain.Review{first}) }()
	<-paused.read
	second := review("u2", 1)
	if err := fresh.ReviewsToProducts(ctx, []domain.Review{second}); err != nil {
		t.Fatal(err)
	}
	close(paused.released)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p, err := repos.Products.Get(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if p.ReviewStats.Count != 2 || len(p.TopReviews) != 2 {
		t.Errorf("the product shows %d reviews (%d top reviews), it has 2", p.ReviewStats.Count, len(p.TopReviews))
	}
}

// TestFeaturedOvertakenBySoldOutConverges: a worker reads a product when
// it rates above the featured ones and pauses; meanwhile it sells out and
// another worker applies that (the product is not featured, so nothing
// changes); then the first places the product it read in the featured
// list. The home page must not feature a sold-out product.
func TestFeaturedOvertakenBySoldOutConverges(t *testing.T) {
	c := newCatalog(t)
	ctx := t.Context()
	createProduct(t, c.repos, "p3", "coffee", 900)
	if _, err := c.repos.Products.UpdateAny(ctx, "p3", func(p *domain.Product) error {
		p.ReviewStats = domain.ReviewStats{Count: 20, Average: 4.9}
		p.Version++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	batch := changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p3")}}
	paused := newPausedRead(c.st, store.ProductsContainer, "p3")
	slow := feedworkers.NewHandlers(paused, writes.New(repo.New(paused, 0), nil, nil), feedworkers.HandlersConfig{})
	done := make(chan error)
	go func() { done <- slow.Products(ctx, batch) }()
	<-paused.read
	if _, err := c.repos.Products.UpdateAny(ctx, "p3", func(p *domain.Product) error {
		p.Availability = domain.Availability{Status: domain.SoldOut, SourceVersion: 9}
		p.Version++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.h.Products(ctx, changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p3")}}); err != nil {
		t.Fatal(err)
	}
	close(paused.released)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cats, err := c.repos.Products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cats.Featured {
		if f.ID == "p3" {
			t.Errorf("the home page features p3, which is sold out: %+v", cats.Featured)
		}
	}
}

// TestReplayAfterACrashMidMoveRecountsTheCategoryLeft: a worker applying a
// move deleted the product's summary in the category it left and died
// before it counted and ranked that category again; before the batch is
// replayed the product moves on again, so its previousCategoryId no
// longer names the first category. The replay must still leave that
// category with the right count and without the product featured.
func TestReplayAfterACrashMidMoveRecountsTheCategoryLeft(t *testing.T) {
	c := newCatalog(t)
	ctx := t.Context()
	tea, herbal := "tea", "herbal"
	if _, err := c.repos.Products.UpdateCategories(ctx, "", func(cs *domain.Categories) error {
		cs.Items = append(cs.Items, domain.Category{ID: herbal, Name: "Herbal"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	changeProduct(t, c.repos, "p2", domain.ProductChange{CategoryID: &tea})
	// The worker of the move got as far as the delete in coffee.
	if err := c.repos.ProductSummaries.Delete(ctx, "coffee", "p2"); err != nil {
		t.Fatal(err)
	}
	changeProduct(t, c.repos, "p2", domain.ProductChange{CategoryID: &herbal})
	if err := c.h.Products(ctx, changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p2")}, MayBeReplay: true}); err != nil {
		t.Fatal(err)
	}
	cats, err := c.repos.Products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, cat := range cats.Items {
		if cat.ID == "coffee" && cat.ProductCount != 1 {
			t.Errorf("coffee counts %d products, it holds 1", cat.ProductCount)
		}
	}
	for _, f := range cats.Featured {
		if f.ID == "p2" && f.CategoryID != herbal {
			t.Errorf("p2 is featured in %s, it is in %s", f.CategoryID, herbal)
		}
	}
}

// TestCartLineOfAVersionTheFeedSkippedIsRefreshed: a cart copies a
// product version the feed never delivers (latest-version mode hands over
// only the newest), and the newest version's copy equals what the last
// fan-out pushed: the cart must still end with the newest copy.
func TestCartLineOfAVersionTheFeedSkippedIsRefreshed(t *testing.T) {
	c := newCatalog(t)
	ctx := t.Context()
	apply := func() {
		t.Helper()
		if err := c.h.Products(ctx, changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p2")}}); err != nil {
			t.Fatal(err)
		}
	}
	setPrice(t, c.repos, "p2", 600)
	apply() // fans out, and records the copy pushed
	black, green := "Black Tea", "Name of p2"
	v3 := changeProduct(t, c.repos, "p2", domain.ProductChange{Name: &black})
	addToCart(t, c.repos, "u3", v3, 1) // the cart PUT copies version 3
	changeProduct(t, c.repos, "p2", domain.ProductChange{Name: &green})
	apply() // the feed delivers version 4 only
	cart, err := c.repos.Carts.Get(ctx, "u3")
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := cart.Line("p2", ""); l.Name != green {
		t.Errorf("u3's line of p2 is named %q, the product %q", l.Name, green)
	}
}

// TestFeaturedSkipsSoldOutProductsHoweverMany: the best-rated products
// of a category are sold out; when the category is ranked again the home
// page still features the best ones in stock.
func TestFeaturedSkipsSoldOutProductsHoweverMany(t *testing.T) {
	c := newCatalog(t)
	ctx := t.Context()
	createProduct(t, c.repos, "p0", "coffee", 100)
	batch := [][]byte{c.raw(t, "products", "p0")}
	for _, id := range []string{"p3", "p4", "p5"} {
		createProduct(t, c.repos, id, "coffee", 100)
		if _, err := c.repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
			p.Availability = domain.Availability{Status: domain.SoldOut, SourceVersion: 1}
			p.Version++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		batch = append(batch, c.raw(t, "products", id))
	}
	if err := c.h.Products(ctx, changefeed.Batch{Items: batch}); err != nil {
		t.Fatal(err)
	}
	// p1, featured, goes: coffee is ranked again. By rating score (no
	// reviews: a tie) then id, p5, p4 and p3 come first, all sold out.
	if _, err := c.repos.Products.UpdateAny(ctx, "p1", func(p *domain.Product) error {
		p.SoftDelete(60, now)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.h.Products(ctx, changefeed.Batch{Items: [][]byte{c.raw(t, "products", "p1")}}); err != nil {
		t.Fatal(err)
	}
	cats, err := c.repos.Products.Categories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range cats.Featured {
		if f.CategoryID == "coffee" {
			ids = append(ids, f.ID)
		}
	}
	if want := []string{"p2", "p0"}; !slices.Equal(ids, want) {
		t.Errorf("coffee features %v, want %v (p3 to p5 rank above them, and are sold out)", ids, want)
	}
}
