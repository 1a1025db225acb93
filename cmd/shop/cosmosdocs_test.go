package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store/embedded"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// The path to Cosmos in docs/cosmos.md must work as written. These tests
// run what can run without an account: its seed commands, its secrets.

// TestCosmosDocsSeedWhatTheWorkshopUses: every `shop seed` command of
// docs/cosmos.md loads a catalog holding every product and category the
// workshop and that page name (p-0147 among them), so the workshop runs
// on Cosmos as it does on the embedded store's first start.
func TestCosmosDocsSeedWhatTheWorkshopUses(t *testing.T) {
	doc := readDoc(t, "cosmos.md")
	// Commands, not prose: a line that starts with the command.
	seeds := regexp.MustCompile(`(?m)^\s*(?:docker compose run --rm shop|go run \./cmd/shop|shop) seed\b([^\n]*)$`).FindAllStringSubmatch(doc, -1)
	if len(seeds) == 0 {
		t.Fatal("docs/cosmos.md has no shop seed command")
	}
	var text strings.Builder
	text.WriteString(doc)
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "workshop", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("workshop pages: %v", err)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
	}
	products := unique(regexp.MustCompile(`\bp-\d{4}\b`).FindAllString(text.String(), -1))
	var categories []string
	for _, m := range regexp.MustCompile(`/v1/categories/([a-z][a-z-]*)`).FindAllStringSubmatch(text.String(), -1) {
		if m[1] != "no-such-category" { // the workshop's 404
			categories = append(categories, m[1])
		}
	}
	categories = unique(categories)
	for _, m := range seeds {
		args := strings.Fields(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(m[1], "#", 2)[0]), "\\"))
		t.Run(strings.Join(append([]string{"seed"}, args...), " "), func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			// The data directory first: flag parsing stops at an argument
			// that is not a flag, and must never fall back to ./data.
			if err := run(context.Background(), append([]string{"shop", "seed", "--data-dir", dir}, args...), envOf(), &out); err != nil {
				t.Fatalf("seed: %v\n%s", err, out.String())
			}
			st, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			repos := repo.New(st, 0)
			ctx := context.Background()
			for _, id := range products {
				if _, err := repos.Products.Get(ctx, id); err != nil {
					t.Errorf("product %s, which the docs use: %v", id, err)
				}
			}
			cs, err := repos.Products.Categories(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range categories {
				if !slices.ContainsFunc(cs.Items, func(c domain.Category) bool { return c.ID == id }) {
					t.Errorf("category %s, which the docs use, is not in the catalog", id)
				}
			}
		})
	}
}

// TestCosmosDocsSecretsAreAccepted: every SHOP_JWT_SECRET docs/cosmos.md
// and docker-compose.yml set is one `shop serve` accepts with Cosmos.
func TestCosmosDocsSecretsAreAccepted(t *testing.T) {
	compose, err := os.ReadFile(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := readDoc(t, "cosmos.md") + string(compose)
	secrets := regexp.MustCompile(`SHOP_JWT_SECRET[=:]\s*'?([^\s'<]+)`).FindAllStringSubmatch(text, -1)
	if len(secrets) == 0 {
		t.Fatal("no SHOP_JWT_SECRET in docs/cosmos.md or docker-compose.yml")
	}
	for _, m := range secrets {
		if strings.HasPrefix(m[1], "$") {
			continue // made by a command the reader runs
		}
		c, err := parseConfig("serve", nil, envOf("COSMOS_ENDPOINT=https://acct.documents.azure.com:443/", "SHOP_JWT_SECRET="+m[1]), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.secret(); err != nil {
			t.Errorf("SHOP_JWT_SECRET=%s: %v", m[1], err)
		}
	}
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func unique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// TestCosmosDocsContainersCommandsRun: every `shop containers` command of
// docs/cosmos.md runs as written (its flags are the command's), and every
// parameter an `az deployment group create` of the page passes is one the
// generated Bicep declares.
func TestCosmosDocsContainersCommandsRun(t *testing.T) {
	doc := readDoc(t, "cosmos.md")
	cmds := regexp.MustCompile(`(?m)^\s*(?:go run \./cmd/shop|shop) containers\b([^\n>]*)`).FindAllStringSubmatch(doc, -1)
	if len(cmds) < 2 {
		t.Fatalf("docs/cosmos.md has %d shop containers commands, want the Bicep and the az ones", len(cmds))
	}
	var bicep strings.Builder
	formats := map[string]bool{}
	for _, m := range cmds {
		args := strings.Fields(m[1])
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"shop", "containers"}, args...), envOf(), &out); err != nil {
			t.Errorf("shop containers %s: %v", m[1], err)
			continue
		}
		format := "bicep"
		if i := slices.Index(args, "-format"); i >= 0 && i+1 < len(args) {
			format = args[i+1]
		}
		formats[format] = true
		if format == "bicep" {
			bicep.WriteString(out.String())
		}
	}
	if !formats["bicep"] || !formats["az"] {
		t.Errorf("the page's shop containers commands print %v, want both bicep and az", formats)
	}
	deploys := regexp.MustCompile(`az deployment group create(?:[^\n\\]|\\\n)*`).FindAllString(doc, -1)
	if len(deploys) == 0 {
		t.Fatal("docs/cosmos.md deploys no Bicep")
	}
	params := 0
	for _, d := range deploys {
		for _, p := range regexp.MustCompile(`\b(\w+)=<`).FindAllStringSubmatch(d, -1) {
			params++
			if !strings.Contains(bicep.String(), "param "+p[1]+" ") {
				t.Errorf("%q passes %s, which the generated Bicep does not declare", d, p[1])
			}
		}
	}
	if params == 0 {
		t.Error("no az deployment group create of docs/cosmos.md passes accountName: the Bicep's default is a placeholder")
	}
}

// TestCosmosDocsContractContainerCount: every figure docs/cosmos.md gives
// as "the contract suite's N containers" is the count of the list `shop
// containers -contract` deploys (suite.Containers), so the page's advice
// on throughput (a shared-throughput database holds at most 25) follows
// the suite as it grows.
func TestCosmosDocsContractContainerCount(t *testing.T) {
	doc := readDoc(t, "cosmos.md")
	ms := regexp.MustCompile(`(?i)the contract suite's\s+(\d+)\s+containers`).FindAllStringSubmatch(doc, -1)
	if len(ms) == 0 {
		t.Fatal(`docs/cosmos.md does not say how many containers the contract needs ("the contract suite's N containers")`)
	}
	for _, m := range ms {
		if n, _ := strconv.Atoi(m[1]); n != len(suite.Containers()) {
			t.Errorf("docs/cosmos.md: %q, but suite.Containers holds %d", m[0], len(suite.Containers()))
		}
	}
}
