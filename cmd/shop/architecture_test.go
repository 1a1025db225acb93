package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goPackage is what the architecture test needs of `go list -json`.
type goPackage struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// listPackages returns the module's packages (production code only: no
// test imports) as go list reports them.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// documentedMap reads the package map of docs/architecture.md: package →
// the shop packages it imports.
func documentedMap(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- package map: checked by cmd/shop/architecture_test.go -->", "<!-- end package map -->"
	_, rest, ok := bytes.Cut(b, []byte(begin))
	table, _, ok2 := bytes.Cut(rest, []byte(end))
	if !ok || !ok2 {
		t.Fatalf("docs/architecture.md: the package map's markers are missing")
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		cells := strings.Split(strings.Trim(strings.TrimSpace(sc.Text()), "|"), "|")
		if len(cells) != 3 || !strings.Contains(cells[0], "`") {
			continue
		}
		pkg := "github.com/reference-shop/shop/" + strings.Trim(strings.TrimSpace(cells[0]), "`")
		imports := []string{}
		for _, f := range strings.Split(cells[2], ",") {
			if f = strings.Trim(strings.TrimSpace(f), "`"); f != "" && f != "—" {
				imports = append(imports, "github.com/reference-shop/shop/"+f)
			}
		}
		slices.Sort(imports)
		m[pkg] = imports
	}
	return m
}

// TestPackageMapMatchesTheImports: the package map of docs/architecture.md
// is the import graph, both ways: every package is listed, with exactly
// the shop packages it imports.
func TestPackageMapMatchesTheImports(t *testing.T) {
	actual := map[string][]string{}
	for _, p := range listPackages(t) {
		shop := []string{}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/reference-shop/shop/") {
				shop = append(shop, imp)
			}
		}
		slices.Sort(shop)
		actual[p.ImportPath] = shop
	}
	if diff := cmp.Diff(documentedMap(t), actual); diff != "" {
		t.Errorf("docs/architecture.md's package map is not the import graph (-documented +go list):\n%s", diff)
	}
}

// TestDependencyRules: the rules the package map is drawn by.
func TestDependencyRules(t *testing.T) {
	pkgs := listPackages(t)
	std := map[string]bool{}
	cmd := exec.Command("go", "list", "std")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		std[p] = true
	}
	const shop = "github.com/reference-shop/shop/"
	adapters := []string{"github.com/reference-shop/shop/store/embedded", "github.com/reference-shop/shop/store/cosmos"}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			switch {
			case p.ImportPath == "github.com/reference-shop/shop/domain" && !std[imp] && !strings.HasPrefix(imp, "golang.org/x/text/"):
				t.Errorf("domain imports %s: it may import only the standard library and golang.org/x/text", imp)
			case strings.HasPrefix(imp, "github.com/Azure/") && p.ImportPath != "github.com/reference-shop/shop/store/cosmos":
				t.Errorf("%s imports %s: only store/cosmos speaks to the Azure SDK", p.ImportPath, imp)
			case p.ImportPath == "github.com/reference-shop/shop/api/client" && strings.HasPrefix(imp, "github.com/reference-shop/shop/"):
				t.Errorf("api/client imports %s: a program outside the shop must be able to use it, so it knows the API only through openapi.yaml", imp)
			case p.ImportPath == shop+"store" && strings.HasPrefix(imp, shop) && imp != shop+"domain":
				t.Errorf("store imports %s: the port, its limits and its decorators know only domain; the repositories (store/repo) are built on the port, not inside it", imp)
			case p.ImportPath == shop+"store/repo" && strings.HasPrefix(imp, shop) && imp != shop+"domain" && imp != shop+"store":
				t.Errorf("store/repo imports %s: the repositories speak to the port (store) alone, so either adapter serves them", imp)
			case strings.HasPrefix(p.ImportPath, shop+"api") && imp == shop+"feedworkers":
				t.Errorf("%s imports feedworkers: the HTTP side reads the feed workers' state through Deps.Feeds, which cmd/shop wires", p.ImportPath)
			case strings.HasPrefix(p.ImportPath, shop+"api/") && strings.HasPrefix(imp, shop+"feedworkers"):
				t.Errorf("%s imports %s: the read cache follows the change feed with the reader cmd/shop hands its Follow, so the packages under api know nothing of the feed workers", p.ImportPath, imp)
			case p.ImportPath == "github.com/reference-shop/shop/api/httpserver" && strings.HasPrefix(imp, "github.com/reference-shop/shop/") &&
				imp != "github.com/reference-shop/shop/api" && imp != "github.com/reference-shop/shop/domain":
				t.Errorf("api/httpserver imports %s: the server's plumbing knows the shop only through the API's answers (api, domain), never a store or a worker", imp)
			case slices.Contains(adapters, imp) && (strings.HasPrefix(p.ImportPath, "github.com/reference-shop/shop/api") || strings.HasPrefix(p.ImportPath, "github.com/reference-shop/shop/feedworkers") || strings.HasPrefix(p.ImportPath, "github.com/reference-shop/shop/store/writes")):
				t.Errorf("%s imports the adapter %s: it must work on the port alone", p.ImportPath, imp)
			}
		}
	}
}
