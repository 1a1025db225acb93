package cosmos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
)

// The wire check (.ci/wire) runs the store contract against
// @vercel/cosmosdb-server, an independent implementation of the Cosmos
// REST gateway, pinned by .ci/wire.d/package-lock.json. It speaks the
// protocol azcosmos speaks (resource URLs, headers, item CRUD, ETags and
// If-Match, patch, parameterized SQL, continuation tokens) but it is not
// a Cosmos: wireGaps names each contract test it fails and why, and
// TestWire fails on any other failure and on a gap that passes, so the
// list stays true. Nothing semantic is decided against it; TestContract
// on an account or the emulator is the ground truth.

// wireGap is a contract test the server fails: why (its behaviour, read
// in its source, against Cosmos's), a text the failure shows, so that a
// failure of another kind in the same test is not taken for the gap, and
// the requests the test must have sent (wirerecord_test.go), so that the
// gap cannot hide an adapter that stopped sending what the gap is about.
type wireGap struct {
	why   string
	shows string
	sent  []request
}

// The server's gaps that several tests meet.
const (
	gapReadMissing = "a point read of a missing item crashes the server with a 500 (it reads the item's partition key " +
		"property before checking the item exists), where Cosmos answers 404"
	gapBatchKey = "a delete, replace or upsert in a batch crashes the server with a 500: it looks for the partition key in " +
		"each operation, where the REST API (and azcosmos) sends it once, in the batch's header"
	gapBatchPatch = "a batch has no patch operation: the server answers 400 \"Operation type 'Patch' is not supported in Batch\""
	gapQueryKey   = "a query ignores the partition-key header and returns the items of every partition"
	gapTTL        = "no TTL: an item never expires"
)

// The requests the gaps are about, as the adapter must send them.
var (
	// pointRead reads one item in its partition.
	pointRead = request{method: "GET", resource: "docs/{id}", header: []string{"x-ms-documentdb-partitionkey"}}
	// create creates one item in the partition its header names: not an
	// upsert, a query or a batch, which are POSTs on the items too.
	create = request{method: "POST", resource: "docs", header: []string{"x-ms-documentdb-partitionkey",
		"!x-ms-documentdb-is-upsert", "!x-ms-documentdb-query", "!x-ms-cosmos-is-batch-request"}}
	// batch is a transactional batch, its partition key in its header.
	batch = request{method: "POST", resource: "docs", header: []string{"x-ms-cosmos-is-batch-request: true",
		"x-ms-cosmos-batch-atomic: true", "x-ms-documentdb-partitionkey"}}
	// partitionQuery is a query in one partition, the key in its header.
	partitionQuery = request{method: "POST", resource: "docs", header: []string{"x-ms-documentdb-query: true",
		"content-type: application/query+json", "x-ms-documentdb-partitionkey"}}
	// patch patches one item in its partition.
	patch = request{method: "PATCH", resource: "docs/{id}", header: []string{"x-ms-documentdb-partitionkey"}}
	// feedRanges reads a container's partition key ranges.
	feedRanges = request{method: "GET", resource: "pkranges"}
)

// with is r with more headers.
func (r request) with(header ...string) request {
	r.header = append(slices.Clone(r.header), header...)
	return r
}

// holding is r with a body that holds text.
func (r request) holding(text string) request {
	r.body = text
	return r
}

// sent lists the requests of a gap.
func sent(r ...request) []request { return r }

// containerWithTTL creates a container whose default ttl is seconds.
func containerWithTTL(seconds string) request {
	return request{method: "POST", resource: "colls", body: `"defaultTtl":` + seconds}
}

// wireGaps are the contract tests (below TestContract) that fail on the
// server, each for a reason of the server's, not of the adapter's.
var wireGaps = map[string]wireGap{
	"PartitionKeyRequired": {"a create ignores the partition-key header: an item that lacks the key property, " +
		"or has another value in it, is stored under its own, where Cosmos answers 400", `(<nil>), want "invalid"`,
		sent(create)},
	"MissingIsNotFound": {gapReadMissing, "unexpected status 500", sent(pointRead)},
	"ReadIfNoneMatch": {"a point read ignores If-None-Match and answers 200 with the document, where Cosmos answers 304 " +
		"when the ETag is the item's", "want not modified", sent(pointRead.with("If-None-Match"))},
	"BatchOver100Refused": {"checking that the refused batch wrote nothing reads a missing item: " + gapReadMissing,
		"unexpected status 500", sent(pointRead)},
	"BatchOver2MBRefused": {"checking that the refused batch wrote nothing reads a missing item: " + gapReadMissing,
		"unexpected status 500", sent(pointRead)},

	"BatchAtomic/FailureRollsBackAll": {gapBatchKey, "unexpected status 500", sent(batch.holding(`"operationType":"Replace"`))},
	"UpsertIfMatchOfMissingCreates": {"the batch half of the test: " + gapBatchKey, "unexpected status 500",
		sent(batch.holding(`"operationType":"Upsert"`))},
	"BatchAtomic/SuccessCommitsAll": {"a batch is not atomic: the item the failed batch before it created stayed " +
		"(and this batch's replace and delete would crash the server, as in FailureRollsBackAll)", "already exists",
		sent(batch.holding(`"operationType":"Create"`))},
	"BatchRefusedAcrossKeys": {"a batch does not refuse an item of another partition key (Cosmos answers 400)",
		`(<nil>), want "invalid"`, sent(batch)},
	"ConditionalPatchInBatch": {gapBatchPatch, "refused the request as malformed",
		sent(batch.holding(`"operationType":"Patch"`))},
	"ConditionalPatchConcurrent/Batch": {gapBatchPatch, `code "invalid"`, sent(batch.holding(`"operationType":"Patch"`))},

	"Patch/ParentMissing": {"a set below a missing parent (/nope/x) sets /x on the parent's parent, " +
		"where Cosmos answers 400", `(<nil>), want "invalid"`, sent(patch.holding(`"path":"/nope/x"`))},
	"ConditionalPatch/Operators/StringFails": {"the server lowercases a patch's condition, string literals included, " +
		"so sku = 'B' holds for \"b\"", `(<nil>), want "precondition"`, sent(patch.holding(`"condition":`))},
	"ConditionalPatch/Operators/StringAgainstNumber": {"its SQL engine compares values of different types (a string != 1 holds), " +
		"where in Cosmos SQL the comparison is undefined and the condition does not hold", `(<nil>), want "precondition"`,
		sent(patch.holding(`"condition":`))},

	"Query/EqualitySinglePartition":          {gapQueryKey, "(-want +got)", sent(partitionQuery)},
	"Query/WholePartition":                   {gapQueryKey, "(-want +got)", sent(partitionQuery)},
	"Query/OrderByNumberAscending":           {gapQueryKey, "(-want +got)", sent(partitionQuery.holding("ORDER BY"))},
	"Query/OrderByNumberDescendingPaged":     {gapQueryKey, "(-want +got)", sent(partitionQuery.holding("ORDER BY"))},
	"Query/OrderByTimeDescendingInPartition": {gapQueryKey, "(-want +got)", sent(partitionQuery.holding("ORDER BY"))},
	"Query/OrderByWithFilterPaged":           {gapQueryKey, "(-want +got)", sent(partitionQuery.holding("ORDER BY"))},
	"Query/PagesWithTiesCoverEverythingOnce": {gapQueryKey, "(-want +got)", sent(partitionQuery.with("x-ms-continuation"))},

	"ChangeFeed": {"no change feed; even ReadFeedRanges fails, as the server's partition key ranges give the id " +
		"as a number where the REST API gives a string", "cannot unmarshal number", sent(feedRanges)},
	"ChangeFeedFromNow": {"ReadFeedRanges fails, as in ChangeFeed: the server's partition key ranges give the id " +
		"as a number where the REST API gives a string", "cannot unmarshal number", sent(feedRanges)},
	"OrderByKeepsItemsWithoutTheProperty/Filtered": {"a page of its ORDER BY that ends on an item without the " +
		"property resumes past the other items without it: of c and e (both lacking it), the page after c " +
		"starts after e", "(-want +got)", sent(partitionQuery.holding("ORDER BY").with("x-ms-continuation"))},
	"TTL/PerItem":          {gapTTL, "still readable", sent(containerWithTTL("-1"), create.holding(`"ttl":1`))},
	"TTL/ContainerDefault": {gapTTL, "still readable", sent(containerWithTTL("1"))},
	"TTL/OffIgnoresItemTTL": {gapTTL, "still readable",
		sent(containerWithTTL("-1"), create.holding(`"ttl":1`), pointRead)},
}

// wireKey is the account key the adapter signs with: the server checks
// no signature, so any valid base64 does.
var wireKey = base64.StdEncoding.EncodeToString([]byte("the wire server checks no signature"))

// TestWire runs TestContract in a child process of this test binary,
// against the server at SHOP_WIRE_ENDPOINT (.ci/wire starts it), with the
// requests the adapter sends recorded, and judges the run with
// gapProblems. It then checks the count docs/cosmos.md gives of the run
// (wireFigure), or with -update writes it there. Without
// SHOP_WIRE_ENDPOINT it skips.
func TestWire(t *testing.T) {
	endpoint := os.Getenv("SHOP_WIRE_ENDPOINT")
	if endpoint == "" {
		t.Skip("no wire server: .ci/wire starts @vercel/cosmosdb-server and sets SHOP_WIRE_ENDPOINT")
	}
	var out, stderr bytes.Buffer
	// One test at a time: readRun gives each recorded request to the test
	// that was running, which it cannot tell while two run in parallel.
	cmd := exec.Command("go", "tool", "test2json", os.Args[0],
		"-test.v=test2json", "-test.run=^TestContract$", "-test.count=1", "-test.timeout=5m", "-test.parallel=1")
	cmd.Env = wireEnv(os.Environ(), endpoint)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	// The contract fails on the server's gaps: a failed run is expected.
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("run the contract: %v\n%s", err, stderr.Bytes())
		}
	}
	run, err := readRun(&out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	problems := gapProblems("TestContract", run, wireGaps)
	for _, p := range problems {
		t.Error(p)
	}
	for _, g := range slices.Sorted(maps.Keys(wireGaps)) {
		t.Logf("gap %s: %s", g, wireGaps[g].why)
	}
	figure := wireFigure(tally("TestContract", run, wireGaps), len(wireGaps))
	t.Logf("the contract on the wire: %s (%d requests recorded)", figure, len(sentWithin(run, "TestContract")))
	if len(problems) > 0 {
		return // the count of a run that disagrees with the gaps is no figure to publish
	}
	if err := checkDocFigure(wireDoc, figure, *update); err != nil {
		t.Error(err)
	}
}

// wireDoc is the document that gives the wire check's count, between
// figureBegin and figureEnd.
const (
	wireDoc     = "../../docs/cosmos.md"
	figureBegin = "<!-- wire-figure:begin -->"
	figureEnd   = "<!-- wire-figure:end -->"
)

// wireFigure is the count of a run that agrees with the gaps, as the
// document gives it.
func wireFigure(n runTally, gaps int) string {
	s := fmt.Sprintf("%d of the %d leaf tests pass; the %d that fail are within the %d declared gaps",
		n.passed, n.leaves, n.gapped, gaps)
	if other := n.leaves - n.passed - n.gapped; other > 0 {
		s += fmt.Sprintf(", and %d skip", other)
	}
	return s + "."
}

// checkDocFigure checks that the file at path gives figure between
// figureBegin and figureEnd; with write, it puts figure there instead.
func checkDocFigure(path, figure string, write bool) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(doc, []byte(figureBegin)), bytes.Index(doc, []byte(figureEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s markers", path, figureBegin, figureEnd)
	}
	got := string(doc[i+len(figureBegin) : j])
	if got == figure {
		return nil
	}
	if !write {
		return fmt.Errorf("%s is stale: it says %q of the wire check, the run %q: run .ci/wire -update", path, got, figure)
	}
	out := slices.Concat(doc[:i+len(figureBegin)], []byte(figure), doc[j:])
	return os.WriteFile(path, out, 0o644)
}

// wireEnv is environ with every COSMOS_* setting replaced by those of the
// wire server: https with its self-signed certificate, and not the
// emulator (whose mode pins hosts and skips indexing policies), so the
// adapter runs as on an account; and with SHOP_WIRE_RECORD set, so that
// TestContract records the requests the adapter sends.
func wireEnv(environ []string, endpoint string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, "COSMOS_") || strings.HasPrefix(kv, "SHOP_WIRE_")
	})
	return append(env,
		"COSMOS_ENDPOINT="+endpoint,
		"COSMOS_KEY="+wireKey,
		"COSMOS_INSECURE_SKIP_VERIFY=1",
		"SHOP_WIRE_RECORD=1",
	)
}

// TestWireCatalog keeps the catalog .ci/wire writes into the server
// (testdata/wire/catalog/<container>/<id>.json) true to the domain: each
// document decodes into the type it names with no unknown field, has the
// id of its file and the partition key property of its container.
func TestWireCatalog(t *testing.T) {
	types := map[string]func() any{
		domain.TypeCategories:     func() any { return new(domain.Categories) },
		domain.TypeProduct:        func() any { return new(domain.Product) },
		domain.TypeProductSummary: func() any { return new(domain.ProductSummary) },
		domain.TypeReview:         func() any { return new(domain.Review) },
	}
	files, err := filepath.Glob(filepath.Join("testdata", "wire", "catalog", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog: %v", err)
	}
	for _, f := range files {
		container, id := filepath.Base(filepath.Dir(f)), strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(container+"/"+id, func(t *testing.T) {
			i := slices.IndexFunc(migrations.Containers, func(d store.ContainerDef) bool { return d.ID == container })
			if i < 0 {
				t.Fatalf("no container %q in the migrations", container)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc["id"] != id {
				t.Errorf("id = %v, want %q (the file's name)", doc["id"], id)
			}
			pk := strings.TrimPrefix(migrations.Containers[i].PartitionKeyPath, "/")
			if v, _ := doc[pk].(string); v == "" {
				t.Errorf("no partition key %s", pk)
			}
			newDoc, ok := types[fmt.Sprint(doc["type"])]
			if !ok {
				t.Fatalf("type %v is not one the catalog holds", doc["type"])
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(newDoc()); err != nil {
				t.Errorf("as %v: %v", doc["type"], err)
			}
		})
	}
}
