// Package provision writes container definitions (store.ContainerDef, the
// data migrations.Containers holds) as what the owner of a Cosmos account
// deploys: a Bicep file or az commands. An account whose local (key) auth
// is disabled lets the shop, keyless, read and write items but not create
// databases and containers (Cosmos's data-plane roles cover items and
// queries only), so its owner provisions them from this output, generated
// from the same definitions `shop migrate` applies, so the two cannot
// drift. It needs no account and opens no store; `shop containers` is
// its command.
package provision

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reference-shop/shop/store"
)

// armAPIVersion is the Microsoft.DocumentDB API version the Bicep uses: a
// stable version that has sqlDatabases, containers and sqlRoleAssignments.
const armAPIVersion = "2023-11-15"

// dataContributorRole is the id of Cosmos DB's built-in "Cosmos DB
// Built-in Data Contributor" data-plane role: items and queries, no
// management operations.
const dataContributorRole = "00000000-0000-0000-0000-000000000002"

// MaxSharedContainers is how many containers a database of shared
// throughput holds at most (Cosmos's service quotas).
const MaxSharedContainers = 25

// Set is what is provisioned: the definitions, what they are (the first
// line of the output), the file of the source they come from, the Bicep
// file's name, and who uses them (the Bicep's parameter descriptions).
type Set struct {
	Defs                   []store.ContainerDef
	What, From, File, User string
}

// Throughput is the database's throughput: none (zero: a serverless
// account, or 400 RU/s manual per container on a provisioned one),
// autoscale up to Autoscale RU/s, or Manual RU/s, shared by its
// containers.
type Throughput struct {
	Autoscale, Manual int
}

// Target is where a Set goes: the database, the existing account and its
// resource group (az commands only), the identity granted the Data
// Contributor role on the account (empty: no role assignment), and the
// database's throughput.
type Target struct {
	Database, Account, ResourceGroup, Principal string
	Throughput                                  Throughput
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

// Bicep writes src for t as one Bicep file: the existing account, the
// database, the containers from one JSON array (a multi-line string has
// no escapes, so the JSON is exactly what encoding/json wrote), and the
// role assignment when principalId is set. The account, the database
// and the principal are its parameters' defaults.
func Bicep(w io.Writer, src Set, t Target) error {
	database, account, principal, tp := t.Database, t.Account, t.Principal, t.Throughput
	var arm []armContainer
	for _, def := range src.Defs {
		arm = append(arm, toARM(def))
	}
	js, err := json.MarshalIndent(arm, "", "  ")
	if err != nil {
		return err
	}
	if strings.Contains(string(js), "'''") {
		return errors.New("a definition holds ''', which a Bicep multi-line string cannot")
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
`, src.What, src.From, src.File, throughputNote(tp), account, src.User, database, src.User, principal, armAPIVersion, armAPIVersion, options, js,
		src.From, armAPIVersion, armAPIVersion,
		dataContributorRole, dataContributorRole)
	return nil
}

func throughputNote(tp Throughput) string {
	switch {
	case tp.Autoscale > 0:
		return fmt.Sprintf("shared autoscale, up to %d RU/s", tp.Autoscale)
	case tp.Manual > 0:
		return fmt.Sprintf("shared manual, %d RU/s", tp.Manual)
	}
	return "none: a serverless account; on a provisioned one each container gets 400 RU/s manual"
}

// Az writes what Bicep writes as az commands, one per line group, each
// argument quoted for a POSIX shell.
func Az(w io.Writer, src Set, t Target) error {
	database, account, group, principal, tp := t.Database, t.Account, t.ResourceGroup, t.Principal, t.Throughput
	fmt.Fprintf(w, "# %s, generated by `shop containers -format az` from %s.\n", src.What, src.From)
	fmt.Fprintf(w, "# Database throughput: %s.\n", throughputNote(tp))
	fmt.Fprintf(w, "az cosmosdb sql database create --account-name %s --resource-group %s --name %s", shq(account), shq(group), shq(database))
	switch {
	case tp.Autoscale > 0:
		fmt.Fprintf(w, " --max-throughput %d", tp.Autoscale)
	case tp.Manual > 0:
		fmt.Fprintf(w, " --throughput %d", tp.Manual)
	}
	fmt.Fprintln(w)
	for _, def := range src.Defs {
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
