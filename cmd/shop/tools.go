package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/reference-shop/shop/api"
	"github.com/reference-shop/shop/cmd/shop/internal/progress"
	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/backfill"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// migrate creates the database's containers, or updates their indexing
// policy and TTL, then moves the status view's unbucketed summaries into
// their buckets (migrations.BucketOrderSummaries) and rewrites the search
// entries of the old shape as cards (migrations.ReshapeSearchEntries);
// applying twice changes nothing. With --backfill it then rewrites every
// document of an older schema version (migrations/backfill), within
// --ru-per-second, resuming an interrupted run.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	args, bf, err := backfillFlags(args)
	if err != nil {
		return err
	}
	cfg, err := parseConfig("migrate", args, getenv, stdout)
	if err != nil {
		return err
	}
	s, desc, err := openStore(ctx, cfg, getenv, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "migrating %s\n", desc)
	if k, ok := s.(keylessStore); ok && k.Keyless() {
		// Entra ID cannot create containers: name every missing one at
		// once, and how its owner provisions them, before Apply stops at
		// the first. Present ones are read and compared as with a key.
		if err := k.CheckContainers(ctx, migrations.Containers); err != nil {
			return err
		}
	}
	if err := migrations.Apply(ctx, s, stdout); err != nil {
		return err
	}
	if _, err := migrations.BucketOrderSummaries(ctx, s, repo.New(s, cfg.StatusBuckets), stdout); err != nil {
		return err
	}
	if _, err = migrations.ReshapeSearchEntries(ctx, s, stdout); err != nil || !bf.on {
		return err
	}
	_, err = backfill.Run(ctx, s, backfill.Options{RUPerSecond: bf.ruPerSecond, Log: stdout})
	return err
}

// backfillOptions are migrate's own flags.
type backfillOptions struct {
	on          bool
	ruPerSecond float64
}

// backfillFlags takes migrate's own flags (--backfill, --ru-per-second N)
// out of args and leaves the settings' flags to parseConfig.
func backfillFlags(args []string) ([]string, backfillOptions, error) {
	o := backfillOptions{ruPerSecond: backfill.DefaultRUPerSecond}
	var rest []string
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		switch name {
		case "backfill":
			o.on = !hasVal || val == "true"
		case "ru-per-second":
			if !hasVal {
				if i+1 == len(args) {
					return nil, o, errors.New("migrate: --ru-per-second needs a number")
				}
				i++
				val = args[i]
			}
			n, err := strconv.ParseFloat(val, 64)
			if err != nil || n < 1 || n > 1_000_000 {
				return nil, o, fmt.Errorf("migrate: --ru-per-second: want a number from 1 to 1000000, got %q", val)
			}
			o.ruPerSecond = n
		default:
			rest = append(rest, args[i])
		}
	}
	return rest, o, nil
}

// keylessStore is a Cosmos store that may sign in with Entra ID
// (cosmos.Store).
type keylessStore interface {
	Keyless() bool
	CheckContainers(ctx context.Context, defs []store.ContainerDef) error
}

// seed loads a data set of the given size, for benchmarks and the cost lab.
func seed(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stdout)
	products := fs.Int("products", 240, "products to create")
	reviews := fs.Int("reviews", 1500, "reviews to create")
	users := fs.Int("users", 0, "users with an open cart to create")
	categories := fs.Int("categories", 8, "categories to create")
	dataDir := fs.String("data-dir", "", "embedded store directory (env SHOP_DATA_DIR, default ./data)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := configWithDataDir("seed", *dataDir, getenv, stdout)
	if err != nil {
		return err
	}
	s, desc, err := openStore(ctx, cfg, getenv, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := migrations.Apply(ctx, s, io.Discard); err != nil {
		return err
	}
	empty, err := sample.IsEmpty(ctx, s)
	if err != nil {
		return err
	}
	if !empty {
		return errors.New("the store already holds a catalog; seed an empty data directory (--data-dir)")
	}
	fmt.Fprintf(stdout, "seeding %s\n", desc)
	opts := sample.Options{Products: *products, Reviews: *reviews, Users: *users, Categories: *categories}
	opts.Progress = progress.Default(stdout, "seeding")
	start := time.Now()
	stats, err := sample.Load(ctx, s, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nseeded %s in %s\n", stats, time.Since(start).Round(time.Millisecond))
	return nil
}

// token prints a bearer token for a user, signed with the configured
// secret: for curl when the dev token endpoint is off, as it is by default
// with Cosmos. The user comes from the flags, or from one argument holding
// the body POST /v1/dev/token takes ({"userId":"rita","admin":true}), so
// the workshop's helper works the same either way.
func token(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stdout)
	user := fs.String("user", "alice", "user id (the token's sub)")
	name := fs.String("name", "", "display name (default: the user id)")
	email := fs.String("email", "", "email (default: <user>@example.com)")
	admin := fs.Bool("admin", false, "grant the admin role")
	ttl := fs.Duration("ttl", 12*time.Hour, "lifetime of the token")
	dataDir := fs.String("data-dir", "", "embedded store directory holding jwt.secret")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
	case 1:
		body, err := tokenBody(fs.Arg(0))
		if err != nil {
			return err
		}
		*user, *name, *email, *admin = body.UserID, body.Name, body.Email, body.Admin
	default:
		return fmt.Errorf("token: want flags or one JSON body, got %d arguments", fs.NArg())
	}
	cfg, err := configWithDataDir("token", *dataDir, getenv, stdout)
	if err != nil {
		return err
	}
	secret, err := cfg.secret()
	if err != nil {
		return err
	}
	n, e := *name, *email
	if n == "" {
		n = *user
	}
	if e == "" {
		e = *user + "@example.com"
	}
	tok, err := api.IssueToken(secret, *user, n, e, *admin, *ttl)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// devTokenBody is the body of POST /v1/dev/token.
type devTokenBody struct {
	UserID string `json:"userId"`
	Name   string `json:"name"`
	Email  string `json:"email"`
	Admin  bool   `json:"admin"`
}

// tokenBody decodes one dev-endpoint body, strictly: unknown fields and
// trailing data are refused, and the user id must be a valid id.
func tokenBody(arg string) (devTokenBody, error) {
	var b devTokenBody
	d := json.NewDecoder(strings.NewReader(arg))
	d.DisallowUnknownFields()
	if err := d.Decode(&b); err != nil {
		return b, fmt.Errorf("token: the argument is not a body like {\"userId\":\"alice\",\"admin\":false}: %v", err)
	}
	if d.More() {
		return b, errors.New("token: data after the JSON body")
	}
	if err := domain.ValidateID("userId", b.UserID); err != nil {
		return b, fmt.Errorf("token: %s", domain.ErrorMessage(err))
	}
	return b, nil
}

// workers runs the change-feed workers alone, for Cosmos deployments that
// scale them apart from the API. The embedded store is a single process
// (bbolt locks its file), so there the workers run inside `shop serve`.
func workers(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig("workers", args, getenv, stdout)
	if err != nil {
		return err
	}
	if !cfg.Cosmos {
		return errors.New("the embedded store is one process: its feed workers run inside `shop serve`; `shop workers` is for Cosmos (set COSMOS_ENDPOINT)")
	}
	tel, logger, err := setupTelemetry(ctx, cfg, getenv, stdout)
	if err != nil {
		return err
	}
	defer shutdownTelemetry(tel, logger)
	s, desc, err := openStore(ctx, cfg, getenv, tel.TracerProvider())
	if err != nil {
		return err
	}
	defer s.Close()
	traced := store.Traced(s, tel.TracerProvider(), tel.MeterProvider(), adapterName(cfg))
	// The orders feed's effects move money: the workers need the shop's
	// payment provider as `shop serve` does.
	pay, _, closePay, err := openPayments(cfg)
	if err != nil {
		return err
	}
	defer closePay()
	w := writes.New(repo.New(store.Metered(traced), cfg.StatusBuckets), pay, nil)
	wk, err := feedworkers.Start(ctx, traced, w, feedConfig(logger, tel))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "feed workers running on %s\n", desc)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	return errors.Join(wk.Stop(sctx), w.Wait(sctx))
}

// configWithDataDir is the configuration of a tool whose only setting
// is the data directory (a flag of its own, then SHOP_DATA_DIR).
func configWithDataDir(name, dataDir string, getenv func(string) string, stdout io.Writer) (config, error) {
	var args []string
	if dataDir != "" {
		args = []string{"--data-dir", dataDir}
	}
	return parseConfig(name, args, getenv, stdout)
}
