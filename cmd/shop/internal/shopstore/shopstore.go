// Package shopstore opens and prepares the store a command of cmd/shop
// works on: the shop's own (Cosmos when the environment names an account,
// the embedded store in the data directory otherwise), or the scratch
// store of a measurement, which never touches the shop's data.
package shopstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/migrations"
	"github.com/reference-shop/shop/migrations/sample"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/cosmos"
	"github.com/reference-shop/shop/store/embedded"
)

// Location is where the shop's own store is.
type Location struct {
	Cosmos     bool   // open Cosmos from the COSMOS_* environment
	DataDir    string // else the embedded store's directory (shop.db)
	Partitions int    // simulated physical partitions of the embedded store
}

// Open opens the shop's store at loc and describes it. tp, when set,
// receives the Cosmos SDK's own spans.
func Open(ctx context.Context, loc Location, getenv func(string) string, tp trace.TracerProvider) (store.Store, string, error) {
	if loc.Cosmos {
		cs, cc, err := openCosmos(ctx, getenv, "", tp)
		if err != nil {
			return nil, "", err
		}
		return cs, "cosmos " + cc.Endpoint, nil
	}
	if err := os.MkdirAll(loc.DataDir, 0o755); err != nil {
		return nil, "", err
	}
	path := filepath.Join(loc.DataDir, "shop.db")
	s, err := embedded.Open(path, embedded.Options{PhysicalPartitions: loc.Partitions})
	if errors.Is(err, embedded.ErrLocked) {
		return nil, "", fmt.Errorf("%w: is another shop running on %s? Stop it, or give this one another data directory with SHOP_DATA_DIR (--data-dir)", err, loc.DataDir)
	}
	if err != nil {
		return nil, "", err
	}
	return s, fmt.Sprintf("embedded %s (%d simulated physical partitions)", path, loc.Partitions), nil
}

// openCosmos opens the account getenv names, in its database with suffix
// appended to the name.
func openCosmos(ctx context.Context, getenv func(string) string, suffix string, tp trace.TracerProvider) (*cosmos.Store, cosmos.Config, error) {
	cc, err := cosmos.ConfigFromEnv(getenv)
	if err != nil {
		return nil, cc, err
	}
	cc.Database += suffix
	cc.TracerProvider = tp
	cs, err := cosmos.Open(ctx, cc)
	return cs, cc, err
}

// Preparation is what Prepare does to the shop's store at start.
type Preparation struct {
	// Migrate applies the migrations; without it the containers of a
	// Cosmos store must already exist.
	Migrate bool
	// Seed loads the sample catalog into an empty store.
	Seed bool
	// Throughput provisions the embedded store's containers with this
	// many Request Units per second each (0: unlimited), once migrations
	// and the sample load are done: they are not the shop's traffic.
	Throughput int
	// Containers provisions the named containers of the embedded store
	// apart, each with its own Request Units per second in place of
	// Throughput (embedded.Store.SetContainerThroughput), as Cosmos
	// provisions each container; a container at 0 follows Throughput.
	Containers map[string]int
}

// Prepare applies the migrations and loads the sample catalog into an
// empty store, as p says; with Cosmos and migrations off it checks that
// the containers exist. Then it provisions the embedded store's
// throughput. It reports whether it loaded the sample just now.
func Prepare(ctx context.Context, s store.Store, p Preparation, stdout io.Writer) (seeded bool, err error) {
	if seeded, err = prepare(ctx, s, p, stdout); err != nil {
		return false, err
	}
	if es, ok := s.(*embedded.Store); ok {
		es.SetThroughput(float64(p.Throughput))
		for name, ru := range p.Containers {
			if ru > 0 {
				es.SetContainerThroughput(name, float64(ru))
			}
		}
	}
	return seeded, nil
}

func prepare(ctx context.Context, s store.Store, p Preparation, stdout io.Writer) (bool, error) {
	if p.Migrate {
		if err := migrations.Apply(ctx, s, io.Discard); err != nil {
			return false, fmt.Errorf("migrate: %w", err)
		}
	} else if cs, ok := s.(*cosmos.Store); ok {
		if err := cs.CheckContainers(ctx, migrations.Containers); err != nil {
			return false, err
		}
	}
	if !p.Seed {
		return false, nil
	}
	empty, err := sample.IsEmpty(ctx, s)
	if err != nil || !empty {
		return false, err
	}
	stats, err := sample.Load(ctx, s, sample.Options{})
	if err != nil {
		return false, fmt.Errorf("sample data: %w", err)
	}
	fmt.Fprintf(stdout, "sample data: %s\n", stats)
	return true, nil
}

// OpenScratch opens the scratch store of a measurement run: a database of
// its own on Cosmos when getenv names an account (the shop's database with
// "-"+name appended, never the shop's data), else a temporary embedded
// store. closeStore deletes the one or removes the other. The embedded
// store skips fsync: nothing in it needs to survive the run. estimate is
// true on the embedded store, whose Request Units are estimates.
func OpenScratch(ctx context.Context, getenv func(string) string, name string, partitions int) (s store.Store, desc string, estimate bool, closeStore func(), err error) {
	if getenv("COSMOS_ENDPOINT") != "" || getenv("COSMOS_CONNECTION_STRING") != "" {
		cs, cc, err := openCosmos(ctx, getenv, "-"+name, nil)
		if err != nil {
			return nil, "", false, nil, err
		}
		return cs, "Azure Cosmos DB " + cc.Endpoint + ", database " + cc.Database, false, func() {
			_ = cs.DeleteDatabase(context.WithoutCancel(ctx))
			_ = cs.Close()
		}, nil
	}
	if partitions < 1 {
		return nil, "", false, nil, fmt.Errorf("partitions: want at least 1, got %d", partitions)
	}
	dir, err := os.MkdirTemp("", "shop-lab-")
	if err != nil {
		return nil, "", false, nil, err
	}
	es, err := embedded.Open(filepath.Join(dir, "lab.db"), embedded.Options{PhysicalPartitions: partitions, NoSync: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", false, nil, err
	}
	desc = fmt.Sprintf("embedded store, %d simulated physical partitions (temporary)", partitions)
	return es, desc, true, func() {
		_ = es.Close()
		_ = os.RemoveAll(dir)
	}, nil
}
