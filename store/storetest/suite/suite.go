// Package suite lists the containers the contract suite (store/storetest)
// ensures, as data that needs no testing package, so that they are known
// without running it: `shop containers -contract` prints them for an
// account's owner to deploy, and the suite then runs against them on a
// target that may create no container (storetest.Options.Provisioned:
// Cosmos with Entra ID, whose data-plane roles create none).
//
// A container's name comes from the test that ensures it and its ordinal
// within that test (Name), the same on every run, so the list names what
// a run will ask for. The suite checks each container it ensures against
// the list, and store/embedded's TestContract checks that its run ensures
// exactly the list: a test that adds a container without listing it
// fails everywhere.
package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/reference-shop/shop/store"
)

// Database is the database `shop containers -contract` deploys the
// suite's containers into unless told another.
const Database = "shoptest"

// PartitionKeyPath is the partition key path of every container of the
// suite.
const PartitionKeyPath = "/pk"

// Name is the id of the n-th container (n from 1) that the suite's test
// at path ensures, path being the test's name below the contract's Run as
// testing.T.Name spells it ("Query", "TTL/PerItem"): "st-", 12 hex digits
// of the path's SHA-256, "-", n. It is within Cosmos's id rules (at most
// 255 characters, none of / \ ? #) whatever the test is called.
func Name(path string, n int) string {
	sum := sha256.Sum256([]byte(path))
	return "st-" + hex.EncodeToString(sum[:6]) + "-" + strconv.Itoa(n)
}

// Container is one container of the suite: the test that ensures it, its
// ordinal within that test, and its definition (ID = Name(Test, N)).
type Container struct {
	Test string
	N    int
	Def  store.ContainerDef
}

// Plain is the suite's usual container: the /pk key, every path
// indexed, and the default TTL given (nil: off; -1: on, items expire by
// their own ttl only; n > 0: n seconds).
func Plain(defaultTTL *int) store.ContainerDef {
	return store.ContainerDef{
		PartitionKeyPath: PartitionKeyPath,
		DefaultTTL:       defaultTTL,
		IndexingPolicy:   store.IndexingPolicy{IncludedPaths: []string{"/*"}},
	}
}

// Order is one ORDER BY a test runs: a top-level property and a
// direction.
type Order struct {
	Path string
	Desc bool
}

// Ordered is Plain, TTL off, with the composite index every given order
// needs. Adapters break ties by id, so ORDER BY x renders as ORDER BY
// c.x, c.id in one direction: a real account refuses it without a
// composite index (x, id) in that direction (index-composite).
func Ordered(orders ...Order) store.ContainerDef {
	def := Plain(nil)
	for _, o := range orders {
		dir := "ascending"
		if o.Desc {
			dir = "descending"
		}
		def.IndexingPolicy.CompositeIndexes = append(def.IndexingPolicy.CompositeIndexes,
			[]store.CompositePath{{Path: "/" + o.Path, Order: dir}, {Path: "/id", Order: dir}})
	}
	return def
}

// EnsureContainerDef is the container of the test of EnsureContainer
// itself: an excluded path besides, so that a comparison of indexing
// policies has more than the default to compare.
func EnsureContainerDef() store.ContainerDef {
	def := Plain(nil)
	def.IndexingPolicy.ExcludedPaths = []string{"/body/?"}
	return def
}

// UniqueKeysDef is the container of the unique keys test: /email unique
// within a logical partition.
func UniqueKeysDef() store.ContainerDef {
	def := Plain(nil)
	def.UniqueKeys = [][]string{{"/email"}}
	return def
}

func ttl(seconds int) *int { return &seconds }

// tests are the suite's tests that ensure containers, by path, each with
// the definitions of its containers in the order it ensures them. A test
// ensuring none is not here.
var tests = []struct {
	path string
	defs []store.ContainerDef
}{
	{"EnsureContainerIdempotent", []store.ContainerDef{EnsureContainerDef()}},
	{"PartitionKeyRequired", []store.ContainerDef{Plain(nil)}},
	{"IDUniquePerPartition", []store.ContainerDef{Plain(nil)}},
	{"ETagChangesOnEveryWrite", []store.ContainerDef{Plain(nil)}},
	{"TSIsSet", []store.ContainerDef{Plain(nil)}},
	{"ReadIfNoneMatch", []store.ContainerDef{Plain(nil)}},
	{"StaleIfMatchIsPrecondition", []store.ContainerDef{Plain(nil)}},
	{"UpsertIfMatchOfMissingCreates", []store.ContainerDef{Plain(nil)}},
	{"MissingIsNotFound", []store.ContainerDef{Plain(nil)}},
	{"ItemOver2MBRefused", []store.ContainerDef{Plain(nil)}},
	{"BadInput", []store.ContainerDef{Plain(nil)}},
	{"OptimisticConcurrency", []store.ContainerDef{Plain(nil)}},
	{"UniqueKeysPerPartition", []store.ContainerDef{UniqueKeysDef()}},
	{"BatchAtomic", []store.ContainerDef{Plain(nil)}},
	{"BatchRefusedAcrossKeys", []store.ContainerDef{Plain(nil)}},
	{"BatchOver100Refused", []store.ContainerDef{Plain(nil)}},
	{"BatchOver2MBRefused", []store.ContainerDef{Plain(nil)}},
	{"PatchOver10OpsRefused", []store.ContainerDef{Plain(nil)}},
	{"Patch", []store.ContainerDef{Plain(nil)}},
	{"ConditionalPatch", []store.ContainerDef{Plain(nil)}},
	{"ConditionalPatchInBatch", []store.ContainerDef{Plain(nil)}},
	{"ConditionalPatchConcurrent", []store.ContainerDef{Plain(nil)}},
	{"Query", []store.ContainerDef{Ordered(Order{"n", false}, Order{"n", true}, Order{"createdAt", true}, Order{"kind", false})}},
	{"OrderByKeepsItemsWithoutTheProperty", []store.ContainerDef{Ordered(Order{"n", false}, Order{"n", true})}},
	{"ChangeFeed", []store.ContainerDef{Plain(nil)}},
	{"ChangeFeed/BadContinuation", []store.ContainerDef{Plain(nil)}}, // another container's continuation
	{"ChangeFeedFromNow", []store.ContainerDef{Plain(nil)}},
	{"ChangeFeedAcrossSplit", []store.ContainerDef{Plain(nil)}},
	{"TTL/PerItem", []store.ContainerDef{Plain(ttl(-1))}},
	{"TTL/ContainerDefault", []store.ContainerDef{Plain(ttl(1))}},
	{"TTL/OffIgnoresItemTTL", []store.ContainerDef{Plain(nil), Plain(ttl(-1))}},
	{"ThrottledOverBudget", []store.ContainerDef{Plain(nil)}},
}

// List returns every container the suite ensures, in the order of the
// suite's tests: a fresh copy on each call.
func List() []Container {
	var out []Container
	for _, tt := range tests {
		for i, def := range tt.defs {
			n := i + 1
			def = clone(def)
			def.ID = Name(tt.path, n)
			out = append(out, Container{Test: tt.path, N: n, Def: def})
		}
	}
	return out
}

// Containers returns the definitions of List: what an account's owner
// deploys for a run that creates no container.
func Containers() []store.ContainerDef {
	var out []store.ContainerDef
	for _, c := range List() {
		out = append(out, c.Def)
	}
	return out
}

// Lookup returns the listed container the test at path ensures n-th.
func Lookup(path string, n int) (store.ContainerDef, bool) {
	for _, c := range List() {
		if c.Test == path && c.N == n {
			return c.Def, true
		}
	}
	return store.ContainerDef{}, false
}

// clone copies def's slices, so that no caller shares the list's.
func clone(def store.ContainerDef) store.ContainerDef {
	if def.DefaultTTL != nil {
		def.DefaultTTL = ttl(*def.DefaultTTL)
	}
	ip := &def.IndexingPolicy
	ip.IncludedPaths = append([]string(nil), ip.IncludedPaths...)
	ip.ExcludedPaths = append([]string(nil), ip.ExcludedPaths...)
	var ci [][]store.CompositePath
	for _, c := range ip.CompositeIndexes {
		ci = append(ci, append([]store.CompositePath(nil), c...))
	}
	ip.CompositeIndexes = ci
	var uk [][]string
	for _, k := range def.UniqueKeys {
		uk = append(uk, append([]string(nil), k...))
	}
	def.UniqueKeys = uk
	return def
}
