package cosmos

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/store"
)

func TestContainerPropertiesOfEveryMigration(t *testing.T) {
	for _, def := range migrations.Containers {
		t.Run(def.ID, func(t *testing.T) {
			if err := checkDef(def); err != nil {
				t.Fatalf("checkDef: %v", err)
			}
			p := containerProperties(def)
			pk := p.PartitionKeyDefinition
			if got, want := pk.Kind, azcosmos.PartitionKeyKindHash; got != want {
				t.Errorf("partition key kind = %q, want %q", got, want)
			}
			if got, want := pk.Version, 2; got != want {
				t.Errorf("partition key version = %d, want %d", got, want)
			}
			if len(pk.Paths) != 1 || pk.Paths[0] != def.PartitionKeyPath {
				t.Errorf("partition key paths = %v, want [%s]", pk.Paths, def.PartitionKeyPath)
			}
			if (def.DefaultTTL == nil) != (p.DefaultTimeToLive == nil) ||
				(def.DefaultTTL != nil && int32(*def.DefaultTTL) != *p.DefaultTimeToLive) {
				t.Errorf("default TTL = %v, want %v", p.DefaultTimeToLive, def.DefaultTTL)
			}
			if got, want := len(p.IndexingPolicy.CompositeIndexes), len(def.IndexingPolicy.CompositeIndexes); got != want {
				t.Errorf("composite indexes = %d, want %d", got, want)
			}
			// What Create sends must read back as equal: else every
			// migrate would replace the container again.
			if !sameIndexing(p.IndexingPolicy, asReturned(p.IndexingPolicy)) {
				t.Errorf("the policy does not equal itself as Cosmos returns it")
			}
		})
	}
}

// asReturned mimics what the service answers for a policy it stored:
// lower-case mode, the _etag exclusion added, paths in another order.
func asReturned(p *azcosmos.IndexingPolicy) *azcosmos.IndexingPolicy {
	out := *p
	out.IndexingMode = "consistent"
	out.IncludedPaths = append([]azcosmos.IncludedPath(nil), p.IncludedPaths...)
	for i, j := 0, len(out.IncludedPaths)-1; i < j; i, j = i+1, j-1 {
		out.IncludedPaths[i], out.IncludedPaths[j] = out.IncludedPaths[j], out.IncludedPaths[i]
	}
	out.ExcludedPaths = append(append([]azcosmos.ExcludedPath(nil), p.ExcludedPaths...), azcosmos.ExcludedPath{Path: etagPath})
	return &out
}

func TestSameIndexingNoticesChanges(t *testing.T) {
	base := store.IndexingPolicy{
		IncludedPaths: []string{"/*"},
		ExcludedPaths: []string{"/description/?"},
		CompositeIndexes: [][]store.CompositePath{
			{{Path: "/name", Order: "ascending"}, {Path: "/id", Order: "ascending"}},
		},
	}
	tests := []struct {
		name   string
		change func(p *store.IndexingPolicy)
		same   bool
	}{
		{"unchanged", func(*store.IndexingPolicy) {}, true},
		{"the _etag exclusion spelled out", func(p *store.IndexingPolicy) { p.ExcludedPaths = append(p.ExcludedPaths, etagPath) }, true},
		{"a path no longer excluded", func(p *store.IndexingPolicy) { p.ExcludedPaths = nil }, false},
		{"another included path", func(p *store.IndexingPolicy) { p.IncludedPaths = []string{"/type/?"} }, false},
		{"composite order flipped", func(p *store.IndexingPolicy) {
			p.CompositeIndexes = [][]store.CompositePath{{{Path: "/name", Order: "descending"}, {Path: "/id", Order: "descending"}}}
		}, false},
		{"composite index added", func(p *store.IndexingPolicy) {
			p.CompositeIndexes = append(p.CompositeIndexes, []store.CompositePath{{Path: "/priceCents", Order: "ascending"}, {Path: "/id", Order: "ascending"}})
		}, false},
	}
	live := asReturned(indexingPolicy(base))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			p.ExcludedPaths = append([]string(nil), base.ExcludedPaths...)
			tc.change(&p)
			if got := sameIndexing(indexingPolicy(p), live); got != tc.same {
				t.Errorf("sameIndexing = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestSameTTLAndUniqueKeys(t *testing.T) {
	n := func(v int32) *int32 { return &v }
	ttlTests := []struct {
		name string
		a, b *int32
		want bool
	}{
		{"both off", nil, nil, true},
		{"on vs off", n(-1), nil, false},
		{"equal", n(3600), n(3600), true},
		{"different", n(3600), n(60), false},
	}
	for _, tc := range ttlTests {
		if got := sameTTL(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: sameTTL = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !sameUniqueKeys(nil, &azcosmos.UniqueKeyPolicy{}) {
		t.Error("no unique keys should equal an empty policy")
	}
	if sameUniqueKeys([][]string{{"/email"}}, nil) {
		t.Error("a unique key should differ from none")
	}
}

func TestCheckDefRefuses(t *testing.T) {
	ttl := func(v int) *int { return &v }
	tests := []struct {
		name string
		def  store.ContainerDef
	}{
		{"no name", store.ContainerDef{PartitionKeyPath: "/id"}},
		{"slash in name", store.ContainerDef{ID: "a/b", PartitionKeyPath: "/id"}},
		{"pk without slash", store.ContainerDef{ID: "a", PartitionKeyPath: "id"}},
		{"ttl zero", store.ContainerDef{ID: "a", PartitionKeyPath: "/id", DefaultTTL: ttl(0)}},
		{"ttl below -1", store.ContainerDef{ID: "a", PartitionKeyPath: "/id", DefaultTTL: ttl(-2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := domain.ErrorCode(checkDef(tc.def)), domain.EINVALID; got != want {
				t.Errorf("code = %q, want %q", got, want)
			}
		})
	}
}

// TestCheckContainersKeyless: keyless, a database lacking containers is
// reported at once, every missing one named, with `shop containers` as
// the way to provision them (`shop migrate` cannot: Entra ID data-plane
// roles create no containers); with a key, `shop migrate` is the way.
func TestCheckContainersKeyless(t *testing.T) {
	present := map[string]bool{"orders": true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		switch {
		case r.URL.Path == "/":
			writeAccount(w, r)
		case len(segs) == 4 && segs[2] == "colls" && present[segs[3]]:
			writeJSON(w, http.StatusOK, map[string]any{"id": segs[3], "_rid": "cRid=",
				"partitionKey": map[string]any{"paths": []string{"/userId"}, "kind": "Hash", "version": 2}})
		default:
			writeJSON(w, http.StatusNotFound, map[string]any{"code": "NotFound", "message": "Resource Not Found"})
		}
	}))
	defer srv.Close()
	s := openOnFake(t, srv.URL, "shop-x")
	defs := []store.ContainerDef{{ID: "orders"}, {ID: "carts"}, {ID: "products"}}
	for _, keyless := range []bool{false, true} {
		s.cfg.UseEntraID = keyless // what the message depends on; the wire signs with the key
		if s.Keyless() != keyless {
			t.Fatalf("Keyless() = %v, want %v", s.Keyless(), keyless)
		}
		err := s.CheckContainers(t.Context(), defs)
		if !domain.IsCode(err, domain.ENOTFOUND) {
			t.Fatalf("keyless %v: %v, want ENOTFOUND", keyless, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "carts, products") || strings.Contains(msg, "orders") {
			t.Errorf("keyless %v: %q, want carts and products named, orders not", keyless, msg)
		}
		if want := "`shop containers -database shop-x`"; keyless != strings.Contains(msg, want) {
			t.Errorf("keyless %v: %q: mentions %s: %v", keyless, msg, want, !keyless)
		}
		if !keyless && !strings.Contains(msg, "`shop migrate`") {
			t.Errorf("with a key: %q, want `shop migrate`", msg)
		}
	}
}

// TestEnsureContainerKeylessCreatesNothing: keyless, EnsureContainer only
// reads and compares. A container of the same definition is up to date
// (changed=false); a missing one is ENOTFOUND and one that differs is
// ECONFLICT, each naming `shop containers`, and no request to create or
// change a database or container is sent, since Entra ID's data-plane
// roles may send none (the contract suite's Provisioned run relies on
// it). With a key the same calls create and replace.
func TestEnsureContainerKeylessCreatesNothing(t *testing.T) {
	def := store.ContainerDef{ID: "orders", PartitionKeyPath: "/userId", DefaultTTL: ttlOf(-1),
		IndexingPolicy: store.IndexingPolicy{IncludedPaths: []string{"/*"}}}
	live, err := containerProperties(def).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var writes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if r.Method != http.MethodGet {
			mu.Lock()
			writes = append(writes, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		switch {
		case r.URL.Path == "/":
			writeAccount(w, r)
		case r.Method == http.MethodGet && len(segs) == 4 && segs[2] == "colls" && segs[3] == def.ID:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(live)
		case r.Method == http.MethodGet:
			writeJSON(w, http.StatusNotFound, map[string]any{"code": "NotFound", "message": "Resource Not Found"})
		default:
			writeJSON(w, http.StatusForbidden, map[string]any{"code": "Forbidden", "message": "blocked by the data-plane role"})
		}
	}))
	defer srv.Close()
	s := openOnFake(t, srv.URL, "shop-x")
	// What the behaviour depends on; the wire signs with the key, and
	// Emulator (plain http) would skip the indexing comparison.
	s.cfg.UseEntraID, s.cfg.Emulator = true, false
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := writes
		writes = nil
		return out
	}

	changed, err := s.EnsureContainer(t.Context(), def)
	if err != nil || changed {
		t.Errorf("the same definition: changed %v, %v; want false, nil", changed, err)
	}
	missing := def
	missing.ID = "carts"
	_, err = s.EnsureContainer(t.Context(), missing)
	if !domain.IsCode(err, domain.ENOTFOUND) || !strings.Contains(err.Error(), "`shop containers") {
		t.Errorf("a missing container: %v, want ENOTFOUND naming `shop containers`", err)
	}
	differs := def
	differs.IndexingPolicy.ExcludedPaths = []string{"/body/?"}
	_, err = s.EnsureContainer(t.Context(), differs)
	if !domain.IsCode(err, domain.ECONFLICT) || !strings.Contains(err.Error(), "`shop containers") {
		t.Errorf("a container that differs: %v, want ECONFLICT naming `shop containers`", err)
	}
	otherKey := def
	otherKey.PartitionKeyPath = "/other"
	_, err = s.EnsureContainer(t.Context(), otherKey)
	if !domain.IsCode(err, domain.ECONFLICT) {
		t.Errorf("another partition key: %v, want ECONFLICT", err)
	}
	if w := sent(); len(w) != 0 {
		t.Errorf("keyless EnsureContainer sent %v, want reads only", w)
	}

	s.cfg.UseEntraID = false
	_, _ = s.EnsureContainer(t.Context(), missing)
	_, _ = s.EnsureContainer(t.Context(), differs)
	// (The server refuses the database's create, so the container's is
	// not tried.)
	if w, want := sent(), []string{"POST /dbs", "PUT /dbs/shop-x/colls/orders"}; !slices.Equal(w, want) {
		t.Errorf("with a key: sent %v, want %v: the database's create and the replace", w, want)
	}
}

func ttlOf(seconds int) *int { return &seconds }

// writeAccount answers a fake gateway's account read ("/"): one region,
// this server, session consistency.
func writeAccount(w http.ResponseWriter, r *http.Request) {
	region := []map[string]string{{"name": "Local", "databaseAccountEndpoint": "http://" + r.Host + "/"}}
	writeJSON(w, http.StatusOK, map[string]any{"id": "acct", "writableLocations": region, "readableLocations": region,
		"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"}})
}

// openOnFake opens the store on the fake gateway at url, signing with a
// test key (a test sets cfg.UseEntraID for what depends on keyless), and
// closes it when the test ends.
func openOnFake(t *testing.T, url, database string) *Store {
	t.Helper()
	key := base64.StdEncoding.EncodeToString([]byte("keyless-test-key"))
	s, err := Open(t.Context(), Config{Endpoint: url, Key: key, Database: database, Emulator: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
