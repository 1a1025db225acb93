package feedworkers_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/feedworkers/changefeed"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// searchWords are the words the model draws names, category names, tags
// and queries from: plurals, diacritics, case and a stop word, so that
// the folds are exercised on both sides.
var searchWords = []string{"Red", "red", "blue", "Mug", "mugs", "Café", "cafe", "lamp", "lamps", "glass",
	"glasses", "berry", "berries", "the", "Ångström", "oak", "OAK", "garden", "box", "boxes"}

// searchCategories are the model's categories; a category's name is
// searched too.
var searchCategories = []domain.Category{
	{ID: "kitchen", Name: "Kitchen Mugs"},
	{ID: "garden", Name: "Garden & Café"},
	{ID: "lights", Name: "Lamps"},
}

// searchModel is the shop as the test changed it: every version of every
// product it wrote, as the change feed could deliver them.
type searchModel struct {
	st       store.Store
	repos    *repo.Set
	h        *feedworkers.Handlers
	versions [][]byte                    // every product version written, raw
	pending  int                         // versions[pending:] are not delivered yet
	byID     map[string][]domain.Product // each product's versions, oldest first
	live     []string                    // ids of the products not deleted
}

func phrase(t *rapid.T, label string, n int) string {
	return strings.Join(rapid.SliceOfN(rapid.SampledFrom(searchWords), 1, n).Draw(t, label), " ")
}

// fataler is what the helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func (m *searchModel) record(tb fataler, st store.Store, p domain.Product) {
	tb.Helper()
	r, err := st.Container(store.ProductsContainer).Read(context.Background(), p.ID, p.ID)
	if err != nil {
		tb.Fatalf("read %s: %v", p.ID, err)
	}
	m.versions = append(m.versions, r.Item)
	m.byID[p.ID] = append(m.byID[p.ID], p)
}

// deliver is the feed catching up: the versions not delivered yet and a
// few already delivered (the feed delivers at least once), shuffled, in
// batches of random sizes, some marked as replays.
func (m *searchModel) deliver(t *rapid.T) {
	if len(m.versions) == 0 {
		return
	}
	var idx []int
	for i := m.pending; i < len(m.versions); i++ {
		idx = append(idx, i)
	}
	idx = append(idx, rapid.SliceOfN(rapid.IntRange(0, len(m.versions)-1), 0, 3).Draw(t, "duplicates")...)
	feed := rapid.Permutation(idx).Draw(t, "order")
	m.stale(t)
	for len(feed) > 0 {
		n := rapid.IntRange(1, len(feed)).Draw(t, "batch")
		b := changefeed.Batch{MayBeReplay: rapid.Bool().Draw(t, "replay")}
		for _, v := range feed[:n] {
			b.Items = append(b.Items, m.versions[v])
		}
		if err := m.h.Products(context.Background(), b); err != nil {
			t.Fatalf("products batch: %v", err)
		}
		feed = feed[n:]
	}
	m.pending = len(m.versions)
	m.stale(t)
}

// stale hands the search handler a few versions directly, older ones
// included, as a late duplicate or a worker still holding an old version
// would: the version guards must keep the index exact.
func (m *searchModel) stale(t *rapid.T) {
	for range rapid.IntRange(0, 2).Draw(t, "stale") {
		id := rapid.SampledFrom(slices.Sorted(maps.Keys(m.byID))).Draw(t, "stale product")
		old := rapid.SampledFrom(m.byID[id]).Draw(t, "stale version")
		if err := m.h.ProductToSearch(context.Background(), old); err != nil {
			t.Fatalf("stale version: %v", err)
		}
	}
}

// expected is the brute-force answer: the live products holding every
// term of q, in the stated order (domain.SearchRank, then id).
func (m *searchModel) expected(tb fataler, terms []string) []string {
	tb.Helper()
	type hit struct{ rank, id string }
	var hits []hit
	for _, id := range m.live {
		p, err := m.repos.Products.Get(context.Background(), id)
		if err != nil {
			tb.Fatalf("product %s: %v", id, err)
		}
		held := domain.SearchTerms(p)
		if !slices.ContainsFunc(terms, func(t string) bool { return !slices.Contains(held, t) }) {
			hits = append(hits, hit{domain.SearchRank(domain.ShownRating(p.ReviewStats.Average), p.Name), p.ID})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id)) })
	ids := []string{}
	for _, h := range hits {
		ids = append(ids, h.id)
	}
	return ids
}

// search reads every page of q, checking each is one store operation.
func search(tb fataler, idx *repo.SearchIndex, terms []string, limit int) []string {
	tb.Helper()
	ids := []string{}
	cont := ""
	for {
		ctx, meter := store.WithMeter(context.Background())
		raw, err := idx.Search(ctx, terms, limit, cont)
		if err != nil {
			tb.Fatalf("search %v: %v", terms, err)
		}
		page, err := raw.Decode()
		next := raw.Next
		if err != nil {
			tb.Fatalf("search %v: %v", terms, err)
		}
		if ops, _, _ := meter.Totals(); ops != 1 {
			tb.Fatalf("search %v: a page cost %d store operations, want 1", terms, ops)
		}
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		if next == "" {
			return ids
		}
		cont = next
	}
}

// shows checks that every entry of every live product shows the card of
// its current version, whatever version wrote it.
func (m *searchModel) shows(tb fataler) {
	tb.Helper()
	for _, id := range m.live {
		p, err := m.repos.Products.Get(context.Background(), id)
		if err != nil {
			tb.Fatalf("product %s: %v", id, err)
		}
		for _, term := range domain.SearchTerms(p) {
			e, err := repo.ReadDoc[domain.SearchEntry](context.Background(), m.st.Container(store.ProductsByTermContainer), term, id)
			if err != nil {
				tb.Fatalf("entry of %s under %s: %v", id, term, err)
			}
			if want := domain.SearchCardOf(p); e.Type != domain.TypeSearchEntry || e.SearchCard != want || e.SourceVersion > p.Version {
				tb.Fatalf("entry of %s under %s is %s v%d %+v, want v%d's card %+v", id, term, e.Type, e.SourceVersion, e.SearchCard, p.Version, want)
			}
		}
	}
}

// TestSearchIndexMatchesBruteForce is the model-based test of the index:
// random creates, renames, category moves, tag changes, price changes
// (between two prices, so a version often shows what an earlier one did),
// reviews (the rating moves, often within the same half star) and
// deletes, and now and then the feed catching up: it delivers the versions
// written since, shuffled, with duplicates, in batches of random sizes
// (some marked as replays), while stale versions reach the handler
// directly. Once the feed has caught up, every entry shows its product's
// current card, and every random query of one to three words returns
// exactly the brute-force filter over all products, in the stated order,
// one store operation per page.
func TestSearchIndexMatchesBruteForce(tt *testing.T) {
	rapid.Check(tt, func(t *rapid.T) {
		st, err := embedded.Open(filepath.Join(tt.TempDir(), "shop.db"), embedded.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		if err := migrations.Apply(ctx, st, io.Discard); err != nil {
			t.Fatal(err)
		}
		repos := repo.New(store.Metered(st), 0)
		if _, err := repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
			c.Items = slices.Clone(searchCategories)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		m := &searchModel{st: st, repos: repos, h: feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{}), byID: map[string][]domain.Product{}}
		change := func(id string, ch domain.ProductChange) {
			p, err := repos.Products.Update(ctx, id, "", func(p *domain.Product) error {
				p.Apply(ch, now)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			m.record(t, st, p)
		}
		steps := rapid.IntRange(1, 25).Draw(t, "steps")
		for i := range steps {
			op := rapid.IntRange(0, 7).Draw(t, "op")
			if len(m.live) == 0 {
				op = 0
			}
			switch op {
			case 6:
				m.deliver(t)
			case 7:
				id := rapid.SampledFrom(m.live).Draw(t, "reviewed")
				p, err := repos.Products.UpdateAny(ctx, id, func(p *domain.Product) error {
					p.ReviewStats.Count++
					p.ReviewStats.Average = float64(rapid.IntRange(380, 460).Draw(t, "average")) / 100
					p.Version++
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				m.record(t, st, p)
			case 0:
				cat := rapid.SampledFrom(searchCategories).Draw(t, "category")
				p := domain.Product{
					Meta: domain.Meta{ID: fmt.Sprintf("p-%03d", i)}, Name: phrase(t, "name", 3),
					CategoryID: cat.ID, CategoryName: cat.Name, Tags: rapid.SliceOfN(rapid.SampledFrom(searchWords), 0, 3).Draw(t, "tags"),
					PriceCents: 100, Currency: "USD", PriceVersion: 1, Version: 1, LastUpdated: now,
				}
				p.KeepImage() // as the API creates it, so a price change back shows what the product showed
				p, err := repos.Products.Create(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				m.record(t, st, p)
				m.live = append(m.live, p.ID)
			case 1:
				name := phrase(t, "name", 3)
				change(rapid.SampledFrom(m.live).Draw(t, "renamed"), domain.ProductChange{Name: &name})
			case 2:
				cat := rapid.SampledFrom(searchCategories).Draw(t, "category")
				change(rapid.SampledFrom(m.live).Draw(t, "moved"), domain.ProductChange{CategoryID: &cat.ID, CategoryName: &cat.Name})
			case 3:
				tags := rapid.SliceOfN(rapid.SampledFrom(searchWords), 0, 3).Draw(t, "tags")
				change(rapid.SampledFrom(m.live).Draw(t, "tagged"), domain.ProductChange{Tags: &tags})
			case 4:
				price := rapid.SampledFrom([]int64{100, 200}).Draw(t, "price")
				change(rapid.SampledFrom(m.live).Draw(t, "priced"), domain.ProductChange{PriceCents: &price})
			case 5:
				id := rapid.SampledFrom(m.live).Draw(t, "deleted")
				p, err := repos.Products.Update(ctx, id, "", func(p *domain.Product) error {
					p.SoftDelete(3600, now)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				m.record(t, st, p)
				m.live = slices.DeleteFunc(m.live, func(s string) bool { return s == id })
			}
		}

		m.deliver(t)
		m.shows(t)
		for range 10 {
			terms, err := domain.ParseQuery(phrase(t, "query", 3))
			if err != nil {
				continue // only stop words
			}
			want := m.expected(t, terms)
			got := search(t, repos.Search, terms, rapid.IntRange(1, 4).Draw(t, "limit"))
			if !slices.Equal(got, want) {
				t.Fatalf("search %v = %v, brute force = %v", terms, got, want)
			}
		}
	})
}

// TestSearchReplayWritesNothing: a batch applied twice leaves the index
// as the first application wrote it, the second a read per product.
func TestSearchReplayWritesNothing(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	ctx := context.Background()
	if _, err := repos.Products.UpdateCategories(ctx, "", func(c *domain.Categories) error {
		// Named as the product's copy names it (createProduct): a copy
		// the index contradicts is corrected, which is a write.
		c.Items = []domain.Category{{ID: "kitchen", Name: "Name of kitchen"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, func() time.Time { return now }), feedworkers.HandlersConfig{Now: func() time.Time { return now }})
	p := createProduct(t, repos, "p-1", "kitchen", 500)
	name := "Blue glasses"
	changeProduct(t, repos, p.ID, domain.ProductChange{Name: &name})
	batch := changefeed.Batch{Items: [][]byte{raw(t, st, store.ProductsContainer, p.ID, p.ID)}}
	if err := h.Products(ctx, batch); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st, store.ProductsByTermContainer)
	batch.MayBeReplay = true
	if err := h.Products(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, st, store.ProductsByTermContainer); !slices.Equal(before, after) {
		t.Errorf("the replay changed the index:\nbefore %v\nafter  %v", before, after)
	}
	if got := search(t, repos.Search, []string{"glass"}, 10); !slices.Equal(got, []string{"p-1"}) {
		t.Errorf("search glass = %v, want [p-1]", got)
	}
}

// TestSearchIgnoresAVersionOlderThanTheIndexed: the feed skipped v2 (a
// rename adding a word), v3 took the word away again and was indexed;
// then v2 reaches the handler late. The word must not come back.
func TestSearchIgnoresAVersionOlderThanTheIndexed(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	ctx := context.Background()
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, func() time.Time { return now }), feedworkers.HandlersConfig{Now: func() time.Time { return now }})
	v1 := createProduct(t, repos, "p-1", "kitchen", 500)
	if err := h.ProductToSearch(ctx, v1); err != nil {
		t.Fatal(err)
	}
	withWalnut, plain := "Walnut bowl", v1.Name
	v2 := changeProduct(t, repos, v1.ID, domain.ProductChange{Name: &withWalnut})
	v3 := changeProduct(t, repos, v1.ID, domain.ProductChange{Name: &plain})
	for _, p := range []domain.Product{v3, v2} {
		if err := h.ProductToSearch(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := search(t, repos.Search, []string{"walnut"}, 10); len(got) != 0 {
		t.Errorf("search walnut = %v after v3 dropped the word, want none", got)
	}
	if got := search(t, repos.Search, []string{"name", "p"}, 10); !slices.Equal(got, []string{"p-1"}) {
		t.Errorf("search name p = %v, want [p-1]", got)
	}
}

// rate sets the product's review stats, as the reviews feed does after a
// review: a new product version that changes nothing else.
func rate(tb testing.TB, repos *repo.Set, id string, count int, average float64) domain.Product {
	tb.Helper()
	p, err := repos.Products.UpdateAny(context.Background(), id, func(p *domain.Product) error {
		p.ReviewStats.Count, p.ReviewStats.Average = count, average
		p.Version++
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestSearchWritesNothingForAReviewItsResultsDoNotShow: a review that
// leaves the rating a result shows as it was (4.44, then 4.32: four and a
// half stars both) costs the index step two reads, the ledger and the
// entry written last, and writes nothing: the entries copy no review
// count and no exact average.
func TestSearchWritesNothingForAReviewItsResultsDoNotShow(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	createProduct(t, repos, "p-1", "kitchen", 500)
	if err := h.ProductToSearch(t.Context(), rate(t, repos, "p-1", 4, 4.44)); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st, store.ProductsByTermContainer)
	p := rate(t, repos, "p-1", 5, 4.32)
	ctx, m := store.WithMeter(t.Context())
	if err := h.ProductToSearch(ctx, p); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, st, store.ProductsByTermContainer); !slices.Equal(before, after) {
		t.Errorf("a review the results do not show rewrote the index:\nbefore %v\nafter  %v", before, after)
	}
	if ops, ru, _ := m.Totals(); ops != 2 {
		t.Errorf("index step: %d store operations (%.2f RU), want 2 (the ledger's read, the last entry's)", ops, ru)
	}
}

// TestSearchIgnoresAnOlderVersionAfterASkip: v4 sets the price back to
// v2's, so the index already shows v4 and writes nothing for it; then v3
// (the other price) reaches the handler late, as a worker that read the
// product before v4 was written would hand it. Nothing claimed the ledger
// for v4, yet the results must not show v3's price.
func TestSearchIgnoresAnOlderVersionAfterASkip(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	v1 := createProduct(t, repos, "p-1", "kitchen", 500)
	v2 := setPrice(t, repos, v1.ID, 600) // also draws its picture: v1 has none
	v3 := setPrice(t, repos, v1.ID, 700)
	v4 := setPrice(t, repos, v1.ID, 600)
	for i, p := range []domain.Product{v2, v4, v3} {
		ctx, m := store.WithMeter(t.Context())
		if err := h.ProductToSearch(ctx, p); err != nil {
			t.Fatal(err)
		}
		if ops, _, _ := m.Totals(); i == 1 && ops != 2 {
			t.Fatalf("v4, which shows what v2 did, cost %d store operations, want 2: the skip this test is about did not happen", ops)
		}
	}
	for _, term := range domain.SearchTerms(v4) {
		raw, err := repos.Search.Search(t.Context(), []string{term}, 10, "")
		if err != nil {
			t.Fatal(err)
		}
		page, err := raw.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 1 || page[0].PriceCents != 600 {
			t.Errorf("search %s = %+v, want p-1 at 600 cents", term, page)
		}
	}
}

// TestSearchRewritesWhenTheShownRatingChanges: a review that moves the
// rating to another half star (4.32, four and a half stars, to 4.2, four)
// rewrites the entry under every term, and the product falls behind one
// that still shows four and a half.
func TestSearchRewritesWhenTheShownRatingChanges(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	createProduct(t, repos, "p-1", "kitchen", 500)
	createProduct(t, repos, "p-2", "kitchen", 500)
	for _, p := range []domain.Product{rate(t, repos, "p-1", 5, 4.32), rate(t, repos, "p-2", 9, 4.4)} {
		if err := h.ProductToSearch(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := search(t, repos.Search, []string{"kitchen"}, 10), []string{"p-1", "p-2"}; !slices.Equal(got, want) {
		t.Fatalf("search kitchen = %v, want %v (both 4.5 stars, then by name)", got, want)
	}
	p := rate(t, repos, "p-1", 6, 4.2)
	if err := h.ProductToSearch(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	terms := domain.SearchTerms(p)
	for _, term := range terms {
		e, err := repo.ReadDoc[domain.SearchEntry](t.Context(), st.Container(store.ProductsByTermContainer), term, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if e.Rating != 4 || e.SourceVersion != p.Version || e.Rank != domain.SearchRank(4, p.Name) {
			t.Errorf("entry under %s: rating %v v%d rank %q, want 4 v%d %q", term, e.Rating, e.SourceVersion, e.Rank, p.Version, domain.SearchRank(4, p.Name))
		}
	}
	if got, want := search(t, repos.Search, []string{"kitchen"}, 10), []string{"p-2", "p-1"}; !slices.Equal(got, want) {
		t.Errorf("search kitchen = %v, want %v (p-1 now shows 4 stars)", got, want)
	}
	l, err := repos.Search.Ledger(t.Context(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := domain.SearchFingerprint(p); l.Version != p.Version || l.Shown != want {
		t.Errorf("ledger v%d shows %q, want v%d %q", l.Version, l.Shown, p.Version, want)
	}
}

// TestSearchFinishesAClaimThatStoppedHalfWay: a step that claimed the
// ledger for v2 (a new price) and stopped after its first entry, as a
// crash leaves it, does not let v3 (a review within the same half star,
// so v2's fingerprint) skip: the entry written last does not hold v2, so
// v3 writes every entry.
func TestSearchFinishesAClaimThatStoppedHalfWay(t *testing.T) {
	st := newStore(t)
	repos := repo.New(st, 0)
	h := feedworkers.NewHandlers(st, writes.New(repo.New(st, 0), nil, nil), feedworkers.HandlersConfig{})
	ctx := t.Context()
	createProduct(t, repos, "p-1", "kitchen", 500)
	v1 := rate(t, repos, "p-1", 4, 4.44)
	if err := h.ProductToSearch(ctx, v1); err != nil {
		t.Fatal(err)
	}
	v2 := setPrice(t, repos, "p-1", 600)
	terms := domain.SearchTerms(v2)
	from, err := repos.Search.Ledger(ctx, v2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Search.Widen(ctx, v2.ID, v2.Version, terms, domain.SearchFingerprint(v2), &from); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Search.Put(ctx, domain.EntryOfProduct(v2, terms[0], terms)); err != nil {
		t.Fatal(err)
	}
	v3 := rate(t, repos, "p-1", 5, 4.32)
	if domain.SearchFingerprint(v3) != domain.SearchFingerprint(v2) {
		t.Fatal("v3 must show what v2 shows")
	}
	if err := h.ProductToSearch(ctx, v3); err != nil {
		t.Fatal(err)
	}
	for _, term := range terms {
		e, err := repos.Search.Entry(ctx, term, v3.ID)
		if err != nil {
			t.Fatal(err)
		}
		if e.PriceCents != 600 {
			t.Errorf("entry under %s at %d cents (v%d), want 600", term, e.PriceCents, e.SourceVersion)
		}
	}
}
