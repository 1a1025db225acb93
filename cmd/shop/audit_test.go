package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// TestShopAuditFindsAndRepairsDrift runs the command as an operator
// would: on a seeded store with one summary corrupted behind the feed's
// back, `shop audit` names it and fails; `shop audit --repair` rewrites
// it; a second audit finds nothing and says what it cost.
func TestShopAuditFindsAndRepairsDrift(t *testing.T) {
	dir := t.TempDir()
	env := func(string) string { return "" }
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"shop", "seed", "--data-dir", dir, "--products", "30", "--reviews", "60", "--categories", "3"}, env, &out); err != nil {
		t.Fatalf("seed: %v\n%s", err, out.String())
	}

	s, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Container(store.ProductsByCategoryContainer)
	page, err := c.Query(ctx, store.Query{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("a summary: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(page.Items[0], &doc); err != nil {
		t.Fatal(err)
	}
	id, cat := doc["id"].(string), doc["categoryId"].(string)
	doc["priceCents"] = 1
	b, _ := json.Marshal(doc)
	if _, err := c.Replace(ctx, cat, id, b, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	audit := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"shop", "audit", "--data-dir", dir, "--ru-per-second", "0"}, args...), env, &out)
		return out.String(), err
	}
	got, err := audit()
	if err == nil || !strings.Contains(err.Error(), "1 copies differ") {
		t.Fatalf("shop audit of a corrupted summary: %v, want 1 copy differing\n%s", err, got)
	}
	if want := "DIFFERS productsByCategory productsByCategory/" + cat + "/" + id + ": priceCents is 1"; !strings.Contains(got, want) {
		t.Errorf("shop audit printed\n%s\nwant a line with %q", got, want)
	}
	if got, err = audit("--repair"); err != nil || !strings.Contains(got, "[repaired]") {
		t.Fatalf("shop audit --repair: %v\n%s", err, got)
	}
	if got, err = audit(); err != nil {
		t.Fatalf("shop audit after the repair: %v\n%s", err, got)
	}
	if !strings.Contains(got, "cost: ") || strings.Contains(got, "DIFFERS") {
		t.Errorf("shop audit after the repair printed\n%s", got)
	}
}
