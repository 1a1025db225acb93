package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// armAPIVersion is the Microsoft.DocumentDB API version the Bicep uses: a
// stable version that has sqlDatabases, containers and sqlRoleAssignments.
const armAPIVersion = "2023-11-15"

// dataContributorRole is the id of Cosmos DB's built-in "Cosmos DB
// Built-in Data Contributor" data-plane role: items and queries, no
// management operations.
const dataContributorRole = "00000000-0000-0000-0000-000000000002"

// maxSharedContainers is how many containers a database of shared
// throughput holds at most (Cosmos's service quotas).
const maxSharedContainers = 25

// containers prints the database and the shop's containers, generated
// from migrations.Containers (the one list `shop migrate` applies), as a
// Bicep file or as az commands, so that the owner of an account whose
// local (key) auth is disabled can provision what the shop, keyless,
// cannot create: Cosmos's data-plane roles cover items and queries, not
// databases and containers. With -contract it prints the contract
// suite's containers instead (suite.Containers), under the database
// suite.Database by default, for TestContract to run keyless on them
// (docs/cosmos.md, section 5). It needs no account and opens no store.
func containers(_ context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("containers", flag.ContinueOnError)
	fs.SetOutput(stdout)
	format := fs.String("format", "bicep", "bicep: a Bicep file for az deployment group create; az: az cosmosdb commands")
	database := fs.String("database", migrations.Database, "database name (the shop's COSMOS_DATABASE)")
	account := fs.String("account", "<account>", "Cosmos DB account name (az commands; the Bicep's accountName default)")
	group := fs.String("resource-group", "<group>", "resource group of the account (az commands)")
	throughput := fs.String("throughput", "serverless", "serverless: none (a serverless account, or 400 RU/s manual per container on a provisioned one); "+
		"autoscale:N: the database shares autoscale up to N RU/s (a multiple of 1000); manual:N: the database shares N RU/s (400 or more, a multiple of 100)")
	principal := fs.String("principal-id", "", "object id of the identity to grant the Data Contributor role on the account (empty: no role assignment)")
	contract := fs.Bool("contract", false, "the contract suite's containers (store/storetest/suite) instead of the shop's, "+
		"for go test -run TestContract keyless; -database then defaults to "+suite.Database)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("containers: unexpected argument %q", fs.Arg(0))
	}
	tp, err := parseThroughput(*throughput)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	src := containerSet{defs: migrations.Containers, what: "The shop's database and containers", from: "migrations/containers.go",
		file: "shop.bicep", user: "the shop"}
	if *contract {
		src = containerSet{defs: suite.Containers(), from: "store/storetest/suite", file: "contract.bicep", user: "the contract suite (TestContract)"}
		src.what = fmt.Sprintf("The contract suite's %d containers and their database", len(src.defs))
		if !set["database"] {
			*database = suite.Database
		}
		if n := len(src.defs); (tp != sharedThroughput{}) && n > maxSharedContainers {
			return fmt.Errorf("containers: -contract -throughput %s: a database of shared throughput holds at most %d containers, "+
				"the contract suite has %d: use serverless (a serverless account; on a provisioned one each container gets 400 RU/s)",
				*throughput, maxSharedContainers, n)
		}
	}
	if *database == "" {
		return fmt.Errorf("containers: -database must not be empty")
	}
	switch *format {
	case "bicep":
		return writeBicep(stdout, src, *database, *account, *principal, tp)
	case "az":
		return writeAz(stdout, src, *database, *account, *group, *principal, tp)
	default:
		return fmt.Errorf("containers: -format %q: want bicep or az", *format)
	}
}

// containerSet is what the command prints: the definitions, what they
// are, the file of the source they come from, the Bicep file's name, and
// who uses them.
type containerSet struct {
	defs                   []store.ContainerDef
	what, from, file, user string
}

// sharedThroughput is the database's throughput: none (zero), autoscale
// up to Max, or manual Manual RU/s.
type sharedThroughput struct {
	Autoscale, Manual int
}

func parseThroughput(s string) (sharedThroughput, error) {
	if s == "serverless" || s == "none" {
		return sharedThroughput{}, nil
	}
	kind, n, ok := strings.Cut(s, ":")
	ru, err := strconv.Atoi(n)
	bad := fmt.Errorf("containers: -throughput %q: want serverless, autoscale:N (N a multiple of 1000) or manual:N (N at least 400, a multiple of 100)", s)
	if !ok || err != nil {
		return sharedThroughput{}, bad
	}
	switch {
	case kind == "autoscale" && ru >= 1000 && ru%1000 == 0:
		return sharedThroughput{Autoscale: ru}, nil
	case kind == "manual" && ru >= 400 && ru%100 == 0:
		return sharedThroughput{Manual: ru}, nil
	}
	return sharedThroughput{}, bad
}

// armContainer is a container's resource as Azure Resource Manager takes
// it (SqlContainerResource): the same JSON in Bicep and in az's --idx.
type armContainer struct {
	ID              string              `json:"id"`
	PartitionKey    armPartitionKey     `json:"partitionKey"`
	IndexingPolicy  armIndexingPolicy   `json:"indexingPolicy"`
	DefaultTTL      *int                `json:"defaultTtl,omitempty"`
	UniqueKeyPolicy *armUniqueKeyPolicy `json:"uniqueKeyPolicy,omitempty"`
}

type armPartitionKey struct {
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind"`
	Version int      `json:"version"`
}

type armIndexingPolicy struct {
	IndexingMode     string               `json:"indexingMode"`
	Automatic        bool                 `json:"automatic"`
	IncludedPaths    []armPath            `json:"includedPaths"`
	ExcludedPaths    []armPath            `json:"excludedPaths"`
	CompositeIndexes [][]armCompositePath `json:"compositeIndexes,omitempty"`
}

type armPath struct {
	Path string `json:"path"`
}

type armCompositePath struct {
	Path  string `json:"path"`
	Order string `json:"order"`
}

type armUniqueKeyPolicy struct {
	UniqueKeys []armUniqueKey `json:"uniqueKeys"`
}

type armUniqueKey struct {
	Paths []string `json:"paths"`
}

// toARM converts a definition the way store/cosmos does for the data
// plane (containerProperties): hash partitioning, version 2, consistent
// automatic indexing.
func toARM(def store.ContainerDef) armContainer {
	c := armContainer{
		ID:           def.ID,
		PartitionKey: armPartitionKey{Paths: []string{def.PartitionKeyPath}, Kind: "Hash", Version: 2},
		IndexingPolicy: armIndexingPolicy{
			IndexingMode:  "consistent",
			Automatic:     true,
			IncludedPaths: []armPath{},
			ExcludedPaths: []armPath{},
		},
		DefaultTTL: def.DefaultTTL,
	}
	for _, p := range def.IndexingPolicy.IncludedPaths {
		c.IndexingPolicy.IncludedPaths = append(c.IndexingPolicy.IncludedPaths, armPath{p})
	}
	for _, p := range def.IndexingPolicy.ExcludedPaths {
		c.IndexingPolicy.ExcludedPaths = append(c.IndexingPolicy.ExcludedPaths, armPath{p})
	}
	for _, ci := range def.IndexingPolicy.CompositeIndexes {
		var paths []armCompositePath
		for _, p := range ci {
			paths = append(paths, armCompositePath{p.Path, p.Order})
		}
		c.IndexingPolicy.CompositeIndexes = append(c.IndexingPolicy.CompositeIndexes, paths)
	}
	if len(def.UniqueKeys) > 0 {
		c.UniqueKeyPolicy = &armUniqueKeyPolicy{}
		for _, k := range def.UniqueKeys {
			c.UniqueKeyPolicy.UniqueKeys = append(c.UniqueKeyPolicy.UniqueKeys, armUniqueKey{k})
		}
	}
	return c
}

// writeBicep writes one Bicep file: the existing account, the database,
// the containers from one JSON array (a multi-line string has no escapes,
// so the JSON is exactly what encoding/json wrote), and the role
// assignment when principalId is set.
func writeBicep(w io.Writer, src containerSet, database, account, principal string, tp sharedThroughput) error {
	var arm []armContainer
	for _, def := range src.defs {
		arm = append(arm, toARM(def))
	}
	js, err := json.MarshalIndent(arm, "", "  ")
	if err != nil {
		return err
	}
	if strings.Contains(string(js), "'''") {
		return fmt.Errorf("containers: a definition holds ''', which a Bicep multi-line string cannot")
	}
	options := "{}"
	switch {
	case tp.Autoscale > 0:
		options = fmt.Sprintf("{\n      autoscaleSettings: {\n        maxThroughput: %d\n      }\n    }", tp.Autoscale)
	case tp.Manual > 0:
		options = fmt.Sprintf("{\n      throughput: %d\n    }", tp.Manual)
	}
	fmt.Fprintf(w, `// %s, generated by `+"`shop containers`"+` from
// %s. Deploy with
//   az deployment group create --resource-group <group> --template-file %s \
//     --parameters accountName=<account> principalId=<object id>
// Containers take the database's throughput (%s).

@description('Name of the existing Cosmos DB account (API for NoSQL).')
param accountName string = '%s'

@description('Name of the database %s uses (COSMOS_DATABASE).')
param databaseName string = '%s'

@description('Object id of the identity %s runs as: it gets Cosmos DB Built-in Data Contributor on the account. Empty: no role assignment.')
param principalId string = '%s'

resource account 'Microsoft.DocumentDB/databaseAccounts@%s' existing = {
  name: accountName
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@%s' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
    options: %s
  }
}

var containers = json('''
%s
''')

// One at a time, in the order of %s.
@batchSize(1)
resource container 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@%s' = [for c in containers: {
  parent: database
  name: c.id
  properties: {
    resource: c
  }
}]

resource dataContributor 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@%s' = if (!empty(principalId)) {
  parent: account
  name: guid(account.id, principalId, '%s')
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/%s'
    principalId: principalId
    scope: account.id
  }
}
`, src.what, src.from, src.file, throughputNote(tp), account, src.user, database, src.user, principal, armAPIVersion, armAPIVersion, options, js,
		src.from, armAPIVersion, armAPIVersion,
		dataContributorRole, dataContributorRole)
	return nil
}

func throughputNote(tp sharedThroughput) string {
	switch {
	case tp.Autoscale > 0:
		return fmt.Sprintf("shared autoscale, up to %d RU/s", tp.Autoscale)
	case tp.Manual > 0:
		return fmt.Sprintf("shared manual, %d RU/s", tp.Manual)
	}
	return "none: a serverless account; on a provisioned one each container gets 400 RU/s manual"
}

// writeAz writes the same as az commands, one per line group, each
// argument quoted for a POSIX shell.
func writeAz(w io.Writer, src containerSet, database, account, group, principal string, tp sharedThroughput) error {
	fmt.Fprintf(w, "# %s, generated by `shop containers -format az` from %s.\n", src.what, src.from)
	fmt.Fprintf(w, "# Database throughput: %s.\n", throughputNote(tp))
	fmt.Fprintf(w, "az cosmosdb sql database create --account-name %s --resource-group %s --name %s", shq(account), shq(group), shq(database))
	switch {
	case tp.Autoscale > 0:
		fmt.Fprintf(w, " --max-throughput %d", tp.Autoscale)
	case tp.Manual > 0:
		fmt.Fprintf(w, " --throughput %d", tp.Manual)
	}
	fmt.Fprintln(w)
	for _, def := range src.defs {
		c := toARM(def)
		idx, err := json.Marshal(c.IndexingPolicy)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "az cosmosdb sql container create --account-name %s --resource-group %s --database-name %s \\\n", shq(account), shq(group), shq(database))
		fmt.Fprintf(w, "  --name %s --partition-key-path %s", shq(c.ID), shq(c.PartitionKey.Paths[0]))
		if c.DefaultTTL != nil {
			fmt.Fprintf(w, " --ttl %d", *c.DefaultTTL)
		}
		if c.UniqueKeyPolicy != nil {
			uk, err := json.Marshal(c.UniqueKeyPolicy)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, " --unique-key-policy %s", shq(string(uk)))
		}
		fmt.Fprintf(w, " \\\n  --idx %s\n", shq(string(idx)))
	}
	if principal != "" {
		fmt.Fprintf(w, "az cosmosdb sql role assignment create --account-name %s --resource-group %s \\\n", shq(account), shq(group))
		fmt.Fprintf(w, "  --role-definition-id %s --principal-id %s --scope /\n", dataContributorRole, shq(principal))
	}
	return nil
}

// shq quotes s for a POSIX shell when it holds anything but safe
// characters; a placeholder such as <account> is quoted too, so a
// command run unedited fails on the name rather than on a redirection.
func shq(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
