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

	"shop/domain"
	"shop/migrations"
	"shop/store"
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
// in its source, against Cosmos's), and a text the failure shows, so that
// a failure of another kind in the same test is not taken for the gap.
type wireGap struct {
	why   string
	shows string
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

// wireGaps are the contract tests (below TestContract) that fail on the
// server, each for a reason of the server's, not of the adapter's.
var wireGaps = map[string]wireGap{
	"PartitionKeyRequired": {"a create ignores the partition-key header: an item that lacks the key property, " +
		"or has another value in it, is stored under its own, where Cosmos answers 400", `(<nil>), want "invalid"`},
	"MissingIsNotFound": {gapReadMissing, "unexpected status 500"},
	"ReadIfNoneMatch": {"a point read ignores If-None-Match and answers 200 with the document, where Cosmos answers 304 " +
		"when the ETag is the item's", "want not modified"},
	"BatchOver100Refused": {"checking that the refused batch wrote nothing reads a missing item: " + gapReadMissing, "unexpected status 500"},
	"BatchOver2MBRefused": {"checking that the refused batch wrote nothing reads a missing item: " + gapReadMissing, "unexpected status 500"},

	"BatchAtomic/FailureRollsBackAll": {gapBatchKey, "unexpected status 500"},
	"UpsertIfMatchOfMissingCreates":   {"the batch half of the test: " + gapBatchKey, "unexpected status 500"},
	"BatchAtomic/SuccessCommitsAll": {"a batch is not atomic: the item the failed batch before it created stayed " +
		"(and this batch's replace and delete would crash the server, as in FailureRollsBackAll)", "already exists"},
	"BatchRefusedAcrossKeys":           {"a batch does not refuse an item of another partition key (Cosmos answers 400)", `(<nil>), want "invalid"`},
	"ConditionalPatchInBatch":          {gapBatchPatch, "refused the request as malformed"},
	"ConditionalPatchConcurrent/Batch": {gapBatchPatch, `code "invalid"`},

	"Patch/ParentMissing": {"a set below a missing parent (/nope/x) sets /x on the parent's parent, " +
		"where Cosmos answers 400", `(<nil>), want "invalid"`},
	"ConditionalPatch/Operators/StringFails": {"the server lowercases a patch's condition, string literals included, " +
		"so sku = 'B' holds for \"b\"", `(<nil>), want "precondition"`},
	"ConditionalPatch/Operators/StringAgainstNumber": {"its SQL engine compares values of different types (a string != 1 holds), " +
		"where in Cosmos SQL the comparison is undefined and the condition does not hold", `(<nil>), want "precondition"`},

	"Query/EqualitySinglePartition":          {gapQueryKey, "(-want +got)"},
	"Query/WholePartition":                   {gapQueryKey, "(-want +got)"},
	"Query/OrderByNumberAscending":           {gapQueryKey, "(-want +got)"},
	"Query/OrderByNumberDescendingPaged":     {gapQueryKey, "(-want +got)"},
	"Query/OrderByTimeDescendingInPartition": {gapQueryKey, "(-want +got)"},
	"Query/OrderByWithFilterPaged":           {gapQueryKey, "(-want +got)"},
	"Query/PagesWithTiesCoverEverythingOnce": {gapQueryKey, "(-want +got)"},

	"ChangeFeed": {"no change feed; even ReadFeedRanges fails, as the server's partition key ranges give the id " +
		"as a number where the REST API gives a string", "cannot unmarshal number"},
	"ChangeFeedFromNow": {"ReadFeedRanges fails, as in ChangeFeed: the server's partition key ranges give the id " +
		"as a number where the REST API gives a string", "cannot unmarshal number"},
	"OrderByDropsItemsWithoutTheProperty/Ascending": {"its ORDER BY keeps the items that lack the property, " +
		"where a Cosmos composite index has no entry for them", "(-want +got)"},
	"OrderByDropsItemsWithoutTheProperty/Descending": {"its ORDER BY keeps the items that lack the property " +
		"(and gives one of them twice), where a Cosmos composite index has no entry for them", "(-want +got)"},
	"TTL/PerItem":           {gapTTL, "still readable"},
	"TTL/ContainerDefault":  {gapTTL, "still readable"},
	"TTL/OffIgnoresItemTTL": {gapTTL, "still readable"},
}

// wireKey is the account key the adapter signs with: the server checks
// no signature, so any valid base64 does.
var wireKey = base64.StdEncoding.EncodeToString([]byte("the wire server checks no signature"))

// TestWire runs TestContract in a child process of this test binary,
// against the server at SHOP_WIRE_ENDPOINT (.ci/wire starts it), and
// judges the run with gapProblems. Without SHOP_WIRE_ENDPOINT it skips.
func TestWire(t *testing.T) {
	endpoint := os.Getenv("SHOP_WIRE_ENDPOINT")
	if endpoint == "" {
		t.Skip("no wire server: .ci/wire starts @vercel/cosmosdb-server and sets SHOP_WIRE_ENDPOINT")
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command("go", "tool", "test2json", os.Args[0],
		"-test.v=test2json", "-test.run=^TestContract$", "-test.count=1", "-test.timeout=5m")
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
	for _, p := range gapProblems("TestContract", run, wireGaps) {
		t.Error(p)
	}
	for _, g := range slices.Sorted(maps.Keys(wireGaps)) {
		t.Logf("gap %s: %s", g, wireGaps[g].why)
	}
	n := tally("TestContract", run, wireGaps)
	t.Logf("the contract on the wire: %d of %d leaf tests pass, %d fail within the %d declared gaps",
		n.passed, n.leaves, n.gapped, len(wireGaps))
}

// wireEnv is environ with every COSMOS_* setting replaced by those of the
// wire server: https with its self-signed certificate, and not the
// emulator (whose mode pins hosts and skips indexing policies), so the
// adapter runs as on an account.
func wireEnv(environ []string, endpoint string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, "COSMOS_") || strings.HasPrefix(kv, "SHOP_WIRE_")
	})
	return append(env,
		"COSMOS_ENDPOINT="+endpoint,
		"COSMOS_KEY="+wireKey,
		"COSMOS_INSECURE_SKIP_VERIFY=1",
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
