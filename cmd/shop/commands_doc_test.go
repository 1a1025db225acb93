package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMENamesEveryCommand: the README's package table names each
// subcommand of the commands table, and its Commands section shows how
// to run each, so a new command cannot go unmentioned.
func TestREADMENamesEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	row := regexp.MustCompile("(?m)^\\| `cmd/shop` \\|(.*)\\|$").FindStringSubmatch(readme)
	if row == nil {
		t.Fatal("README: no package table row for cmd/shop")
	}
	for name := range commands {
		if !strings.Contains(row[1], "`"+name+"`") {
			t.Errorf("README: the cmd/shop row of the package table does not name `%s`", name)
		}
		if name != "serve" && !strings.Contains(readme, "go run ./cmd/shop "+name) {
			t.Errorf("README: the Commands section shows no `go run ./cmd/shop %s`", name)
		}
	}
}
