package cosmos

import (
	"regexp"
	"strings"
	"testing"
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
