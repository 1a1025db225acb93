package cosmos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/azure/cosmosdb"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/storetest"
	"github.com/reference-shop/shop/store/storetest/suite"
)

// emulatorImage is the Cosmos Linux emulator (vNext) the contract runs on
// when no account is configured and Docker is available.
const emulatorImage = "mcr.microsoft.com/cosmosdb/linux/azure-cosmos-emulator:vnext-preview"

const howToRun = "no Cosmos: set COSMOS_ENDPOINT and COSMOS_KEY (or COSMOS_USE_ENTRA_ID=1), or start Docker; see docs/cosmos.md"

// TestContract runs the store contract against a real Cosmos: the account
// or emulator the COSMOS_* variables name, else the vNext emulator in a
// container started here. Nothing fakes Cosmos: with neither, it skips.
// Keyless (COSMOS_USE_ENTRA_ID=1) it creates and deletes nothing: it runs
// in COSMOS_DATABASE on the containers the account's owner deployed from
// `shop containers -contract` (storetest.Options.Provisioned).
func TestContract(t *testing.T) {
	cfg := contractConfig(t)
	if os.Getenv("SHOP_WIRE_RECORD") != "" {
		// The wire check's child process: every request goes to standard
		// output too, for TestWire to check the declared gaps against.
		wrapTransport = func(next http.RoundTripper) http.RoundTripper { return recorder{next: next, w: os.Stdout} }
		t.Cleanup(func() { wrapTransport = nil })
	}
	database, provisioned, err := contractDatabase(cfg, os.Getenv)
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
	if provisioned {
		t.Cleanup(func() { admin.Close() })
		if err := checkProvisioned(ctx, admin, database); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := admin.DeleteDatabase(cctx); err != nil {
				t.Errorf("delete test database %s: %v", cfg.Database, err)
			}
			admin.Close()
		})
	}
	// A real account is held to everything; the emulator to everything
	// but what its feature-support table says it lacks.
	opts := storetest.Options{Elsewhere: elsewhere, Provisioned: provisioned}
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

// checkProvisioned reports an error unless every container of the
// contract exists in database as suite.Containers defines it. Keyless,
// EnsureContainer only reads and compares; every container missing or
// different is named at once, with the command that deploys them, before
// a test fails on the first.
func checkProvisioned(ctx context.Context, s *Store, database string) error {
	defs := suite.Containers()
	var missing, differ []string
	for _, def := range defs {
		_, err := s.EnsureContainer(ctx, def)
		switch {
		case err == nil:
		case domain.IsCode(err, domain.ENOTFOUND):
			missing = append(missing, def.ID)
		case domain.IsCode(err, domain.ECONFLICT):
			differ = append(differ, def.ID)
		default:
			return fmt.Errorf("read the contract's container %s in %s: %w", def.ID, database, err)
		}
	}
	var wrong []string
	if len(missing) > 0 {
		wrong = append(wrong, fmt.Sprintf("lacks %d (%s)", len(missing), strings.Join(missing, ", ")))
	}
	if len(differ) > 0 {
		wrong = append(wrong, fmt.Sprintf("holds %d that differ from their definitions (%s)", len(differ), strings.Join(differ, ", ")))
	}
	if len(wrong) > 0 {
		return fmt.Errorf("of the contract's %d containers, database %q %s: keyless, the run creates and changes none; "+
			"the account's owner deploys them with `go run ./cmd/shop containers -contract -database %s` (docs/cosmos.md, section 5)",
			len(defs), database, strings.Join(wrong, " and "), database)
	}
	return nil
}

// contractDatabase is the database a run works in, and whether its
// containers are provisioned. With a key (or on the emulator): a database
// of its own, "shoptest-<random>", made by the run and deleted after it,
// since storetest names each test's containers the same on every run and
// runs on a shared account would collide without it. Keyless: Entra ID's
// data-plane roles create no database or container, so the run works in
// COSMOS_DATABASE, on the containers its owner deployed (the default
// "shop" is the shop's: the run must be told).
func contractDatabase(cfg Config, getenv func(string) string) (database string, provisioned bool, err error) {
	if cfg.UseEntraID {
		database = strings.TrimSpace(getenv("COSMOS_DATABASE"))
		if database == "" {
			return "", false, fmt.Errorf("COSMOS_USE_ENTRA_ID=1: set COSMOS_DATABASE to the database holding the contract's containers; "+
				"keyless, the run creates none: the account's owner deploys them with `go run ./cmd/shop containers -contract -database %s` "+
				"(docs/cosmos.md, section 5)", suite.Database)
		}
		return database, true, nil
	}
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
