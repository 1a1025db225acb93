package embedded

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/reference-shop/shop/store"
)

var update = flag.Bool("update", false, "rewrite the table of published Request Unit figures in docs/cosmos.md")

// A publishedFigure is a Request Unit charge Microsoft publishes for an
// operation of a known shape, beside what charge.go estimates for that
// shape.
type publishedFigure struct {
	operation string  // what was measured, and its shape
	published float64 // RU, as the page gives it
	estimate  float64 // RU, from the charge functions
	source    string  // the page's name
	url       string
}

// Pages the figures come from.
const (
	pageOptimizeCost = "https://learn.microsoft.com/azure/cosmos-db/optimize-cost-reads-writes"
	pageKeyValueCost = "https://learn.microsoft.com/azure/cosmos-db/key-value-store-cost"
	pageModelExample = "https://learn.microsoft.com/azure/cosmos-db/nosql/model-partition-example"
	pageGetStarted   = "https://docs.microsoft.com/azure/cosmos-db/sql-api-get-started"
	pageQueryTrouble = "https://learn.microsoft.com/azure/cosmos-db/nosql/troubleshoot-query-performance"
)

// Documents of the shapes the pages show, with short values where they
// show placeholders (each under 1 KB).
const (
	userDoc    = `{"id":"u1","username":"alice"}`
	postV1Doc  = `{"id":"p1","type":"post","postId":"p1","userId":"u1","title":"Hello","content":"First post.","creationDate":"2019-01-01T00:00:00Z"}`
	commentV1  = `{"id":"c1","type":"comment","postId":"p1","userId":"u2","content":"Nice.","creationDate":"2019-01-01T00:00:00Z"}`
	likeV1     = `{"id":"l1","type":"like","postId":"p1","userId":"u2","creationDate":"2019-01-01T00:00:00Z"}`
	postV2Doc  = `{"id":"p1","type":"post","postId":"p1","userId":"u1","userUsername":"alice","title":"Hello","content":"First post.","commentCount":3,"likeCount":5,"creationDate":"2019-01-01T00:00:00Z"}`
	commentV2  = `{"id":"c1","type":"comment","postId":"p1","userId":"u2","userUsername":"bob","content":"Nice.","creationDate":"2019-01-01T00:00:00Z"}`
	likeV2     = `{"id":"l1","type":"like","postId":"p1","userId":"u2","userUsername":"bob","creationDate":"2019-01-01T00:00:00Z"}`
	andersen   = `{"id":"Andersen.1","LastName":"Andersen","Parents":[{"FamilyName":null,"FirstName":"Thomas"},{"FamilyName":null,"FirstName":"Mary Kay"}],"Children":[{"FamilyName":null,"FirstName":"Henriette Thaulow","Gender":"female","Grade":5,"Pets":[{"GivenName":"Fluffy"}]}],"Address":{"State":"WA","County":"King","City":"Seattle"},"IsRegistered":false}`
	wakefield  = `{"id":"Wakefield.7","LastName":"Wakefield","Parents":[{"FamilyName":"Wakefield","FirstName":"Robin"},{"FamilyName":"Miller","FirstName":"Ben"}],"Children":[{"FamilyName":"Merriam","FirstName":"Jesse","Gender":"female","Grade":6,"Pets":[{"GivenName":"Goofy"},{"GivenName":"Shadow"}]},{"FamilyName":"Miller","FirstName":"Lisa","Gender":"female","Grade":1,"Pets":null}],"Address":{"State":"NY","County":"Manhattan","City":"NY"},"IsRegistered":true}`
	nutritionN = 60951     // documents in the query page's container
	nutritionB = 399998938 // their bytes
)

// publishedFigures is every figure of the table in docs/cosmos.md.
func publishedFigures(t *testing.T) []publishedFigure {
	ip := newIndexPolicy(store.IndexingPolicy{})
	terms := func(doc string) indexTerms {
		ts, err := ip.terms([]byte(doc))
		if err != nil {
			t.Fatalf("terms of %s: %v", doc, err)
		}
		return ts
	}
	create := func(doc string) float64 { return writeCharge(len(doc), terms(doc).count()) }
	overwrite := func(old, new string) float64 { return writeCharge(len(new), changedTerms(terms(old), terms(new))) }
	postMoreComments := strings.Replace(postV2Doc, `"commentCount":3`, `"commentCount":4`, 1)
	postMoreLikes := strings.Replace(postV2Doc, `"likeCount":5`, `"likeCount":6`, 1)
	nutritionDoc := nutritionB / nutritionN
	return []publishedFigure{
		{"point read, 1 KB item", 1, readCharge(1024), "optimize-cost-reads-writes", pageOptimizeCost},
		{"point read, 100 KB item", 10, readCharge(100 * 1024), "optimize-cost-reads-writes", pageOptimizeCost},
		{"write, 1 KB item, indexing off", 5, writeCharge(1024, 0), "key-value-store-cost", pageKeyValueCost},
		{"write, 100 KB item, indexing off", 50, writeCharge(100*1024, 0), "key-value-store-cost", pageKeyValueCost},
		{"[Q1] read a user (point read)", 1, readCharge(len(userDoc)), "model-partition-example", pageModelExample},
		{"[C1] create a user: 2 terms", 5.71, create(userDoc), "model-partition-example", pageModelExample},
		{"[C4] create a like (V1): 5 terms", 7.05, create(likeV1), "model-partition-example", pageModelExample},
		{"[C3] create a comment (V1): 6 terms", 8.57, create(commentV1), "model-partition-example", pageModelExample},
		{"[C2] create a post (V1): 7 terms", 8.76, create(postV1Doc), "model-partition-example", pageModelExample},
		{"[C3] (V2) stored procedure: read the post, replace it with commentCount + 1 (2 terms changed), create a comment of 7 terms",
			15.27, readCharge(len(postV2Doc)) + overwrite(postV2Doc, postMoreComments) + create(commentV2), "model-partition-example", pageModelExample},
		{"[C4] (V2) stored procedure: read the post, replace it with likeCount + 1 (2 terms changed), create a like of 6 terms",
			14.67, readCharge(len(postV2Doc)) + overwrite(postV2Doc, postMoreLikes) + create(likeV2), "model-partition-example", pageModelExample},
		{`copy a post (V2, 10 terms) through the change feed: the feed read and the write of the copy ("around 10 RUs per item")`,
			10, feedCharge([]int{len(postV2Doc)}) + create(postV2Doc), "model-partition-example", pageModelExample},
		{"create the Andersen family: 15 terms", 11.43, create(andersen), "sql-api-get-started (.NET tutorial)", pageGetStarted},
		{"create the Wakefield family: 21 terms", 14.29, create(wakefield), "sql-api-get-started (.NET tutorial)", pageGetStarted},
		{"query served by the index: 1 physical partition, 1 document of 6.5 KB loaded and returned",
			2.98, queryCharge(1, 1, nutritionDoc), "troubleshoot-query-performance", pageQueryTrouble},
		{"query scanning 60,951 documents (400 MB): 1 physical partition, 7 returned (510 bytes)",
			4059.95, queryCharge(1, nutritionN, 510), "troubleshoot-query-performance", pageQueryTrouble},
	}
}

// TestChargeSources holds every estimate within 25% of the figure Microsoft
// publishes for the same operation.
func TestChargeSources(t *testing.T) {
	for _, f := range publishedFigures(t) {
		if off := math.Abs(f.estimate-f.published) / f.published; off > 0.25 {
			t.Errorf("%s: estimate %.2f RU, published %.2f RU (%s): %.0f%% off, more than 25%%",
				f.operation, f.estimate, f.published, f.source, 100*off)
		}
	}
}

// TestChargeSourcesTable checks the table in docs/cosmos.md against the
// figures and the estimates; -update rewrites it.
func TestChargeSourcesTable(t *testing.T) {
	const path = "../../docs/cosmos.md"
	const begin, end = "<!-- charge-sources:begin -->\n", "<!-- charge-sources:end -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q markers", path, strings.TrimSpace(begin), end)
	}
	want := sourcesTable(publishedFigures(t))
	got := string(doc[i+len(begin) : j])
	if got == want {
		return
	}
	if !*update {
		t.Fatalf("the table of published figures in %s is stale: run go test ./store/embedded -run ChargeSourcesTable -update\ngot:\n%s\nwant:\n%s", path, got, want)
	}
	out := append(append(bytes.Clone(doc[:i+len(begin)]), want...), doc[j:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sourcesTable renders the figures as a markdown table.
func sourcesTable(figs []publishedFigure) string {
	var b strings.Builder
	b.WriteString("| Operation | Published | Estimate | Difference | Source |\n")
	b.WriteString("| --- | ---: | ---: | ---: | --- |\n")
	for _, f := range figs {
		off := math.Round(100*(f.estimate-f.published)/f.published) + 0 // + 0: no "-0"
		fmt.Fprintf(&b, "| %s | %s RU | %s RU | %+.0f%% | [%s](%s) |\n", f.operation,
			ru(f.published), ru(f.estimate), off, f.source, f.url)
	}
	return b.String()
}

// ru writes a charge with at most 2 decimals.
func ru(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
