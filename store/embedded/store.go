// Package embedded implements the store port on a bbolt file, copying the
// Azure Cosmos DB semantics the shop relies on (partition keys, _etag and
// _ts, If-Match, the 2 MB item limit, transactional batches, TTL, the
// latest-version change feed per feed range, simulated physical partitions
// and an estimate of Request Units), so that code passing here behaves the
// same on Cosmos. It is the default store: no account, no emulator.
package embedded

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/store"
)

// Options configure the embedded store. The zero value is the default.
type Options struct {
	// PhysicalPartitions is how many physical partitions a NEW container
	// is split into (default 4). An existing container keeps the count it
	// was created with: it is part of its layout on disk.
	PhysicalPartitions int
	// TTLPurgeInterval is how often expired items are deleted in the
	// background (default 1 minute). They are invisible as soon as they
	// expire whatever this says.
	TTLPurgeInterval time.Duration
	// Now is the clock for _ts and TTL (default time.Now); tests inject one.
	Now func() time.Time
	// NoSync skips fsync on commit: faster, and a crash may lose committed
	// writes. Off by default: durability is the point of a file.
	NoSync bool
	// Throughput is the provisioned Request Units per second of every
	// container, split evenly over its physical partitions; a call over
	// its partition's budget is refused as Cosmos throttles it
	// (throughput.go). 0, the default, is unlimited.
	Throughput float64
	// MaxLogicalPartitionBytes is the most data one logical partition may
	// hold (default DefaultMaxLogicalPartitionBytes, Cosmos's 20 GB); a
	// write past it is refused (partitionsize.go).
	MaxLogicalPartitionBytes int64

	// scanQueries makes every query scan and sort, ignoring the order
	// indexes: tests compare both plans.
	scanQueries bool
	// noQueryMemo makes every query walk or scan (querymemo.go): tests
	// compare both.
	noQueryMemo bool
}

// Store is a bbolt file holding containers.
type Store struct {
	db     *bolt.DB
	group  groupCommit
	opts   Options
	secret []byte // signs continuation tokens (see continuation.go)

	mu         sync.RWMutex
	containers map[string]*containerState

	etagPrefix uint32
	etagSeq    atomic.Uint64

	// throughput is the provisioned RU/s of each container, as float64 bits;
	// ownThroughput holds the containers provisioned apart (name → RU/s).
	throughput    atomic.Uint64
	ownThroughput sync.Map

	stop chan struct{}
	done chan struct{}
}

// containerRecord is what the file remembers of a container.
type containerRecord struct {
	Def        store.ContainerDef `json:"def"`
	Partitions int                `json:"partitions"`
	// Layout is the physical partitions, sorted, once one has split; a
	// container that never split has Partitions equal ones
	// (equalPartitions), as files written before splits existed do.
	Layout []partition `json:"layout,omitempty"`
	// Split is every partition that split, so that a read of its feed
	// range is told it is gone, and its continuations are honored on the
	// partitions that replaced it.
	Split []partition `json:"split,omitempty"`
}

// containerState is a container's definition and its bucket names, cached
// in memory so a point read does no lookups beyond bbolt's.
type containerState struct {
	name string
	def  store.ContainerDef
	// parts are the physical partitions, sorted by hash; ranges, items
	// and feed are parallel to them (feed ranges and bucket names).
	parts  []partition
	split  []partition
	ranges []store.FeedRange
	items  [][]byte
	feed   [][]byte
	// guard and gen keep a split from moving the buckets under an
	// operation (split.go).
	guard *splitGuard
	gen   uint64
	// pkPath is def.PartitionKeyPath split into property names.
	pkPath []string
	// index decides which properties a write indexes (and pays for).
	index indexPolicy
	// uniq is def.UniqueKeys, each path split into property names.
	uniq [][][]string
	// orders are the ORDER BY indexes (orderindex.go), shared with the
	// container's earlier definitions.
	orders *orderSet
	// meters are what each physical partition has spent (throughput.go),
	// parallel to parts; a new definition keeps them, a split keeps those
	// of the partitions that did not split.
	meters []*meter
	// memo keeps the pages of the container's queries (querymemo.go).
	memo *queryMemo
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Container = (*Container)(nil)
)

// ErrLocked is Open's error when another process has the file open:
// bbolt holds an exclusive lock on it while it is open, and Open waits 5 s
// for it (a shop that is stopping lets go within that).
var ErrLocked = errors.New("another process has the store open")

// Open opens or creates the bbolt file at path.
func Open(path string, opts Options) (*Store, error) {
	if opts.PhysicalPartitions <= 0 {
		opts.PhysicalPartitions = 4
	}
	if opts.PhysicalPartitions > 256 {
		return nil, domain.Errorf(domain.EINVALID, "at most 256 physical partitions, got %d", opts.PhysicalPartitions)
	}
	if opts.TTLPurgeInterval <= 0 {
		opts.TTLPurgeInterval = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Throughput < 0 {
		return nil, domain.Errorf(domain.EINVALID, "throughput: want RU/s of 0 (unlimited) or more, got %g", opts.Throughput)
	}
	if opts.MaxLogicalPartitionBytes <= 0 {
		opts.MaxLogicalPartitionBytes = DefaultMaxLogicalPartitionBytes
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoSync: opts.NoSync})
	if errors.Is(err, bolt.ErrTimeout) {
		err = ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{
		db:         db,
		group:      groupCommit{db: db},
		opts:       opts,
		containers: map[string]*containerState{},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	var prefix [4]byte
	if _, err := rand.Read(prefix[:]); err != nil {
		db.Close()
		return nil, err
	}
	s.etagPrefix = binary.BigEndian.Uint32(prefix[:])
	s.SetThroughput(opts.Throughput)
	if err := s.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	go s.purgeLoop()
	return s, nil
}

// load reads the token secret (creating it on first open) and the
// container definitions.
func (s *Store) load() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		if v := meta.Get(secretKey); v != nil {
			s.secret = append([]byte(nil), v...)
		} else {
			s.secret = make([]byte, 32)
			if _, err := rand.Read(s.secret); err != nil {
				return err
			}
			if err := meta.Put(secretKey, s.secret); err != nil {
				return err
			}
		}
		defs, err := tx.CreateBucketIfNotExists(containersBucket)
		if err != nil {
			return err
		}
		err = defs.ForEach(func(k, v []byte) error {
			var rec containerRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("container %s: %w", k, err)
			}
			s.containers[string(k)] = newContainerState(rec)
			return nil
		})
		if err != nil {
			return err
		}
		// A file written before order indexes existed gets them now.
		for _, st := range s.containers {
			if err := syncOrderIndexes(tx, st, nil, st.orders.load()); err != nil {
				return err
			}
		}
		return nil
	})
}

func newContainerState(rec containerRecord) *containerState {
	parts := rec.layout()
	st := &containerState{
		name:   rec.Def.ID,
		def:    rec.Def,
		parts:  parts,
		split:  rec.Split,
		ranges: rangesOf(parts),
		guard:  new(splitGuard),
		pkPath: splitPath(rec.Def.PartitionKeyPath),
		index:  newIndexPolicy(rec.Def.IndexingPolicy),
		orders: newOrderSet(newOrderIndexes(rec.Def.ID, rec.Def.IndexingPolicy, parts)),
		meters: newMeters(len(parts)),
		memo:   new(queryMemo),
	}
	for _, set := range rec.Def.UniqueKeys {
		var paths [][]string
		for _, path := range set {
			paths = append(paths, splitPath(path))
		}
		st.uniq = append(st.uniq, paths)
	}
	for _, p := range parts {
		st.items = append(st.items, itemsBucket(rec.Def.ID, p.Bucket))
		st.feed = append(st.feed, feedBucket(rec.Def.ID, p.Bucket))
	}
	return st
}

// Container returns the named container; operations on a container that
// does not exist return ENOTFOUND.
func (s *Store) Container(name string) store.Container { return &Container{s: s, name: name} }

// EnsureContainer creates the container or updates its default TTL and
// indexing policy. Its partition key path can never change (a Cosmos rule).
// Order indexes follow the composite indexes: those no longer declared are
// dropped, new ones built from the items, in the transaction that records
// the definition.
func (s *Store) EnsureContainer(ctx context.Context, def store.ContainerDef) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, canceled(err)
	}
	if err := validateDef(def); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.containers[def.ID]
	rec := containerRecord{Def: def, Partitions: s.opts.PhysicalPartitions}
	if ok {
		if old.def.PartitionKeyPath != def.PartitionKeyPath {
			return false, domain.Errorf(domain.ECONFLICT,
				"container %s has partition key %s; it cannot change to %s", def.ID, old.def.PartitionKeyPath, def.PartitionKeyPath)
		}
		if !reflect.DeepEqual(normalizeDef(old.def).UniqueKeys, normalizeDef(def).UniqueKeys) {
			return false, domain.Errorf(domain.ECONFLICT, "container %s: unique keys cannot change after creation", def.ID)
		}
		if reflect.DeepEqual(normalizeDef(old.def), normalizeDef(def)) {
			return false, nil
		}
		rec = old.record(def)
	}
	st := newContainerState(rec)
	next := st.orders.load()
	var prev []orderIndex
	if ok {
		// One set and one guard for every definition of the container:
		// see orderSet and splitGuard.
		st.orders = old.orders
		st.guard, st.gen = old.guard, old.gen
		st.meters = old.meters
		prev = old.orders.load()
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		for p := range st.items {
			if _, err := tx.CreateBucketIfNotExists(st.items[p]); err != nil {
				return err
			}
			if _, err := tx.CreateBucketIfNotExists(st.feed[p]); err != nil {
				return err
			}
		}
		if err := syncOrderIndexes(tx, st, prev, next); err != nil {
			return err
		}
		st.orders.store(next)
		return tx.Bucket(containersBucket).Put([]byte(def.ID), raw)
	})
	if err != nil {
		st.orders.store(prev)
		return false, storeError(err)
	}
	s.containers[def.ID] = st
	return true, nil
}

// normalizeDef makes nil and empty slices compare equal, so applying the
// same definition twice (or after a reopen) is no change.
func normalizeDef(d store.ContainerDef) store.ContainerDef {
	raw, _ := json.Marshal(d)
	var out store.ContainerDef
	_ = json.Unmarshal(raw, &out)
	if len(out.IndexingPolicy.IncludedPaths) == 0 {
		out.IndexingPolicy.IncludedPaths = nil
	}
	if len(out.IndexingPolicy.ExcludedPaths) == 0 {
		out.IndexingPolicy.ExcludedPaths = nil
	}
	if len(out.IndexingPolicy.CompositeIndexes) == 0 {
		out.IndexingPolicy.CompositeIndexes = nil
	}
	if len(out.UniqueKeys) == 0 {
		out.UniqueKeys = nil
	}
	return out
}

func validateDef(def store.ContainerDef) error {
	if err := validateID(def.ID); err != nil {
		return domain.Errorf(domain.EINVALID, "container name: %s", domain.ErrorMessage(err))
	}
	path := splitPath(def.PartitionKeyPath)
	if len(path) == 0 {
		return domain.Errorf(domain.EINVALID, "partition key path %q must look like /property", def.PartitionKeyPath)
	}
	for _, p := range path {
		if p == "" {
			return domain.Errorf(domain.EINVALID, "partition key path %q has an empty segment", def.PartitionKeyPath)
		}
	}
	if t := def.DefaultTTL; t != nil && *t != -1 && *t <= 0 {
		return domain.Errorf(domain.EINVALID, "default TTL must be -1 or positive seconds, got %d", *t)
	}
	return nil
}

// state returns the container's cached definition, or ENOTFOUND.
func (s *Store) state(name string) (*containerState, error) {
	s.mu.RLock()
	st := s.containers[name]
	s.mu.RUnlock()
	if st == nil {
		return nil, domain.Errorf(domain.ENOTFOUND, "container %s does not exist", name)
	}
	return st, nil
}

// Ping checks the file is open.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return canceled(err)
	}
	return storeError(s.db.View(func(*bolt.Tx) error { return nil }))
}

// Close stops the TTL purge and closes the file.
func (s *Store) Close() error {
	select {
	case <-s.stop:
		return nil
	default:
	}
	close(s.stop)
	<-s.done
	return s.db.Close()
}

// newETag returns a fresh _etag, quoted like Cosmos's
// ("\"00000a1b-0000-0000-0000-656f1a2b0000\""): unique per write, opaque.
func (s *Store) newETag() string {
	n := s.etagSeq.Add(1)
	return fmt.Sprintf("\"%08x-0000-0000-%04x-%012x\"", s.etagPrefix, uint16(n>>48), n&0xFFFFFFFFFFFF)
}

// storeError maps bbolt's errors to domain codes at the boundary.
func storeError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*domain.Error](err); ok {
		return err
	}
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return domain.Errorf(domain.EUNAVAILABLE, "the store is closed")
	}
	return domain.Errorf(domain.EINTERNAL, "store: %v", err)
}

func canceled(err error) error {
	return domain.Errorf(domain.EUNAVAILABLE, "request not sent: %v", err)
}
