package costlab

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/embedded"
)

// The backfill's cost part measures a small set of version-1 documents:
// every one it wrote is upgraded, each container's charges are reported
// per 1,000 documents, and a second measure (nothing left to upgrade)
// writes nothing.
func TestBackfillCost(t *testing.T) {
	ctx := context.Background()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "lab.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		t.Fatal(err)
	}
	const n = 12
	b, err := measureBackfill(ctx, s, n)
	if err != nil {
		t.Fatal(err)
	}
	if b.Total.Upgraded != 7*n || b.Total.Read != 7*n {
		t.Errorf("total %+v, want %d read and upgraded", b.Total, 7*n)
	}
	for _, r := range b.Containers {
		if r.Container == store.CartsContainer || r.Container == store.WebhooksContainer {
			continue
		}
		if r.Upgraded == 0 || r.ReadPer1000 <= 0 || r.WrittenPer1000 <= 0 {
			t.Errorf("%s: %+v", r.Container, r)
		}
	}
	var out bytes.Buffer
	writeBackfillPart(&out, costReport{Command: "go run ./cmd/shop cost", Backfill: b})
	for _, want := range []string{"| `products` |", "| **all** |", "RU written per 1,000 upgraded"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the part lacks %q:\n%s", want, out.String())
		}
	}
}
