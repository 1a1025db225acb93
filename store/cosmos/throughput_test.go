package cosmos

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reference-shop/shop/migrations"
)

// TestThroughputOfCreatedContainers: what docs/cosmos.md says
// COSMOS_AUTOSCALE_MAX_RU does. Set, the database is created with that
// autoscale maximum, shared by its containers, which ask for none of
// their own. Unset, neither asks for any: on a serverless account that is
// the only valid request; on a provisioned-throughput account Cosmos then
// gives each container its default of 400 RU/s of manual throughput.
func TestThroughputOfCreatedContainers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		throughput int
		wantDB     string // x-ms-cosmos-offer-autopilot-settings of the database create
	}{
		{"Autoscale", 4000, `{"maxThroughput":4000}`},
		{"Unset", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			sent := map[string]http.Header{} // "POST /dbs" and "POST /dbs/shop/colls" → headers
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == http.MethodGet && r.URL.Path == "/":
					writeJSON(w, http.StatusOK, map[string]any{"id": "acct",
						"writableLocations": []map[string]string{{"name": "Local", "databaseAccountEndpoint": "http://" + r.Host + "/"}},
						"readableLocations": []map[string]string{{"name": "Local", "databaseAccountEndpoint": "http://" + r.Host + "/"}}})
				case r.Method == http.MethodGet:
					writeJSON(w, http.StatusNotFound, map[string]string{"code": "NotFound"})
				case r.Method == http.MethodPost:
					mu.Lock()
					sent[r.Method+" "+r.URL.Path] = r.Header.Clone()
					mu.Unlock()
					writeJSON(w, http.StatusCreated, map[string]string{"id": "x"})
				default:
					writeJSON(w, http.StatusBadRequest, map[string]string{"code": "BadRequest"})
				}
			}))
			defer srv.Close()
			key := base64.StdEncoding.EncodeToString([]byte("throughput-test-key"))
			s, err := Open(context.Background(), Config{Endpoint: srv.URL, Key: key, Database: "shop", Emulator: true, Throughput: tc.throughput})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.EnsureContainer(context.Background(), migrations.Containers[0]); err != nil {
				t.Fatalf("EnsureContainer: %v", err)
			}
			db, ok := sent["POST /dbs"]
			if !ok {
				t.Fatalf("no database create was sent; sent %v", sent)
			}
			if got := db.Get("x-ms-cosmos-offer-autopilot-settings"); got != tc.wantDB {
				t.Errorf("database create: autoscale settings %q, want %q", got, tc.wantDB)
			}
			if got := db.Get("x-ms-offer-throughput"); got != "" {
				t.Errorf("database create: manual throughput %q, want none", got)
			}
			coll, ok := sent["POST /dbs/shop/colls"]
			if !ok {
				t.Fatalf("no container create was sent; sent %v", sent)
			}
			for name := range coll {
				if n := strings.ToLower(name); strings.Contains(n, "offer") {
					t.Errorf("container create sent %s: %q; want no throughput of its own", name, coll.Get(name))
				}
			}
		})
	}
}
