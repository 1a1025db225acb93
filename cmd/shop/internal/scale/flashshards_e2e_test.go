package scale

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlashShardsEndToEnd runs the command on the real binary with one
// short point: the shop as a child, the shards set through the admin
// API, the checkouts over HTTP, the throughput read back, the section
// written. No figure is judged: the machine may be busy.
func TestFlashShardsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the shop binary: skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "shop")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/reference-shop/shop/cmd/shop").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := filepath.Join(t.TempDir(), "scale.md")
	args := []string{"--flash-shards", "--shop", bin, "--shards", "2", "--rates", "20", "--duration", "1s", "--partitions", "4",
		"--sellout-units", "10", "--sellout-rate", "20", "--prealloc-units", "160", "--write-docs", path}
	if err := Run(t.Context(), args, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"<!-- begin: shop scale flash shards (generated) -->", "\n| 2 | ", " | 20 | 20 | ", "(sell-out of 10 units, ", "#### Preallocated units against the counter"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the section lacks %q:\n%s", want, doc)
		}
	}
}
