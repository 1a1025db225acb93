package cosmos

import (
	"context"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// etagPath is the path Cosmos adds to every excluded list on its own.
const etagPath = `/"_etag"/?`

// EnsureContainer creates the database (with the configured throughput)
// and the container if missing, or brings an existing container's
// indexing policy and default TTL up to def. Applying the same def twice
// changes nothing and reports changed=false.
//
// Keyless (Entra ID) it only reads and compares, since the data-plane
// roles may neither create nor change a database or container: a missing
// container is ENOTFOUND and one that differs from def ECONFLICT, each
// saying that the account's owner deploys it from `shop containers`; no
// create or replace is sent (to be refused with a 403).
func (s *Store) EnsureContainer(ctx context.Context, def store.ContainerDef) (bool, error) {
	if err := checkDef(def); err != nil {
		return false, err
	}
	c, err := s.db.NewContainer(def.ID)
	if err != nil {
		return false, mapError("container "+def.ID, err)
	}
	r, err := c.Read(ctx, nil)
	if err != nil {
		if !domain.IsCode(mapError("", err), domain.ENOTFOUND) {
			return false, mapError("read container "+def.ID, err)
		}
		if s.cfg.UseEntraID {
			return false, domain.Errorf(domain.ENOTFOUND, "database %q has no container %s, and Entra ID data-plane roles cannot create one: "+
				"the account's owner deploys it from `shop containers -database %s` (Bicep or az commands; docs/cosmos.md, section 2)",
				s.cfg.Database, def.ID, s.cfg.Database)
		}
		created, err := s.create(ctx, def)
		if created || err != nil {
			return created, err
		}
		// Someone else created it meanwhile: compare with theirs.
		if r, err = c.Read(ctx, nil); err != nil {
			return false, mapError("read container "+def.ID, err)
		}
	}
	return s.update(ctx, c, def, r.ContainerProperties)
}

// create makes the database if need be, then the container. It reports
// false, nil when the container appeared concurrently (409).
func (s *Store) create(ctx context.Context, def store.ContainerDef) (bool, error) {
	var dbOpts *azcosmos.CreateDatabaseOptions
	if s.cfg.Throughput > 0 {
		// Shared autoscale throughput on the database: the containers draw
		// on one budget that scales between 10% and the maximum.
		tp := azcosmos.NewAutoscaleThroughputProperties(int32(s.cfg.Throughput))
		dbOpts = &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp}
	}
	_, err := s.shared.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: s.cfg.Database}, dbOpts)
	if err != nil && !domain.IsCode(mapError("", err), domain.ECONFLICT) {
		return false, mapError("create database "+s.cfg.Database, err)
	}
	// No throughput of its own: it shares the database's, or, with none
	// (serverless, or COSMOS_AUTOSCALE_MAX_RU unset), Cosmos decides:
	// nothing on serverless, 400 RU/s manual on a provisioned account.
	_, err = s.db.CreateContainer(ctx, containerProperties(def), nil)
	if err != nil {
		if domain.IsCode(mapError("", err), domain.ECONFLICT) {
			return false, nil
		}
		return false, mapError("create container "+def.ID, err)
	}
	return true, nil
}

// update compares the live container with def and replaces what differs
// and may change. The partition key never may (a Cosmos rule): moving to
// another key means a new container and a data migration.
func (s *Store) update(ctx context.Context, c *azcosmos.ContainerClient, def store.ContainerDef, live *azcosmos.ContainerProperties) (bool, error) {
	if live == nil {
		return false, domain.Errorf(domain.EINTERNAL, "read container %s: no properties in the response", def.ID)
	}
	if paths := live.PartitionKeyDefinition.Paths; len(paths) != 1 || paths[0] != def.PartitionKeyPath {
		return false, domain.Errorf(domain.ECONFLICT,
			"container %s is partitioned on %v, the definition says %s: a partition key cannot change; create a new container and copy the data",
			def.ID, paths, def.PartitionKeyPath)
	}
	if !sameUniqueKeys(def.UniqueKeys, live.UniqueKeyPolicy) {
		return false, domain.Errorf(domain.ECONFLICT, "container %s: unique keys cannot change after creation", def.ID)
	}
	if s.cfg.Emulator {
		// The vNext emulator implements neither custom indexing policies
		// nor container updates: comparing would "change" it on every run.
		return false, nil
	}
	want := containerProperties(def)
	if sameTTL(want.DefaultTimeToLive, live.DefaultTimeToLive) && sameIndexing(want.IndexingPolicy, live.IndexingPolicy) {
		return false, nil
	}
	if s.cfg.UseEntraID {
		return false, domain.Errorf(domain.ECONFLICT, "container %s differs from its definition (indexing policy or default TTL), "+
			"and Entra ID data-plane roles cannot change it: the account's owner deploys `shop containers -database %s` again "+
			"(docs/cosmos.md, section 2)", def.ID, s.cfg.Database)
	}
	next := *live
	next.DefaultTimeToLive = want.DefaultTimeToLive
	next.IndexingPolicy = want.IndexingPolicy
	// Reindexing after a policy change runs in the background and uses
	// spare throughput; queries see the old index until it finishes.
	if _, err := c.Replace(ctx, next, nil); err != nil {
		return false, mapError("replace container "+def.ID, err)
	}
	return true, nil
}

// containerProperties converts a definition. The partition key is
// hash-partitioned, version 2 (large values hashed in full), set
// explicitly rather than left to defaults.
func containerProperties(def store.ContainerDef) azcosmos.ContainerProperties {
	p := azcosmos.ContainerProperties{
		ID: def.ID,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
			Paths:   []string{def.PartitionKeyPath},
			Kind:    azcosmos.PartitionKeyKindHash,
			Version: 2,
		},
		IndexingPolicy: indexingPolicy(def.IndexingPolicy),
	}
	if def.DefaultTTL != nil {
		ttl := int32(*def.DefaultTTL)
		p.DefaultTimeToLive = &ttl
	}
	if len(def.UniqueKeys) > 0 {
		p.UniqueKeyPolicy = &azcosmos.UniqueKeyPolicy{}
		for _, paths := range def.UniqueKeys {
			p.UniqueKeyPolicy.UniqueKeys = append(p.UniqueKeyPolicy.UniqueKeys, azcosmos.UniqueKey{Paths: paths})
		}
	}
	return p
}

func indexingPolicy(ip store.IndexingPolicy) *azcosmos.IndexingPolicy {
	p := &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent}
	for _, path := range ip.IncludedPaths {
		p.IncludedPaths = append(p.IncludedPaths, azcosmos.IncludedPath{Path: path})
	}
	for _, path := range ip.ExcludedPaths {
		p.ExcludedPaths = append(p.ExcludedPaths, azcosmos.ExcludedPath{Path: path})
	}
	for _, composite := range ip.CompositeIndexes {
		var ci []azcosmos.CompositeIndex
		for _, cp := range composite {
			ci = append(ci, azcosmos.CompositeIndex{Path: cp.Path, Order: azcosmos.CompositeIndexOrder(cp.Order)})
		}
		p.CompositeIndexes = append(p.CompositeIndexes, ci)
	}
	return p
}

func sameTTL(a, b *int32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// sameIndexing compares what the shop sets, normalized the way the
// service returns it: paths as sets, the _etag exclusion Cosmos always
// adds, mode names in any case, composite indexes in order.
func sameIndexing(want, live *azcosmos.IndexingPolicy) bool {
	if want == nil || live == nil {
		return want == live
	}
	if !strings.EqualFold(string(want.IndexingMode), string(live.IndexingMode)) {
		return false
	}
	var wi, li, we, le []string
	for _, p := range want.IncludedPaths {
		wi = append(wi, p.Path)
	}
	for _, p := range live.IncludedPaths {
		li = append(li, p.Path)
	}
	for _, p := range want.ExcludedPaths {
		we = append(we, p.Path)
	}
	for _, p := range live.ExcludedPaths {
		le = append(le, p.Path)
	}
	if !samePaths(wi, li) || !samePaths(append(we, etagPath), append(le, etagPath)) {
		return false
	}
	return slices.EqualFunc(want.CompositeIndexes, live.CompositeIndexes, func(a, b []azcosmos.CompositeIndex) bool {
		return slices.EqualFunc(a, b, func(x, y azcosmos.CompositeIndex) bool {
			return x.Path == y.Path && strings.EqualFold(string(x.Order), string(y.Order))
		})
	})
}

// samePaths compares two path lists as sets.
func samePaths(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func sameUniqueKeys(want [][]string, live *azcosmos.UniqueKeyPolicy) bool {
	var got [][]string
	if live != nil {
		for _, k := range live.UniqueKeys {
			got = append(got, k.Paths)
		}
	}
	return slices.EqualFunc(want, got, slices.Equal[[]string])
}

// checkDef refuses definitions Cosmos would refuse, with a clearer message.
func checkDef(def store.ContainerDef) error {
	if def.ID == "" || len(def.ID) > 255 || strings.ContainsAny(def.ID, `/\?#`) {
		return domain.Errorf(domain.EINVALID, "container name %q: 1..255 characters, none of / \\ ? #", def.ID)
	}
	if len(def.PartitionKeyPath) < 2 || def.PartitionKeyPath[0] != '/' {
		return domain.Errorf(domain.EINVALID, "container %s: partition key path %q must look like /property", def.ID, def.PartitionKeyPath)
	}
	if t := def.DefaultTTL; t != nil && (*t == 0 || *t < -1) {
		return domain.Errorf(domain.EINVALID, "container %s: default TTL must be -1 or positive seconds, got %d", def.ID, *t)
	}
	return nil
}
