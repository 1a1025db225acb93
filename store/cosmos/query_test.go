package cosmos

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The query shapes the shop runs, one golden file each: the SQL text and
// its parameters. A change in rendering shows up as a diff in review.
var queryShapes = []struct {
	name string
	q    store.Query
}{
	// repo.ProductSummaries.Page, sort by name and by price.
	{"category_page_by_name", store.Query{
		PartitionKey: "books", OrderBy: "name", Limit: 20,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProductSummary}},
	}},
	{"category_page_by_price", store.Query{
		PartitionKey: "books", OrderBy: "priceCents", Limit: 20,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProductSummary}},
	}},
	// repo.ProductSummaries.Best: the featured products of a category.
	{"category_best_rated", store.Query{
		PartitionKey: "books", OrderBy: "ratingScore", Desc: true, Limit: 4,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeProductSummary}},
	}},
	// repo.ProductSummaries.IDs and repo.Reviews.DeleteAll: ids only.
	{"ids_of_a_partition", store.Query{PartitionKey: "books", Select: []string{"id"}, Limit: store.MaxQueryPageSize}},
	// repo.Reviews.Page.
	{"reviews_newest_first", store.Query{
		PartitionKey: "p1", OrderBy: "createdAt", Desc: true, Limit: 10,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeReview}},
	}},
	// repo.Orders.Page: the history list's projection.
	{"order_history", store.Query{
		PartitionKey: "u1", OrderBy: "createdAt", Desc: true, Limit: 20,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder}},
		Select:  []string{"id", "createdAt", "status", "itemCount", "totalCents"},
	}},
	// repo.OrderSummaries.Page.
	{"orders_by_status_day", store.Query{
		PartitionKey: "placed:2026-11-29", OrderBy: "createdAt", Desc: true, Limit: 100,
		Filters: []store.Filter{{Path: "type", Op: store.OpEqual, Value: domain.TypeOrderSummary}},
	}},
	// repo.SearchIndex.Search: a two-word search, the other word filtered.
	{"search_two_words", store.Query{
		PartitionKey: "espresso", OrderBy: "rank", Limit: 20,
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeSearchEntry},
			{Path: "terms", Op: store.OpArrayContains, Value: "cup"},
		},
	}},
	// repo.Carts.WithProduct: the one cross-partition query.
	{"carts_holding_product", store.Query{
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeCart},
			{Path: "productIds", Op: store.OpArrayContains, Value: "p1"},
		},
	}},
	// Shapes the port allows that the shop does not run today.
	{"several_filters_with_projection", store.Query{
		PartitionKey: "u1", Select: []string{"id", "status", "totalCents"},
		Filters: []store.Filter{
			{Path: "type", Op: store.OpEqual, Value: domain.TypeOrder},
			{Path: "status", Op: store.OpEqual, Value: domain.StatusPlaced},
			{Path: "productIds", Op: store.OpArrayContains, Value: "p9"},
		},
	}},
	{"projection_adds_id", store.Query{PartitionKey: "p0", Select: []string{"n", "kind"}}},
	{"order_by_id_only", store.Query{PartitionKey: "books", OrderBy: "id"}},
	{"whole_documents", store.Query{PartitionKey: "books"}},
	{"reserved_word_property", store.Query{
		PartitionKey: "k", Select: []string{"id", "value"}, OrderBy: "order",
		Filters: []store.Filter{{Path: "value", Op: store.OpEqual, Value: 3}},
	}},
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range queryShapes {
		t.Run(tc.name, func(t *testing.T) {
			sq, err := render(tc.q)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			got := goldenText(t, sq)
			path := filepath.Join("testdata", "query", tc.name+".sql")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./store/cosmos -run TestRenderGolden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("rendered SQL differs from %s:\n got: %s\nwant: %s", path, got, want)
			}
		})
	}
}

// goldenText is the SQL on the first line, then one line per parameter.
func goldenText(t *testing.T, sq sqlQuery) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(sq.Text + "\n")
	for _, p := range sq.Params {
		v, err := json.Marshal(p.Value)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "-- %s = %s\n", p.Name, v)
	}
	return b.String()
}

// Values travel only as parameters: a hostile value leaves the text alone.
func TestRenderKeepsValuesOutOfTheText(t *testing.T) {
	hostile := `x" OR 1=1 --`
	sq, err := render(store.Query{
		PartitionKey: "u1",
		Filters:      []store.Filter{{Path: "name", Op: store.OpEqual, Value: hostile}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sq.Text, "SELECT * FROM c WHERE c.name = @p0"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if got, want := sq.Params[0].Value, any(hostile); got != want {
		t.Errorf("param = %v, want %v", got, want)
	}
}

// Property names cannot be parameters, so anything but an identifier is
// refused before it reaches the text.
func TestRenderRefusesBadNames(t *testing.T) {
	tests := []struct {
		name string
		q    store.Query
	}{
		{"filter path with a quote", store.Query{Filters: []store.Filter{{Path: `name"]`, Op: store.OpEqual, Value: 1}}}},
		{"nested path", store.Query{Filters: []store.Filter{{Path: "a.b", Op: store.OpEqual, Value: 1}}}},
		{"empty path", store.Query{Filters: []store.Filter{{Path: "", Op: store.OpEqual, Value: 1}}}},
		{"order by injection", store.Query{PartitionKey: "p", OrderBy: "name; DROP"}},
		{"cross-partition order by", store.Query{OrderBy: "name"}},
		{"select with space", store.Query{Select: []string{"id", "name DESC"}}},
		{"leading digit", store.Query{Select: []string{"1id"}}},
		{"unknown operator", store.Query{Filters: []store.Filter{{Path: "name", Op: "LIKE", Value: "%"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(tc.q)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code = %q (%v), want %q", got, err, want)
			}
		})
	}
}

// orderedShapeContainers names the container of each ordered query shape
// the shop runs.
var orderedShapeContainers = map[string]string{
	"category_page_by_name":  store.ProductsByCategoryContainer,
	"category_page_by_price": store.ProductsByCategoryContainer,
	"category_best_rated":    store.ProductsByCategoryContainer,
	"reviews_newest_first":   store.ReviewsContainer,
	"order_history":          store.OrdersContainer,
	"orders_by_status_day":   store.OrdersByStatusContainer,
	"search_two_words":       store.ProductsByTermContainer,
}

// TestEveryCompositeIndexServesAQuery: a composite index serves only an
// ORDER BY that matches it exactly, in its order or fully reversed
// (index-composite), and every one costs index terms on each write of an
// item that has its paths. So each composite index the migrations declare
// must be the one of an ordered query the shop runs.
func TestEveryCompositeIndexServesAQuery(t *testing.T) {
	for _, def := range migrations.Containers {
		for _, ci := range def.IndexingPolicy.CompositeIndexes {
			served := false
			for _, tc := range queryShapes {
				if orderedShapeContainers[tc.name] != def.ID {
					continue
				}
				order, reversed := "ascending", "descending"
				if tc.q.Desc {
					order, reversed = reversed, order
				}
				for _, dir := range []string{order, reversed} {
					if slices.Equal(ci, []store.CompositePath{{Path: "/" + tc.q.OrderBy, Order: dir}, {Path: "/id", Order: dir}}) {
						served = true
					}
				}
			}
			if !served {
				t.Errorf("container %s: composite index %v serves no ORDER BY the shop runs (each is rendered ORDER BY c.x, c.id)", def.ID, ci)
			}
		}
	}
}

// A two-property ORDER BY fails on Cosmos without a composite index that
// matches it (index-composite), in the same or the fully reversed order.
// The shop's ordered queries are checked against the migrations here, as
// the vNext emulator does not enforce indexing policies.
func TestOrderedQueriesHaveCompositeIndexes(t *testing.T) {
	containerOf := orderedShapeContainers
	defs := map[string]store.ContainerDef{}
	for _, d := range migrations.Containers {
		defs[d.ID] = d
	}
	for _, tc := range queryShapes {
		container, ok := containerOf[tc.name]
		if !ok {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			order, reversed := "ascending", "descending"
			if tc.q.Desc {
				order, reversed = reversed, order
			}
			want := []store.CompositePath{{Path: "/" + tc.q.OrderBy, Order: order}, {Path: "/id", Order: order}}
			wantReversed := []store.CompositePath{{Path: "/" + tc.q.OrderBy, Order: reversed}, {Path: "/id", Order: reversed}}
			for _, ci := range defs[container].IndexingPolicy.CompositeIndexes {
				if slices.Equal(ci, want) || slices.Equal(ci, wantReversed) {
					return
				}
			}
			t.Errorf("container %s has no composite index %v for ORDER BY %s", container, want, tc.q.OrderBy)
		})
	}
}
