package embedded

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reference-shop/shop/store"
)

var bg = context.Background()

// clock is a settable clock for TTL tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// openAt opens the store at path, closed when t ends.
func openAt(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openTemp(t *testing.T, opts Options) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "shop.db"), opts)
}

// ensure creates a container keyed by /pk.
func ensure(t *testing.T, s *Store, name string, defaultTTL *int) store.Container {
	t.Helper()
	def := store.ContainerDef{ID: name, PartitionKeyPath: "/pk", DefaultTTL: defaultTTL,
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}}}
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatalf("EnsureContainer: %v", err)
	}
	return s.Container(name)
}

func doc(pk, id string, kv ...any) []byte {
	m := map[string]any{"id": id, "pk": pk}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func ttlOf(n int) *int { return &n }

func decodeMap(t *testing.T, item []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(item, &m); err != nil {
		t.Fatalf("item is not a JSON object: %v", err)
	}
	return m
}
