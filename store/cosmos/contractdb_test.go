package cosmos

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/reference-shop/shop/store/storetest/suite"
)

// TestContractDatabase: with a key or on the emulator, TestContract works
// in a database of its own, made and deleted by the run; keyless (Entra
// ID creates no database or container) it works in COSMOS_DATABASE, whose
// containers the account's owner deployed, as a Provisioned target, and
// without COSMOS_DATABASE it says how to deploy them.
func TestContractDatabase(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	keyed := Config{Endpoint: "https://a.documents.azure.com:443/", Key: "k", Database: "shop"}
	for name, cfg := range map[string]Config{"key": keyed, "emulator": {ConnectionString: "AccountEndpoint=http://localhost:8081/;AccountKey=k;", Emulator: true}} {
		db, provisioned, err := contractDatabase(cfg, env(map[string]string{"COSMOS_DATABASE": "shop"}))
		if err != nil || provisioned || !regexp.MustCompile(`^shoptest-[0-9a-f]{12}$`).MatchString(db) {
			t.Errorf("%s: %q, provisioned %v, %v; want shoptest-<random>, false, nil", name, db, provisioned, err)
		}
	}
	keyless := Config{Endpoint: "https://a.documents.azure.com:443/", UseEntraID: true, Database: "shop"}
	db, provisioned, err := contractDatabase(keyless, env(map[string]string{"COSMOS_DATABASE": "shoptest"}))
	if err != nil || !provisioned || db != "shoptest" {
		t.Errorf("keyless with COSMOS_DATABASE=shoptest: %q, provisioned %v, %v; want shoptest, true, nil", db, provisioned, err)
	}
	_, _, err = contractDatabase(keyless, env(nil))
	if err == nil || !strings.Contains(err.Error(), "COSMOS_DATABASE") || !strings.Contains(err.Error(), "shop containers -contract") {
		t.Errorf("keyless without COSMOS_DATABASE: %v, want an error naming COSMOS_DATABASE and `shop containers -contract`", err)
	}
}

// TestCheckProvisioned: keyless, a database holding every container of
// the contract as listed passes; one lacking a container, or holding one
// that differs, is refused with both named and the command that deploys
// them; and the check sends no write.
func TestCheckProvisioned(t *testing.T) {
	defs := suite.Containers()
	live := map[string][]byte{}
	for _, def := range defs {
		b, err := containerProperties(def).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		live[def.ID] = b
	}
	var mu sync.Mutex
	var writes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		mu.Lock()
		b, ok := []byte(nil), false
		if len(segs) == 4 && segs[2] == "colls" {
			b, ok = live[segs[3]]
		}
		if r.Method != http.MethodGet {
			writes = append(writes, r.Method+" "+r.URL.Path)
		}
		mu.Unlock()
		switch {
		case r.URL.Path == "/":
			writeAccount(w, r)
		case r.Method == http.MethodGet && ok:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		case r.Method == http.MethodGet:
			writeJSON(w, http.StatusNotFound, map[string]any{"code": "NotFound", "message": "Resource Not Found"})
		default:
			writeJSON(w, http.StatusForbidden, map[string]any{"code": "Forbidden", "message": "blocked by the data-plane role"})
		}
	}))
	defer srv.Close()
	s := openOnFake(t, srv.URL, "shoptest")
	s.cfg.UseEntraID, s.cfg.Emulator = true, false // as in TestEnsureContainerKeylessCreatesNothing

	if err := checkProvisioned(t.Context(), s, "shoptest"); err != nil {
		t.Errorf("every container deployed: %v", err)
	}
	gone, changed := defs[3].ID, defs[5]
	changed.IndexingPolicy.ExcludedPaths = []string{"/x/?"}
	b, err := containerProperties(changed).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	delete(live, gone)
	live[changed.ID] = b
	mu.Unlock()
	err = checkProvisioned(t.Context(), s, "shoptest")
	for _, want := range []string{"lacks 1 (" + gone + ")", "1 that differ from their definitions (" + changed.ID + ")",
		"`go run ./cmd/shop containers -contract -database shoptest`"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a container missing and one changed: %v, want %q in it", err, want)
		}
	}
	if len(writes) > 0 {
		t.Errorf("the check sent %v, want reads only", writes)
	}
}
