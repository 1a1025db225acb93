package scale

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunWritesItsSectionBetweenTheMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scale.md")
	const prose = "# Scale\n\nProse the command keeps.\n\n<!-- begin: shop scale (generated) -->\nold figures\n<!-- end: shop scale -->\n\nMore prose.\n"
	if err := os.WriteFile(path, []byte(prose), 0o644); err != nil {
		t.Fatal(err)
	}
	noCosmos := func(string) string { return "" }
	if err := Run(t.Context(), []string{"--reps", "2", "--write-docs", path}, noCosmos, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"Prose the command keeps.", "More prose.", "go run ./cmd/shop scale --reps 2", "### 10 million users, 50,000 requests/s"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document lacks %q", want)
		}
	}
	if strings.Contains(doc, "old figures") {
		t.Error("the old section is still there")
	}
}

func TestRunRefusesBadAssumptions(t *testing.T) {
	for _, args := range [][]string{{"--flash", "1.5"}, {"--reps", "0"}, {"--peak-hours", "25"}, {"--orders-per-user", "-1"}} {
		if err := Run(t.Context(), args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("scale %v: no error", args)
		}
	}
}

func TestStatusViewRunsEachBucketCount(t *testing.T) {
	var out strings.Builder
	args := []string{"--status-view", "--duration", "1s", "--rate", "10", "--buckets", "1,4", "--markdown"}
	if err := Run(t.Context(), args, func(string) string { return "" }, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| status buckets | checkouts | success rate | 503s | p99 (ms) |", "\n| 1 | 10 | ", "\n| 4 | 10 | "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{{"--status-view", "--buckets", "0"}, {"--status-view", "--buckets", "1,99"}, {"--status-view", "--duration", "5m"}, {"--status-view", "--rate", "0"}} {
		if err := Run(t.Context(), bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("scale %v: no error", bad)
		}
	}
}
