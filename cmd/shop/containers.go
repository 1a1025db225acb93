package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/provision"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// containers prints the database and the shop's containers, generated
// from migrations.Containers (the one list `shop migrate` applies), as a
// Bicep file or as az commands (provision.Bicep, provision.Az), so that
// the owner of an account whose local (key) auth is disabled can
// provision what the shop, keyless, cannot create: Cosmos's data-plane
// roles cover items and queries, not databases and containers. With -contract it prints the contract
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
	src := provision.Set{Defs: migrations.Containers, What: "The shop's database and containers", From: "migrations/containers.go",
		File: "shop.bicep", User: "the shop"}
	if *contract {
		src = provision.Set{Defs: suite.Containers(), From: "store/storetest/suite", File: "contract.bicep", User: "the contract suite (TestContract)"}
		src.What = fmt.Sprintf("The contract suite's %d containers and their database", len(src.Defs))
		if !set["database"] {
			*database = suite.Database
		}
		if n := len(src.Defs); (tp != provision.Throughput{}) && n > provision.MaxSharedContainers {
			return fmt.Errorf("containers: -contract -throughput %s: a database of shared throughput holds at most %d containers, "+
				"the contract suite has %d: use serverless (a serverless account; on a provisioned one each container gets 400 RU/s)",
				*throughput, provision.MaxSharedContainers, n)
		}
	}
	if *database == "" {
		return fmt.Errorf("containers: -database must not be empty")
	}
	write := map[string]func(io.Writer, provision.Set, provision.Target) error{"bicep": provision.Bicep, "az": provision.Az}[*format]
	if write == nil {
		return fmt.Errorf("containers: -format %q: want bicep or az", *format)
	}
	t := provision.Target{Database: *database, Account: *account, ResourceGroup: *group, Principal: *principal, Throughput: tp}
	if err := write(stdout, src, t); err != nil {
		return fmt.Errorf("containers: %w", err)
	}
	return nil
}

// parseThroughput reads -throughput: serverless (or none), autoscale:N
// or manual:N, within what Cosmos takes of a database's throughput.
func parseThroughput(s string) (provision.Throughput, error) {
	if s == "serverless" || s == "none" {
		return provision.Throughput{}, nil
	}
	kind, n, ok := strings.Cut(s, ":")
	ru, err := strconv.Atoi(n)
	bad := fmt.Errorf("containers: -throughput %q: want serverless, autoscale:N (N a multiple of 1000) or manual:N (N at least 400, a multiple of 100)", s)
	if !ok || err != nil {
		return provision.Throughput{}, bad
	}
	switch {
	case kind == "autoscale" && ru >= 1000 && ru%1000 == 0:
		return provision.Throughput{Autoscale: ru}, nil
	case kind == "manual" && ru >= 400 && ru%100 == 0:
		return provision.Throughput{Manual: ru}, nil
	}
	return provision.Throughput{}, bad
}
