package cosmos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/azure/cosmosdb"

	"shop/store"
	"shop/store/storetest"
)

// emulatorImage is the Cosmos Linux emulator (vNext) the contract runs on
// when no account is configured and Docker is available.
const emulatorImage = "mcr.microsoft.com/cosmosdb/linux/azure-cosmos-emulator:vnext-preview"

const howToRun = "no Cosmos: set COSMOS_ENDPOINT and COSMOS_KEY (or COSMOS_USE_ENTRA_ID=1), or start Docker; see docs/cosmos.md"

// TestContract runs the store contract against a real Cosmos: the account
// or emulator the COSMOS_* variables name, else the vNext emulator in a
// container started here. Nothing fakes Cosmos: with neither, it skips.
func TestContract(t *testing.T) {
	cfg := contractConfig(t)
	if os.Getenv("SHOP_WIRE_RECORD") != "" {
		// The wire check's child process: every request goes to standard
		// output too, for TestWire to check the declared gaps against.
		wrapTransport = func(next http.RoundTripper) http.RoundTripper { return recorder{next: next, w: os.Stdout} }
		t.Cleanup(func() { wrapTransport = nil })
	}
	database, _, err := contractDatabase(cfg, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = database
	ctx := context.Background()
	admin, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := admin.Ping(ctx); err != nil {
		t.Fatalf("Ping %s: %v", cfg.Endpoint, err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := admin.DeleteDatabase(cctx); err != nil {
			t.Errorf("delete test database %s: %v", cfg.Database, err)
		}
		admin.Close()
	})
	// A real account is held to everything; the emulator to everything
	// but what its feature-support table says it lacks.
	opts := storetest.Options{Elsewhere: elsewhere}
	if cfg.Emulator {
		opts.Lacks = emulatorGaps
	}
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(ctx, cfg)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, opts)
}

// elsewhere names what shows throttling and splits on Cosmos, whose
// throughput cannot drop below 400 RU/s per container and whose splits
// cannot be asked for: the tests that run on every `go test` without an
// account, and the manual run on an account (docs/cosmos.md, section 5).
var elsewhere = map[string]string{
	storetest.ThrottledOverBudget: "on every run TestMapErrorStatusTable (a 429 is unavailable with its x-ms-retry-after-ms) " +
		"and TestShouldRetry (429s retried within MaxRetries429 and MaxRetryWait) cover it without an account; " +
		"on an account, the manual 400 RU/s run of docs/cosmos.md section 5 drives a real 429",
	storetest.ChangeFeedAcrossSplit: "on every run the fake gateway's TestWireSplit (410/1002, the SDK's routing refresh, " +
		"the parent's continuation over each child) and TestRangeGone cover it without an account; " +
		"on an account, the manual split of docs/cosmos.md section 5 (throughput raised past 10,000 RU/s) forces one",
}

// emulatorGaps are the capabilities of the contract the vNext emulator's
// published feature-support table lists as not yet implemented, and only
// those: what a bug report or a belief says is not a gap to declare here
// (docs/cosmos.md, section 6). The suite skips the tests that need them
// instead of failing; the emulator is held to all the rest.
var emulatorGaps = map[storetest.Capability]string{
	storetest.Charges: "the vNext emulator's feature table lists request units as not yet implemented: " +
		"it computes no charge",
	storetest.CompositeIndexes: "the vNext emulator's feature table lists custom indexing policies as not yet implemented: " +
		"no declared composite index serves an ORDER BY, so what such an index leaves out is not given",
}

// contractDatabase is the database a run works in. With a key (or on
// the emulator): a database of its own, "shoptest-<random>", since
// storetest names each test's containers the same on every run and runs
// on a shared account would collide without it.
func contractDatabase(cfg Config, getenv func(string) string) (database string, provisioned bool, err error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", false, err
	}
	return "shoptest-" + hex.EncodeToString(b), false, nil
}

// contractConfig finds a Cosmos to test against, or skips.
func contractConfig(t *testing.T) Config {
	t.Helper()
	if os.Getenv("COSMOS_ENDPOINT") != "" || os.Getenv("COSMOS_CONNECTION_STRING") != "" {
		cfg, err := ConfigFromEnv(os.Getenv)
		if err != nil {
			t.Fatalf("COSMOS_* settings: %v", err)
		}
		return cfg
	}
	if testing.Short() || !dockerAvailable() {
		t.Skip(howToRun)
	}
	ctx := context.Background()
	ctr, err := cosmosdb.Run(ctx, emulatorImage)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start the Cosmos emulator: %v", err)
	}
	cs, err := ctr.ConnectionString(ctx)
	if err != nil {
		t.Fatalf("emulator connection string: %v", err)
	}
	// The emulator's gateway names itself localhost:8081; Emulator pins
	// requests to the mapped port instead.
	return Config{ConnectionString: cs, Emulator: true}
}

// dockerAvailable reports whether a Docker engine answers. The provider
// panics instead of erring in some set-ups without Docker.
func dockerAvailable() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	p, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return false
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.Health(ctx) == nil
}
