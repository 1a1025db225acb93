package embedded

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

func TestFeedRanges(t *testing.T) {
	tests := []struct {
		n    int
		want []store.FeedRange
	}{
		{1, []store.FeedRange{{Min: "", Max: "FF"}}},
		{2, []store.FeedRange{{Min: "", Max: "80000000"}, {Min: "80000000", Max: "FF"}}},
		{4, []store.FeedRange{{Min: "", Max: "40000000"}, {Min: "40000000", Max: "80000000"}, {Min: "80000000", Max: "C0000000"}, {Min: "C0000000", Max: "FF"}}},
		{3, []store.FeedRange{{Min: "", Max: "55555556"}, {Min: "55555556", Max: "AAAAAAAB"}, {Min: "AAAAAAAB", Max: "FF"}}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, feedRanges(tt.n)); diff != "" {
				t.Errorf("ranges (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPartitionKeysHashIntoTheirRange: each key's hash lies inside the
// range of the partition it is stored in, and keys spread over them all.
func TestPartitionKeysHashIntoTheirRange(t *testing.T) {
	for _, n := range []int{1, 3, 4, 7} {
		ranges := feedRanges(n)
		used := map[int]int{}
		for i := range 1000 {
			pk := fmt.Sprintf("user-%d", i)
			p := locate(equalPartitions(n), pk)
			used[p]++
			h := fmt.Sprintf("%08X", fnv32a(pk))
			if r := ranges[p]; h < r.Min || (r.Max != "FF" && h >= r.Max) {
				t.Fatalf("n=%d: %s hashes to %s, outside its range %s", n, pk, h, r)
			}
		}
		if len(used) != n {
			t.Errorf("n=%d: 1000 keys used %d partitions", n, len(used))
		}
	}
	if got, want := fnv32a("a"), uint32(0xe40c292c); got != want {
		t.Errorf("fnv32a(a) = %#x, want %#x (FNV-1a, stable across runs)", got, want)
	}
}

func TestPhysicalPartitionsOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	s, err := Open(path, Options{PhysicalPartitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	ensure(t, s, "c", nil)
	ranges, err := s.Container("c").ReadFeedRanges(bg)
	if err != nil || len(ranges) != 3 {
		t.Fatalf("ReadFeedRanges: %d ranges, %v; want 3", len(ranges), err)
	}
	s.Close()
	// The count is part of the container's layout: reopening with another
	// default keeps it, new containers take the new one.
	s = openAt(t, path, Options{PhysicalPartitions: 5})
	if ranges, _ := s.Container("c").ReadFeedRanges(bg); len(ranges) != 3 {
		t.Errorf("after reopening with 5: %d ranges, want 3", len(ranges))
	}
	ensure(t, s, "d", nil)
	if ranges, _ := s.Container("d").ReadFeedRanges(bg); len(ranges) != 5 {
		t.Errorf("new container: %d ranges, want 5", len(ranges))
	}
	_, err = s.Container("c").ReadChangeFeed(bg, store.FeedRange{Min: "", Max: "FF"}, "", 10)
	if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
		t.Errorf("ReadChangeFeed of a range the container does not have: %q, want %q", got, want)
	}
}

func TestReopenKeepsItemsDefinitionsAndTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := ensure(t, s, "c", ttlOf(-1))
	for i := range 10 {
		if _, err := c.Create(bg, "p", doc("p", fmt.Sprintf("i%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.Query(bg, store.Query{PartitionKey: "p", Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := feedRanges(4)[locate(equalPartitions(4), "p")]
	feed, err := c.ReadChangeFeed(bg, r, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openAt(t, path, Options{})
	changed, err := s.EnsureContainer(bg, store.ContainerDef{ID: "c", PartitionKeyPath: "/pk", DefaultTTL: ttlOf(-1),
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}}})
	if err != nil || changed {
		t.Errorf("EnsureContainer of the same definition after reopening: changed %v, %v; want false", changed, err)
	}
	c = s.Container("c")
	next, err := c.Query(bg, store.Query{PartitionKey: "p", Limit: 100, Continuation: page.Continuation})
	if err != nil || len(next.Items) != 6 {
		t.Errorf("query continued after reopening: %d items, %v; want 6", len(next.Items), err)
	}
	rest, err := c.ReadChangeFeed(bg, r, feed.Continuation, 100)
	if err != nil || len(rest.Items) != 6 {
		t.Errorf("feed continued after reopening: %d items, %v; want 6", len(rest.Items), err)
	}
}

// TestFeedRemainingFromLSNs: Remaining is the latest LSN minus the
// continuation's, as Cosmos's estimator computes lag: exact when items are
// only created, an over-estimate after rewrites or deletes, and 0 once
// the reader has caught up, whatever was deleted.
func TestFeedRemainingFromLSNs(t *testing.T) {
	type read struct{ items, remaining int }
	tests := []struct {
		name  string
		write func(t *testing.T, c store.Container)
		reads []read
	}{
		{"creates only", func(*testing.T, store.Container) {}, []read{{4, 6}, {4, 2}, {2, 0}, {0, 0}}},
		{"rewrites ahead over-estimate", func(t *testing.T, c store.Container) {
			for range 3 {
				mustReplace(t, c, "i9")
			}
		}, []read{{4, 9}, {4, 5}, {2, 0}, {0, 0}}},
		{"newest deleted", func(t *testing.T, c store.Container) {
			if _, err := c.Delete(bg, "p", "i9", nil); err != nil {
				t.Fatal(err)
			}
		}, []read{{4, 6}, {4, 2}, {1, 0}, {0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t, Options{PhysicalPartitions: 1})
			c := ensure(t, s, "c", nil)
			for i := range 10 {
				if _, err := c.Create(bg, "p", doc("p", fmt.Sprintf("i%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			tt.write(t, c)
			r := store.FeedRange{Min: "", Max: "FF"}
			token := ""
			for i, want := range tt.reads {
				p, err := c.ReadChangeFeed(bg, r, token, 4)
				if err != nil {
					t.Fatal(err)
				}
				if got := (read{len(p.Items), int(p.Remaining)}); got != want {
					t.Errorf("page %d: %d items, Remaining %d; want %d items, Remaining %d", i, got.items, got.remaining, want.items, want.remaining)
				}
				token = p.Continuation
			}
		})
	}
}

func mustReplace(t *testing.T, c store.Container, id string) {
	t.Helper()
	if _, err := c.Replace(bg, "p", id, doc("p", id), nil); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureContainerValidates(t *testing.T) {
	s := openTemp(t, Options{})
	tests := []struct {
		name string
		def  store.ContainerDef
	}{
		{"no name", store.ContainerDef{PartitionKeyPath: "/pk"}},
		{"name with slash", store.ContainerDef{ID: "a/b", PartitionKeyPath: "/pk"}},
		{"no partition key path", store.ContainerDef{ID: "a"}},
		{"path without slash", store.ContainerDef{ID: "a", PartitionKeyPath: "pk"}},
		{"zero default ttl", store.ContainerDef{ID: "a", PartitionKeyPath: "/pk", DefaultTTL: ttlOf(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.EnsureContainer(bg, tt.def)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want {
				t.Errorf("code %q (%v), want %q", got, err, want)
			}
		})
	}
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "shop.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := ensure(t, s, "c", nil)
	if err := s.Ping(bg); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	s.Close()
	if got, want := domain.ErrorCode(s.Ping(bg)), domain.EUNAVAILABLE; got != want {
		t.Errorf("Ping after Close: %q, want %q", got, want)
	}
	_, err = c.Read(bg, "p", "a")
	if got, want := domain.ErrorCode(err), domain.EUNAVAILABLE; got != want {
		t.Errorf("Read after Close: %q, want %q", got, want)
	}
}

func TestUniqueKeysCannotChange(t *testing.T) {
	s := openTemp(t, Options{})
	def := store.ContainerDef{ID: "c", PartitionKeyPath: "/pk", UniqueKeys: [][]string{{"/email"}}}
	if _, err := s.EnsureContainer(bg, def); err != nil {
		t.Fatal(err)
	}
	def.UniqueKeys = [][]string{{"/other"}}
	_, err := s.EnsureContainer(bg, def)
	if got, want := domain.ErrorCode(err), domain.ECONFLICT; got != want {
		t.Errorf("EnsureContainer changing unique keys: %q, want %q", got, want)
	}
}
