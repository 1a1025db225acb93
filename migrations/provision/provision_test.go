package provision

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// shopSet is the set `shop containers` prints by default.
var shopSet = Set{Defs: migrations.Containers, What: "The shop's database and containers", From: "migrations/containers.go",
	File: "shop.bicep", User: "the shop"}

// generate is what write (Bicep or Az) writes of src for t.
func generate(t *testing.T, write func(io.Writer, Set, Target) error, src Set, target Target) string {
	t.Helper()
	var out bytes.Buffer
	if err := write(&out, src, target); err != nil {
		t.Fatalf("%+v: %v", target, err)
	}
	return out.String()
}

// The JSON both formats embed, read back as Cosmos reads it, into the
// migrations' own type: what the owner provisions is what `shop migrate`
// would have created.
type provisioned struct {
	ID           string `json:"id"`
	PartitionKey struct {
		Paths   []string `json:"paths"`
		Kind    string   `json:"kind"`
		Version int      `json:"version"`
	} `json:"partitionKey"`
	IndexingPolicy  indexing `json:"indexingPolicy"`
	DefaultTTL      *int     `json:"defaultTtl"`
	UniqueKeyPolicy *struct {
		UniqueKeys []struct {
			Paths []string `json:"paths"`
		} `json:"uniqueKeys"`
	} `json:"uniqueKeyPolicy"`
}

type indexing struct {
	IndexingMode  string `json:"indexingMode"`
	Automatic     bool   `json:"automatic"`
	IncludedPaths []struct {
		Path string `json:"path"`
	} `json:"includedPaths"`
	ExcludedPaths []struct {
		Path string `json:"path"`
	} `json:"excludedPaths"`
	CompositeIndexes [][]store.CompositePath `json:"compositeIndexes"`
}

func (ix indexing) def(t *testing.T, id string) store.IndexingPolicy {
	t.Helper()
	if ix.IndexingMode != "consistent" || !ix.Automatic {
		t.Errorf("%s: indexing mode %q automatic %v, want consistent, automatic", id, ix.IndexingMode, ix.Automatic)
	}
	var p store.IndexingPolicy
	for _, x := range ix.IncludedPaths {
		p.IncludedPaths = append(p.IncludedPaths, x.Path)
	}
	for _, x := range ix.ExcludedPaths {
		p.ExcludedPaths = append(p.ExcludedPaths, x.Path)
	}
	p.CompositeIndexes = ix.CompositeIndexes
	return p
}

func (c provisioned) def(t *testing.T) store.ContainerDef {
	t.Helper()
	if len(c.PartitionKey.Paths) != 1 || c.PartitionKey.Kind != "Hash" || c.PartitionKey.Version != 2 {
		t.Errorf("%s: partition key %+v, want one path, Hash, version 2", c.ID, c.PartitionKey)
	}
	d := store.ContainerDef{ID: c.ID, DefaultTTL: c.DefaultTTL, IndexingPolicy: c.IndexingPolicy.def(t, c.ID)}
	if len(c.PartitionKey.Paths) > 0 {
		d.PartitionKeyPath = c.PartitionKey.Paths[0]
	}
	if c.UniqueKeyPolicy != nil {
		for _, k := range c.UniqueKeyPolicy.UniqueKeys {
			d.UniqueKeys = append(d.UniqueKeys, k.Paths)
		}
	}
	return d
}

// The empty lists the generator writes (Cosmos wants [] rather than
// null) and the nil lists of the migrations compare equal.
var emptyIsNil = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Comparer(func(a, b []string) bool { return true }))

// TestBicepIsTheMigrations: the Bicep declares every container
// migrations.Containers holds, with its partition key, indexing policy,
// TTL and unique keys, and nothing else.
func TestBicepIsTheMigrations(t *testing.T) {
	out := generate(t, Bicep, shopSet, Target{Database: "shop-test", Account: "acct", Principal: "1111-2222"})
	if diff := cmp.Diff(migrations.Containers, bicepContainers(t, out), emptyIsNil); diff != "" {
		t.Errorf("Bicep containers differ from migrations.Containers (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		"param accountName string = 'acct'",
		"param databaseName string = 'shop-test'",
		"param principalId string = '1111-2222'",
		"'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@" + armAPIVersion + "' = [for c in containers:",
		"'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@" + armAPIVersion + "' = if (!empty(principalId))",
		"roleDefinitionId: '${account.id}/sqlRoleDefinitions/00000000-0000-0000-0000-000000000002'",
		"options: {}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the Bicep lacks %q", want)
		}
	}
	for tp, want := range map[Throughput]string{
		{Autoscale: 4000}: "autoscaleSettings: {\n        maxThroughput: 4000",
		{Manual: 400}:     "options: {\n      throughput: 400\n",
	} {
		if out := generate(t, Bicep, shopSet, Target{Database: "shop", Throughput: tp}); !strings.Contains(out, want) {
			t.Errorf("throughput %+v: the database's options lack %q", tp, want)
		}
	}
}

// bicepContainers reads back the containers a generated Bicep declares.
func bicepContainers(t *testing.T, out string) []store.ContainerDef {
	t.Helper()
	m := regexp.MustCompile(`(?s)var containers = json\('''\n(.*?)\n'''\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no containers array in the Bicep:\n%s", out)
	}
	var got []provisioned
	if err := json.Unmarshal([]byte(m[1]), &got); err != nil {
		t.Fatalf("the containers' JSON: %v", err)
	}
	var defs []store.ContainerDef
	for _, c := range got {
		defs = append(defs, c.def(t))
	}
	return defs
}

// TestAzIsTheMigrations: the az commands create the database and every
// container of migrations.Containers with its partition key, --ttl and
// --idx, and assign the data role when given a principal.
func TestAzIsTheMigrations(t *testing.T) {
	out := generate(t, Az, shopSet, Target{Database: "shop-test", Account: "acct", ResourceGroup: "rg",
		Throughput: Throughput{Autoscale: 1000}, Principal: "1111-2222"})
	text := strings.ReplaceAll(out, "\\\n", "")
	if !strings.Contains(text, "az cosmosdb sql database create --account-name acct --resource-group rg --name shop-test --max-throughput 1000\n") {
		t.Errorf("no database create with --max-throughput 1000:\n%s", out)
	}
	if diff := cmp.Diff(migrations.Containers, azContainers(t, text, "shop-test"), emptyIsNil); diff != "" {
		t.Errorf("az containers differ from migrations.Containers (-want +got):\n%s", diff)
	}
	if !strings.Contains(text, "az cosmosdb sql role assignment create --account-name acct --resource-group rg   --role-definition-id 00000000-0000-0000-0000-000000000002 --principal-id 1111-2222 --scope /") {
		t.Errorf("no role assignment for the principal:\n%s", out)
	}
	if strings.Contains(generate(t, Az, shopSet, Target{Database: "shop", Account: "<account>", ResourceGroup: "<group>"}), "role assignment") {
		t.Error("a role assignment without a principal")
	}
}

// azContainers reads back the containers the az commands of text (lines
// joined) create in database, with acct and rg as the account and group.
func azContainers(t *testing.T, text, database string) []store.ContainerDef {
	t.Helper()
	re := regexp.MustCompile(`(?m)^az cosmosdb sql container create --account-name acct --resource-group rg --database-name ` + regexp.QuoteMeta(database) +
		`\s+--name (\S+) --partition-key-path (\S+)( --ttl (-?\d+))?( --unique-key-policy '([^']*)')?\s+--idx '([^']*)'$`)
	var defs []store.ContainerDef
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		d := store.ContainerDef{ID: m[1], PartitionKeyPath: m[2]}
		if m[4] != "" {
			n, _ := strconv.Atoi(m[4])
			d.DefaultTTL = &n
		}
		if m[6] != "" {
			var uk struct {
				UniqueKeys []struct {
					Paths []string `json:"paths"`
				} `json:"uniqueKeys"`
			}
			if err := json.Unmarshal([]byte(m[6]), &uk); err != nil {
				t.Fatalf("%s --unique-key-policy: %v", m[1], err)
			}
			for _, k := range uk.UniqueKeys {
				d.UniqueKeys = append(d.UniqueKeys, k.Paths)
			}
		}
		var ix indexing
		if err := json.Unmarshal([]byte(m[7]), &ix); err != nil {
			t.Fatalf("%s --idx: %v", m[1], err)
		}
		d.IndexingPolicy = ix.def(t, m[1])
		defs = append(defs, d)
	}
	if n := strings.Count(text, "az cosmosdb sql container create"); n != len(defs) {
		t.Errorf("%d container commands, %d of the expected form", n, len(defs))
	}
	return defs
}

// TestContractContainersComeBack: the contract suite's containers,
// unique keys and composite indexes included, come back from both
// formats as suite.Containers holds them (`shop containers -contract`).
func TestContractContainersComeBack(t *testing.T) {
	want := suite.Containers()
	src := Set{Defs: want, What: "The contract suite's containers", From: "store/storetest/suite", File: "contract.bicep", User: "the contract suite"}
	out := generate(t, Bicep, src, Target{Database: suite.Database, Account: "acct"})
	if diff := cmp.Diff(want, bicepContainers(t, out), emptyIsNil); diff != "" {
		t.Errorf("contract Bicep containers differ from suite.Containers (-want +got):\n%s", diff)
	}
	out = generate(t, Az, src, Target{Database: suite.Database, Account: "acct", ResourceGroup: "rg"})
	text := strings.ReplaceAll(out, "\\\n", "")
	if diff := cmp.Diff(want, azContainers(t, text, suite.Database), emptyIsNil); diff != "" {
		t.Errorf("contract az containers differ from suite.Containers (-want +got):\n%s", diff)
	}
}
