package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// The generated Bicep and az commands themselves are tested with their
// generator (migrations/provision); these tests hold the command: which
// definitions its flags pick, under which database, and what it refuses.

func runContainers(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"shop", "containers"}, args...), envOf(), &out); err != nil {
		t.Fatalf("shop containers %v: %v", args, err)
	}
	return out.String()
}

// containerIDs is the container ids the output declares, in order: the
// Bicep's JSON array ("id": ...), or the az commands' --name.
func containerIDs(out string) []string {
	var got []string
	for _, m := range regexp.MustCompile(`"id": "([^"]+)"|--name (\S+) --partition-key-path`).FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+m[2])
	}
	return got
}

func idsOf(defs []store.ContainerDef) []string {
	var got []string
	for _, d := range defs {
		got = append(got, d.ID)
	}
	return got
}

// TestContainersAreTheMigrations: by default the command prints
// migrations.Containers, in both formats, under the database and for
// the account, group and principal its flags name.
func TestContainersAreTheMigrations(t *testing.T) {
	want := idsOf(migrations.Containers)
	out := runContainers(t, "-format", "bicep", "-database", "shop-test", "-account", "acct", "-principal-id", "1111-2222", "-throughput", "manual:400")
	if diff := cmp.Diff(want, containerIDs(out)); diff != "" {
		t.Errorf("the Bicep's containers are not migrations.Containers (-want +got):\n%s", diff)
	}
	for _, s := range []string{"param accountName string = 'acct'", "param databaseName string = 'shop-test'", "param principalId string = '1111-2222'",
		"options: {\n      throughput: 400\n", "migrations/containers.go"} {
		if !strings.Contains(out, s) {
			t.Errorf("the Bicep lacks %q", s)
		}
	}
	out = runContainers(t, "-format", "az", "-database", "shop-test", "-account", "acct", "-resource-group", "rg", "-throughput", "autoscale:1000", "-principal-id", "1111-2222")
	if diff := cmp.Diff(want, containerIDs(out)); diff != "" {
		t.Errorf("the az commands' containers are not migrations.Containers (-want +got):\n%s", diff)
	}
	for _, s := range []string{"--account-name acct --resource-group rg --name shop-test --max-throughput 1000\n", "--principal-id 1111-2222"} {
		if !strings.Contains(out, s) {
			t.Errorf("the az commands lack %q:\n%s", s, out)
		}
	}
	if out := runContainers(t); !strings.Contains(out, "param databaseName string = '"+migrations.Database+"'") {
		t.Errorf("no -database: not the shop's database %q:\n%s", migrations.Database, out)
	}
}

// TestContainersContract: -contract prints the contract suite's
// containers (suite.Containers; that they come back whole, unique keys
// and composite indexes included, is provision's
// TestContractContainersComeBack) instead of the shop's, in both formats, under the database
// suite.Database unless -database names another, and says how many
// they are. A database of shared throughput holds at most 25 containers,
// fewer than the suite's, so -contract refuses shared throughput.
func TestContainersContract(t *testing.T) {
	want := suite.Containers()
	count := fmt.Sprintf("The contract suite's %d containers", len(want))
	out := runContainers(t, "-contract", "-account", "acct")
	if diff := cmp.Diff(idsOf(want), containerIDs(out)); diff != "" {
		t.Errorf("-contract Bicep containers are not suite.Containers (-want +got):\n%s", diff)
	}
	for _, s := range []string{"param databaseName string = '" + suite.Database + "'", count, "store/storetest/suite"} {
		if !strings.Contains(out, s) {
			t.Errorf("the -contract Bicep lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "migrations/containers.go") {
		t.Errorf("the -contract Bicep speaks of the shop's migrations:\n%s", out)
	}
	if out := runContainers(t, "-contract", "-database", "st-other"); !strings.Contains(out, "param databaseName string = 'st-other'") {
		t.Errorf("-contract -database st-other: not the database:\n%s", out)
	}

	out = runContainers(t, "-contract", "-format", "az", "-account", "acct", "-resource-group", "rg")
	text := strings.ReplaceAll(out, "\\\n", "")
	if diff := cmp.Diff(idsOf(want), containerIDs(text)); diff != "" {
		t.Errorf("-contract az containers are not suite.Containers (-want +got):\n%s", diff)
	}
	if !strings.Contains(text, "--database-name "+suite.Database+" ") {
		t.Errorf("-contract az commands: not the database %s:\n%s", suite.Database, out)
	}
	if !strings.Contains(text, count) || strings.Contains(text, "migrations/containers.go") {
		t.Errorf("the -contract az commands do not say how many containers, or name the shop's:\n%s", out)
	}

	if len(want) <= 25 {
		t.Fatalf("the suite has %d containers: a shared-throughput database holds them, so -contract may allow shared throughput", len(want))
	}
	for _, tp := range []string{"autoscale:1000", "manual:400"} {
		err := run(context.Background(), []string{"shop", "containers", "-contract", "-throughput", tp}, envOf(), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "25") {
			t.Errorf("-contract -throughput %s: %v, want a refusal naming the limit of 25 containers", tp, err)
		}
	}
}

// TestBinaryHasNoTestingPackage: the binary links no testing package,
// although `shop containers -contract` prints the contract suite's
// containers (store/storetest/suite holds them as data, for this).
func TestBinaryHasNoTestingPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if slices.Contains(strings.Fields(string(out)), "testing") {
		t.Error("cmd/shop depends on the testing package")
	}
}

// TestContainersBadFlags: a flag the command cannot honour is refused,
// saying what it wants.
func TestContainersBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-format", "arm"},
		{"-throughput", "autoscale:1500"},
		{"-throughput", "manual:300"},
		{"-throughput", "shared"},
		{"-database", ""},
		{"extra"},
	} {
		err := run(context.Background(), append([]string{"shop", "containers"}, args...), envOf(), &bytes.Buffer{})
		if err == nil {
			t.Errorf("shop containers %v: no error", args)
		} else if !strings.Contains(err.Error(), "containers:") {
			t.Errorf("shop containers %v: %v, want an error naming the command", args, err)
		}
	}
}
