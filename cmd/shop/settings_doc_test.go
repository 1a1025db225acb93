package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's configuration table")

const (
	tableBegin = "<!-- begin: settings (checked by cmd/shop's tests) -->\n"
	tableEnd   = "<!-- end: settings -->"
)

// The README's configuration table is generated from the settings, so it
// cannot drift: `go test ./cmd/shop -run README -update` rewrites it.
func TestREADMEConfigurationTable(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, tableBegin), strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q ... %q block", tableBegin, tableEnd)
	}
	got, want := readme[i+len(tableBegin):j], settingsTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i+len(tableBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's configuration table is out of date; run go test ./cmd/shop -run README -update\n got:\n%s\nwant:\n%s", got, want)
}
